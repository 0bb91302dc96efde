import { defineFamily, defineService } from '../core/family.js';
import { pipelineSchedulesAbilities } from './abilities.js';
import { PipelineSchedules1768200100000 } from './migrations/1768200100000-pipeline-schedules.js';
import { PipelineSchedule, PipelineScheduleVariable } from './pipeline-schedule.entity.js';
import { pipelineSchedulesHandlers } from './pipeline-schedules.handlers.js';
import { PipelineSchedulesService } from './pipeline-schedules.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    pipelineSchedules: PipelineSchedulesService;
  }
}

export const pipelineSchedulesManifest = defineFamily({
  name: 'pipeline_schedules',
  abilities: pipelineSchedulesAbilities,
  entities: [PipelineSchedule, PipelineScheduleVariable],
  migrations: [PipelineSchedules1768200100000],
  services: [
    defineService(
      'pipelineSchedules',
      ['planLimits'],
      (core, deps) => new PipelineSchedulesService(core, deps),
    ),
  ],
  handlers: pipelineSchedulesHandlers,
});

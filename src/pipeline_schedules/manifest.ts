import { defineSubscriber } from '../core/events.js';
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
      ['planLimits', 'projects', 'pipelines'],
      (core, deps) => new PipelineSchedulesService(core, deps),
    ),
  ],
  subscribers: ({ pipelineSchedules }) => [
    // A schedule's run: its next run first, then its pipeline (see PipelineSchedulesService.run).
    defineSubscriber({
      event: 'pipeline_schedule.run',
      name: 'pipeline_schedules.run',
      handle: ({ scheduleId, at, userId }) => pipelineSchedules.run(scheduleId, at, userId),
    }),
  ],
  handlers: pipelineSchedulesHandlers,
});

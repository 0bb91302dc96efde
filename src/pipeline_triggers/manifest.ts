import { defineFamily, defineService } from '../core/family.js';
import { pipelineTriggersAbilities } from './abilities.js';
import { PipelineTriggers1768200000000 } from './migrations/1768200000000-pipeline-triggers.js';
import { pipelineTriggersHandlers } from './pipeline-triggers.handlers.js';
import { PipelineTriggersService } from './pipeline-triggers.service.js';
import { PipelineTrigger } from './trigger.entity.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    pipelineTriggers: PipelineTriggersService;
  }
}

export const pipelineTriggersManifest = defineFamily({
  name: 'pipeline_triggers',
  abilities: pipelineTriggersAbilities,
  entities: [PipelineTrigger],
  migrations: [PipelineTriggers1768200000000],
  services: [
    defineService(
      'pipelineTriggers',
      ['projects', 'pipelines', 'repositories'],
      (core, deps) => new PipelineTriggersService(core, deps),
    ),
  ],
  handlers: pipelineTriggersHandlers,
});

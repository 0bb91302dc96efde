import type { components } from '../../generated/openapi.js';
import { presentPipelineBasic, type PipelineContext } from '../pipelines/pipeline.presenter.js';
import { presentUserSummary } from '../users/user.presenter.js';
import type { PipelineScheduleVariable } from './pipeline-schedule.entity.js';
import type { ScheduleRecord } from './pipeline-schedules.service.js';

type ScheduleJson = components['schemas']['PipelineSchedule'];
type DetailsJson = components['schemas']['PipelineScheduleDetails'];
type VariableJson = components['schemas']['PipelineScheduleVariable'];

export function presentSchedule({ schedule, owner }: ScheduleRecord, externalUrl: string): ScheduleJson {
  return {
    id: schedule.id,
    description: schedule.description,
    ref: schedule.ref,
    cron: schedule.cron,
    cron_timezone: schedule.cronTimezone,
    next_run_at: schedule.nextRunAt?.toISOString() ?? null,
    active: schedule.active,
    created_at: schedule.createdAt.toISOString(),
    updated_at: schedule.updatedAt.toISOString(),
    owner: owner ? presentUserSummary(owner, externalUrl) : null,
  };
}

export function presentScheduleDetails(record: ScheduleRecord, context: PipelineContext): DetailsJson {
  return {
    ...presentSchedule(record, context.externalUrl),
    last_pipeline: record.lastPipeline ? presentPipelineBasic(record.lastPipeline, context) : null,
    ...(record.variables ? { variables: record.variables.map(presentScheduleVariable) } : {}),
  };
}

export const presentScheduleVariable = ({
  variable,
  value,
}: {
  variable: PipelineScheduleVariable;
  value: string;
}): VariableJson => ({ key: variable.key, value, variable_type: variable.variableType, raw: false });

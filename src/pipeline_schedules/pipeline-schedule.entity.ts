import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A pipeline schedule of a project (`ci_pipeline_schedules`). */
@Entity({ name: 'ci_pipeline_schedules' })
export class PipelineSchedule {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'integer', name: 'owner_id', nullable: true })
  ownerId: number | null;

  @Column({ type: 'text' })
  description: string;

  @Column({ type: 'varchar', length: 255 })
  ref: string;

  @Column({ type: 'varchar', length: 255 })
  cron: string;

  @Column({ type: 'varchar', length: 255, name: 'cron_timezone' })
  cronTimezone: string;

  @Column({ type: 'timestamptz', name: 'next_run_at', nullable: true })
  nextRunAt: Date | null;

  @Column({ type: 'boolean' })
  active: boolean;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

export type ScheduleVariableType = 'env_var' | 'file';

/** A variable the schedule's pipelines get; its value is sealed with the instance's secret key. */
@Entity({ name: 'ci_pipeline_schedule_variables' })
export class PipelineScheduleVariable {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'pipeline_schedule_id' })
  scheduleId: number;

  @Column({ type: 'varchar', length: 255 })
  key: string;

  @Column({ type: 'text', name: 'value_encrypted' })
  valueEncrypted: string;

  @Column({ type: 'varchar', length: 7, name: 'variable_type' })
  variableType: ScheduleVariableType;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

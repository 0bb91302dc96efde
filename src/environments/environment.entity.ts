import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

export const ENVIRONMENT_STATES = ['available', 'stopping', 'stopped'] as const;
export type EnvironmentState = (typeof ENVIRONMENT_STATES)[number];
export const ENVIRONMENT_TIERS = ['production', 'staging', 'testing', 'development', 'other'] as const;
export type EnvironmentTier = (typeof ENVIRONMENT_TIERS)[number];
export const DEPLOYMENT_STATUSES = [
  'created',
  'running',
  'success',
  'failed',
  'canceled',
  'skipped',
  'blocked',
] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/** A project's environment (`environments`): where its deployments go. */
@Entity({ name: 'environments' })
export class Environment {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 24 })
  slug: string;

  @Column({ type: 'varchar', length: 255, name: 'external_url', nullable: true })
  externalUrl: string | null;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'varchar', length: 16 })
  state: EnvironmentState;

  @Column({ type: 'varchar', length: 16 })
  tier: EnvironmentTier;

  @Column({ type: 'timestamptz', name: 'auto_stop_at', nullable: true })
  autoStopAt: Date | null;

  /** `always` or `with_action`. */
  @Column({ type: 'varchar', length: 16, name: 'auto_stop_setting' })
  autoStopSetting: string;

  /** When a stopped review app scheduled for deletion goes (`DELETE .../environments/review_apps`). */
  @Column({ type: 'timestamptz', name: 'auto_delete_at', nullable: true })
  autoDeleteAt: Date | null;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

/** A deployment to an environment (`deployments`), made by a job (its deployable) or through the API. */
@Entity({ name: 'deployments' })
export class Deployment {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'integer', name: 'environment_id' })
  environmentId: number;

  @Column({ type: 'integer' })
  iid: number;

  @Column({ type: 'varchar', length: 255 })
  ref: string;

  @Column({ type: 'boolean' })
  tag: boolean;

  @Column({ type: 'varchar', length: 64 })
  sha: string;

  @Column({ type: 'integer', name: 'user_id', nullable: true })
  userId: number | null;

  /** The job that deploys; null for deployments created through the API (or once the job is gone). */
  @Column({ type: 'integer', name: 'deployable_id', nullable: true })
  deployableId: number | null;

  @Column({ type: 'varchar', length: 16 })
  status: DeploymentStatus;

  @Column({ type: 'timestamptz', name: 'finished_at', nullable: true })
  finishedAt: Date | null;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

export const RUNNER_TYPES = ['instance_type', 'group_type', 'project_type'] as const;
export type RunnerType = (typeof RUNNER_TYPES)[number];
export type RunnerAccessLevel = 'not_protected' | 'ref_protected';

/** A runner (`ci_runners`): who may pick which jobs, and how it authenticates (`glrt-` token, hashed). */
@Entity({ name: 'ci_runners' })
export class Runner {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'varchar', length: 16, name: 'runner_type' })
  runnerType: RunnerType;

  /** SHA-256 of the authentication token; the token itself is shown once. */
  @Column({ type: 'varchar', length: 64, name: 'token_digest' })
  tokenDigest: string;

  @Column({ type: 'timestamptz', name: 'token_expires_at', nullable: true })
  tokenExpiresAt: Date | null;

  /** `authenticated_user` (POST /user/runners) or `registration_token` (legacy POST /runners). */
  @Column({ type: 'varchar', length: 32, name: 'registration_type' })
  registrationType: 'authenticated_user' | 'registration_token';

  @Column({ type: 'integer', name: 'creator_id', nullable: true })
  creatorId: number | null;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  /** `paused` is its negation, as in GitLab's API. */
  @Column({ type: 'boolean' })
  active: boolean;

  @Column({ type: 'boolean' })
  locked: boolean;

  @Column({ type: 'boolean', name: 'run_untagged' })
  runUntagged: boolean;

  @Column({ type: 'jsonb', name: 'tag_list' })
  tagList: string[];

  @Column({ type: 'varchar', length: 16, name: 'access_level' })
  accessLevel: RunnerAccessLevel;

  /** Seconds; a job's own timeout is capped by it. */
  @Column({ type: 'integer', name: 'maximum_timeout', nullable: true })
  maximumTimeout: number | null;

  @Column({ type: 'text', name: 'maintenance_note', nullable: true })
  maintenanceNote: string | null;

  @Column({ type: 'timestamptz', name: 'contacted_at', nullable: true })
  contactedAt: Date | null;

  /** What the runner said of itself on its last request (`info`): version, revision, platform, ... */
  @Column({ type: 'jsonb', name: 'info', default: () => `'{}'::jsonb` })
  info: Record<string, unknown>;

  @Column({ type: 'varchar', length: 64, name: 'ip_address', nullable: true })
  ipAddress: string | null;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

/** A project runner's projects: the first is its owner, the others enabled it. */
@Entity({ name: 'ci_runner_projects' })
export class RunnerProject {
  @PrimaryColumn({ type: 'integer', name: 'runner_id' })
  runnerId: number;

  @PrimaryColumn({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}

/** A group runner's group. */
@Entity({ name: 'ci_runner_namespaces' })
export class RunnerNamespace {
  @PrimaryColumn({ type: 'integer', name: 'runner_id' })
  runnerId: number;

  @PrimaryColumn({ type: 'integer', name: 'namespace_id' })
  namespaceId: number;
}

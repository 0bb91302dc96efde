import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/** A named list of external user ids, numbered per project (`iid`). */
@Entity({ name: 'feature_flag_user_lists' })
export class FeatureFlagUserList {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'integer' })
  iid: number;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  /** Comma-separated, normalised (trimmed, no empties, no repeats). */
  @Column({ type: 'text', name: 'user_xids' })
  userXids: string;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

/** A feature flag (GitLab's new-version flag); its strategies say for whom it is on, per environment. */
@Entity({ name: 'feature_flags' })
export class FeatureFlag {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'integer' })
  iid: number;

  @Column({ type: 'varchar', length: 63 })
  name: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  description: string | null;

  @Column({ type: 'boolean' })
  active: boolean;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

@Entity({ name: 'feature_flag_strategies' })
export class FeatureFlagStrategy {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'feature_flag_id' })
  featureFlagId: number;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'jsonb' })
  /** Strings once valid (validation runs before the transaction commits). */
  parameters: Record<string, string>;

  @Column({ type: 'integer', name: 'user_list_id', nullable: true })
  userListId: number | null;
}

/** An environment (or `*` pattern) a strategy applies to. */
@Entity({ name: 'feature_flag_scopes' })
export class FeatureFlagScope {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'strategy_id' })
  strategyId: number;

  @Column({ type: 'varchar', length: 255, name: 'environment_scope' })
  environmentScope: string;
}

/** The project's Unleash client: its instance id is what an SDK authenticates with. */
@Entity({ name: 'feature_flags_clients' })
export class FeatureFlagsClient {
  @PrimaryColumn({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'varchar', length: 64 })
  token: string;
}

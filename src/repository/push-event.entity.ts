import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One ref moved by an accepted push or an API write: what later work (merge requests, pipelines) reacts to. */
@Entity({ name: 'push_events' })
export class PushEvent {
  /** bigint: node-postgres gives it as a string. */
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'integer', name: 'user_id', nullable: true })
  userId: number | null;

  @Column({ type: 'varchar', length: 1024 })
  ref: string;

  @Column({ type: 'varchar', length: 64, name: 'before_sha' })
  beforeSha: string;

  @Column({ type: 'varchar', length: 64, name: 'after_sha' })
  afterSha: string;

  @Column({ type: 'varchar', length: 16 })
  via: 'git' | 'api';

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}

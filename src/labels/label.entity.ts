import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A label of one project (`projectId`) or one group (`groupId`), never both. */
@Entity({ name: 'labels' })
export class Label {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  /** GitLab's `title`, which the API calls `name`. */
  @Column({ type: 'varchar', length: 255 })
  title: string;

  /** `#RGB` or `#RRGGBB` as it was given; colour names are stored as their hex value. */
  @Column({ type: 'varchar', length: 7 })
  color: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'integer', name: 'project_id', nullable: true })
  projectId: number | null;

  @Column({ type: 'integer', name: 'group_id', nullable: true })
  groupId: number | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

/** A project's priority for a label (its own or a group's): lower comes first. */
@Entity({ name: 'label_priorities' })
export class LabelPriority {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'integer', name: 'label_id' })
  labelId: number;

  @Column({ type: 'integer' })
  priority: number;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

/** A user's subscription to a label: in one project, or at the group level (`projectId` null). */
@Entity({ name: 'label_subscriptions' })
export class LabelSubscription {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'label_id' })
  labelId: number;

  @Column({ type: 'integer', name: 'user_id' })
  userId: number;

  @Column({ type: 'integer', name: 'project_id', nullable: true })
  projectId: number | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}

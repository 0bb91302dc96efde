import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type EventAction = 'add' | 'remove';
export type EventState = 'closed' | 'reopened' | 'merged';

/** A label added to or removed from a merge request; `labelId` null once the label is deleted. */
@Entity({ name: 'resource_label_events' })
export class ResourceLabelEvent {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'merge_request_id' })
  mergeRequestId: number;

  @Column({ type: 'integer', name: 'label_id', nullable: true })
  labelId: number | null;

  /** Null once the user is deleted: the event is then the ghost user's. */
  @Column({ type: 'integer', name: 'user_id', nullable: true })
  userId: number | null;

  @Column({ type: 'varchar', length: 6 })
  action: EventAction;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}

/** A milestone set on or taken off a merge request; `milestoneId` null once the milestone is deleted. */
@Entity({ name: 'resource_milestone_events' })
export class ResourceMilestoneEvent {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'merge_request_id' })
  mergeRequestId: number;

  @Column({ type: 'integer', name: 'milestone_id', nullable: true })
  milestoneId: number | null;

  @Column({ type: 'integer', name: 'user_id', nullable: true })
  userId: number | null;

  @Column({ type: 'varchar', length: 6 })
  action: EventAction;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}

/** A merge request closed, reopened or merged. */
@Entity({ name: 'resource_state_events' })
export class ResourceStateEvent {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'merge_request_id' })
  mergeRequestId: number;

  @Column({ type: 'integer', name: 'user_id', nullable: true })
  userId: number | null;

  @Column({ type: 'varchar', length: 8 })
  state: EventState;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}

import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type EventAction = 'add' | 'remove';
export type EventState = 'closed' | 'reopened' | 'merged';

/** What every resource event records: which merge request, who, and when. Not an entity itself. */
abstract class ResourceEventColumns {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'merge_request_id' })
  mergeRequestId: number;

  /** Null once the user is deleted: the event is then the ghost user's. */
  @Column({ type: 'integer', name: 'user_id', nullable: true })
  userId: number | null;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}

/** A label added to or removed from a merge request; `labelId` null once the label is deleted. */
@Entity({ name: 'resource_label_events' })
export class ResourceLabelEvent extends ResourceEventColumns {
  @Column({ type: 'integer', name: 'label_id', nullable: true })
  labelId: number | null;

  @Column({ type: 'varchar', length: 6 })
  action: EventAction;
}

/** A milestone set on or taken off a merge request; `milestoneId` null once the milestone is deleted. */
@Entity({ name: 'resource_milestone_events' })
export class ResourceMilestoneEvent extends ResourceEventColumns {
  @Column({ type: 'integer', name: 'milestone_id', nullable: true })
  milestoneId: number | null;

  @Column({ type: 'varchar', length: 6 })
  action: EventAction;
}

/** A merge request closed, reopened or merged. */
@Entity({ name: 'resource_state_events' })
export class ResourceStateEvent extends ResourceEventColumns {
  @Column({ type: 'varchar', length: 8 })
  state: EventState;
}

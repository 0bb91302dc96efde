import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type MilestoneState = 'active' | 'closed';

/** A milestone of one project (`projectId`) or one group (`groupId`), numbered by `iid` within it. */
@Entity({ name: 'milestones' })
export class Milestone {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer' })
  iid: number;

  @Column({ type: 'integer', name: 'project_id', nullable: true })
  projectId: number | null;

  @Column({ type: 'integer', name: 'group_id', nullable: true })
  groupId: number | null;

  @Column({ type: 'varchar', length: 255 })
  title: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'varchar', length: 16, default: 'active' })
  state: MilestoneState;

  /** `YYYY-MM-DD`: a calendar date, never shifted by a time zone. */
  @Column({ type: 'date', name: 'due_date', nullable: true })
  dueDate: string | null;

  @Column({ type: 'date', name: 'start_date', nullable: true })
  startDate: string | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { DiffPosition } from '../notes/note.entity.js';

/** A pending comment on a merge request, seen only by its author until published as a note. */
@Entity({ name: 'draft_notes' })
export class DraftNote {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'merge_request_id' })
  mergeRequestId: number;

  @Column({ type: 'integer', name: 'author_id' })
  authorId: number;

  @Column({ type: 'text' })
  note: string;

  /** The thread it answers. */
  @Column({ type: 'varchar', length: 64, name: 'discussion_id', nullable: true })
  discussionId: string | null;

  @Column({ type: 'boolean', name: 'resolve_discussion', default: false })
  resolveDiscussion: boolean;

  @Column({ type: 'varchar', length: 64, name: 'commit_id', nullable: true })
  commitId: string | null;

  /** Where on the diff it sits, as checked against the merge request's versions. */
  @Column({ type: 'jsonb', nullable: true })
  position: DiffPosition | null;

  @Column({ type: 'varchar', length: 255, name: 'line_code', nullable: true })
  lineCode: string | null;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

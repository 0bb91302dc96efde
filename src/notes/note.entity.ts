import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type NoteType = 'DiscussionNote' | 'DiffNote';

/** What every position on a merge request's diff names: one version's diff refs and a file of it. */
interface DiffFileRef {
  base_sha: string;
  start_sha: string;
  head_sha: string;
  old_path: string;
  new_path: string;
}

/** One end of a multi-line comment's range, as GitLab stores it. */
export interface LineRangeEnd {
  line_code: string;
  type: 'new' | 'old' | null;
  old_line: number | null;
  new_line: number | null;
}

/** A position on a merge request's diff, as GitLab stores it: a line, a point of an image, or a whole file. */
export type DiffPosition =
  | (DiffFileRef & {
      position_type: 'text';
      old_line: number | null;
      new_line: number | null;
      /** The first and last lines of a multi-line comment (drafts take one). */
      line_range?: { start: LineRangeEnd; end: LineRangeEnd } | null;
    })
  | (DiffFileRef & { position_type: 'image'; width: number; height: number; x: number; y: number })
  | (DiffFileRef & { position_type: 'file' });

/** A comment on a merge request, by a user or by forge-api (`system`). */
@Entity({ name: 'notes' })
export class Note {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'varchar', length: 32, name: 'noteable_type' })
  noteableType: 'MergeRequest';

  @Column({ type: 'integer', name: 'noteable_id' })
  noteableId: number;

  @Column({ type: 'integer', name: 'author_id', nullable: true })
  authorId: number | null;

  @Column({ type: 'text' })
  body: string;

  @Column({ type: 'boolean', default: false })
  system: boolean;

  @Column({ type: 'varchar', length: 32, nullable: true })
  type: NoteType | null;

  @Column({ type: 'char', length: 40, name: 'discussion_id' })
  discussionId: string;

  @Column({ type: 'boolean', default: false })
  internal: boolean;

  @Column({ type: 'jsonb', nullable: true })
  position: DiffPosition | null;

  @Column({ type: 'varchar', length: 100, name: 'line_code', nullable: true })
  lineCode: string | null;

  /** The commit a diff note is about (a published draft note's `commit_id`). */
  @Column({ type: 'varchar', length: 64, name: 'commit_id', nullable: true })
  commitId: string | null;

  @Column({ type: 'timestamptz', name: 'resolved_at', nullable: true })
  resolvedAt: Date | null;

  @Column({ type: 'integer', name: 'resolved_by_id', nullable: true })
  resolvedById: number | null;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** An emoji awarded by a user on a merge request, or on one of its notes (`noteId` set). */
@Entity({ name: 'award_emoji' })
export class AwardEmoji {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  /** Null once the user is deleted: the reaction is then the ghost user's. */
  @Column({ type: 'integer', name: 'user_id', nullable: true })
  userId: number | null;

  @Column({ type: 'integer', name: 'merge_request_id' })
  mergeRequestId: number;

  @Column({ type: 'integer', name: 'note_id', nullable: true })
  noteId: number | null;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

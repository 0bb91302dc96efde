import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { bigintToNumber } from '../db/columns.js';

/** A personal snippet (`projectId` null) or a project's; its files live in its own repository. */
@Entity({ name: 'snippets' })
export class Snippet {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id', nullable: true })
  projectId: number | null;

  @Column({ type: 'integer', name: 'author_id' })
  authorId: number;

  @Column({ type: 'varchar', length: 255 })
  title: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'integer', name: 'visibility_level' })
  visibilityLevel: number;

  @Column({ type: 'varchar', length: 255, name: 'repository_storage' })
  repositoryStorage: string;

  @Column({ type: 'bigint', name: 'repository_size', transformer: bigintToNumber })
  repositorySize: number;

  /** The files at the tip of `main`, in git's order, as last read from the repository. */
  @Column({ type: 'text', array: true, name: 'file_paths' })
  filePaths: string[];

  @Column({ type: 'text', name: 'user_agent' })
  userAgent: string;

  @Column({ type: 'varchar', length: 64, name: 'ip_address', nullable: true })
  ipAddress: string | null;

  @Column({ type: 'boolean', name: 'akismet_submitted' })
  akismetSubmitted: boolean;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

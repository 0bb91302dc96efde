import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  OneToOne,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
  type Relation,
} from 'typeorm';
import { Namespace } from '../namespaces/namespace.entity.js';
import type { ProjectSettings } from './project-settings.js';
import { ProjectStatistics } from './project-statistics.entity.js';

@Entity({ name: 'projects' })
export class Project {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'namespace_id' })
  namespaceId: number;

  @ManyToOne(() => Namespace, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'namespace_id' })
  namespace?: Relation<Namespace>;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 255 })
  path: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'varchar', length: 255, name: 'default_branch', nullable: true })
  defaultBranch: string | null;

  @Column({ type: 'smallint', name: 'visibility_level', default: 0 })
  visibilityLevel: number;

  @Column({ type: 'integer', name: 'creator_id', nullable: true })
  creatorId: number | null;

  @Column({ type: 'boolean', default: false })
  archived: boolean;

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  topics: string[];

  /** Feature switches and merge/CI settings; defaults and the accepted keys live in project-settings.ts. */
  @Column({ type: 'jsonb', default: () => "'{}'" })
  settings: Partial<ProjectSettings>;

  @Column({ type: 'varchar', length: 255, name: 'repository_storage', default: 'default' })
  repositoryStorage: string;

  /** No refs at all; kept current after every push. */
  @Column({ type: 'boolean', name: 'repository_empty', default: true })
  repositoryEmpty: boolean;

  /** The README at the root of the default branch, if any; kept current after every push. */
  @Column({ type: 'varchar', length: 1024, name: 'readme_path', nullable: true })
  readmePath: string | null;

  @Column({ type: 'varchar', length: 255, name: 'import_type', nullable: true })
  importType: string | null;

  @Column({ type: 'varchar', length: 64, name: 'runners_token' })
  runnersToken: string;

  @Column({ type: 'integer', name: 'star_count', default: 0 })
  starCount: number;

  /** Kept by a trigger on `forked_from_project_id`: the project's direct forks. */
  @Column({ type: 'integer', name: 'forks_count', default: 0 })
  forksCount: number;

  /** The fork relation GitLab shows; removable without touching the repository. */
  @Column({ type: 'integer', name: 'forked_from_project_id', nullable: true })
  forkedFromProjectId: number | null;

  /**
   * The project whose repository this one's borrows objects from (git alternates): the root of its
   * fork network. Cleared once the repository holds its own copy.
   */
  @Column({ type: 'integer', name: 'borrows_objects_from_id', nullable: true })
  borrowsObjectsFromId: number | null;

  /** GitLab's `import_status`: `finished` once a fork's repository is whole, `none` for other projects. */
  @Column({ type: 'varchar', length: 32, name: 'import_status', default: 'none' })
  importStatus: string;

  @Column({ type: 'timestamptz', name: 'marked_for_deletion_at', nullable: true })
  markedForDeletionAt: Date | null;

  @Column({ type: 'timestamptz', name: 'last_activity_at', default: () => 'now()' })
  lastActivityAt: Date;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;

  @OneToOne(() => ProjectStatistics, (statistics) => statistics.project)
  statistics?: Relation<ProjectStatistics>;
}

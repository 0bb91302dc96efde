import { Column, Entity, JoinColumn, OneToOne, PrimaryColumn, type Relation } from 'typeorm';
import { bigintToNumber } from '../db/columns.js';
import { Project } from './project.entity.js';

const size = { type: 'bigint', default: 0, transformer: bigintToNumber } as const;

/** Sizes in bytes, kept up to date by the features that store data (repository, packages, registry, ...). */
@Entity({ name: 'project_statistics' })
export class ProjectStatistics {
  @PrimaryColumn({ type: 'integer', name: 'project_id' })
  projectId: number;

  @OneToOne(() => Project, (project) => project.statistics, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'project_id' })
  project?: Relation<Project>;

  @Column({ ...size, name: 'commit_count' }) commitCount: number;
  @Column({ ...size, name: 'storage_size' }) storageSize: number;
  @Column({ ...size, name: 'repository_size' }) repositorySize: number;
  @Column({ ...size, name: 'wiki_size' }) wikiSize: number;
  @Column({ ...size, name: 'lfs_objects_size' }) lfsObjectsSize: number;
  @Column({ ...size, name: 'job_artifacts_size' }) jobArtifactsSize: number;
  @Column({ ...size, name: 'pipeline_artifacts_size' }) pipelineArtifactsSize: number;
  @Column({ ...size, name: 'packages_size' }) packagesSize: number;
  @Column({ ...size, name: 'snippets_size' }) snippetsSize: number;
  @Column({ ...size, name: 'uploads_size' }) uploadsSize: number;
  @Column({ ...size, name: 'container_registry_size' }) containerRegistrySize: number;
}

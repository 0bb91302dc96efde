import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { bigintToNumber } from '../db/columns.js';

/** A file a job uploaded (`ci_job_artifacts`): its archive, metadata or one of its reports. */
@Entity({ name: 'ci_job_artifacts' })
export class JobArtifact {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'integer', name: 'job_id' })
  jobId: number;

  /** GitLab's `artifact_type`: `archive`, `metadata`, `junit`, `dotenv`... */
  @Column({ type: 'varchar', length: 32, name: 'file_type' })
  fileType: string;

  @Column({ type: 'varchar', length: 8, name: 'file_format' })
  fileFormat: 'zip' | 'gzip' | 'raw';

  /** The name it was uploaded as (`artifacts.zip`). */
  @Column({ type: 'varchar', length: 255 })
  filename: string;

  /** Where the bytes are in the object store. */
  @Column({ type: 'text', name: 'object_key' })
  objectKey: string;

  @Column({ type: 'bigint', transformer: bigintToNumber })
  size: number;

  /** null: kept until deleted. */
  @Column({ type: 'timestamptz', name: 'expire_at', nullable: true })
  expireAt: Date | null;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}

/**
 * One file of a zip archive, indexed when it is uploaded, so that serving one file out of thousands is
 * one indexed row and a ranged read rather than a walk of the central directory.
 */
@Entity({ name: 'ci_job_artifact_entries' })
export class JobArtifactEntry {
  @PrimaryColumn({ type: 'integer', name: 'artifact_id' })
  artifactId: number;

  @PrimaryColumn({ type: 'text' })
  path: string;

  @Column({ type: 'bigint', name: 'header_offset', transformer: bigintToNumber })
  headerOffset: number;

  @Column({ type: 'bigint', name: 'compressed_size', transformer: bigintToNumber })
  compressedSize: number;

  @Column({ type: 'bigint', transformer: bigintToNumber })
  size: number;

  @Column({ type: 'smallint', name: 'compression_method' })
  compressionMethod: number;

  @Column({ type: 'integer', name: 'flags' })
  flags: number;

  @Column({ type: 'bigint', transformer: bigintToNumber })
  crc32: number;
}

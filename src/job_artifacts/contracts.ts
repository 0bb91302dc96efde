/**
 * What the job_artifacts family offers others, fixed before its implementation: the `artifactReports`
 * point through which report families (test reports, dotenv, coverage, security reports) read an uploaded
 * report in the upload's transaction, and may refuse it (an ApiError, e.g. 400 for an invalid dotenv).
 */
import type { EntityManager } from 'typeorm';
import type { Job } from '../pipelines/pipeline.entity.js';

/** GitLab's `artifact_type` values a runner uploads (`archive`, `metadata`, `trace` and the reports). */
export type ArtifactFileType = string;

export interface UploadedReport {
  job: Job;
  /** The stored artifact row's id. */
  artifactId: number;
  fileType: ArtifactFileType;
  /** `zip`, `gzip` or `raw`, as uploaded. */
  format: 'zip' | 'gzip' | 'raw';
  /** The uploaded file on local disk, as uploaded (still gzip-compressed for `gzip`). */
  path: string;
  size: number;
}

export interface ArtifactReportReader {
  /** The report types it reads (`junit`, `dotenv`, `cobertura`, `sast`...). */
  readonly fileTypes: readonly ArtifactFileType[];
  /** Reads the report in the upload's transaction; throws an ApiError to refuse the upload. */
  accept(manager: EntityManager, report: UploadedReport): Promise<void>;
}

declare module '../core/family.js' {
  interface ContributionPoints {
    artifactReports: ArtifactReportReader;
  }
}

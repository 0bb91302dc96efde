/**
 * Job artifacts: what a running job uploads (its archive, metadata and reports), kept in the object
 * store with one row each, and served to runners (a dependency's archive) and to users (the archive,
 * by job or by ref, or one file out of it).
 *
 * An upload writes the object first and its row in a transaction; a failed transaction removes the
 * object, so no object is ever served without a row.
 */
import { faultPoint } from '../core/faults.js';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { DataSource, EntityManager } from 'typeorm';
import type { Caller } from '../core/auth.js';
import { ApiError, badParameter, forbidden, notFound } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import type { UploadedFile } from '../core/http.js';
import type { ObjectStore } from '../core/object-store.js';
import type { Events } from '../core/events.js';
import { isUniqueViolation } from '../db/errors.js';
import { Job } from '../pipelines/pipeline.entity.js';
import type { PipelinesService } from '../pipelines/pipelines.service.js';
import type { ProjectView } from '../projects/projects.service.js';
import { isJobTokenReach } from '../runner_jobs/contracts.js';
import { ArtifactRemoval, updateArtifactStatistics } from './artifact-removal.js';
import type { ArtifactFileType } from './contracts.js';
import { parseExpireIn } from './expire-in.js';
import { JobArtifact, JobArtifactEntry } from './job-artifact.entity.js';
import './job-artifacts.events.js';
import { canDecode, openStoredEntry, readZipEntries, type IndexedEntry } from './zip-entries.js';

/** GitLab's `Ci::JobArtifact.file_types`, each with the format it is stored in. */
export const ARTIFACT_TYPES: Readonly<Record<string, 'zip' | 'gzip' | 'raw'>> = {
  archive: 'zip',
  metadata: 'gzip',
  trace: 'raw',
  junit: 'gzip',
  sast: 'raw',
  dependency_scanning: 'raw',
  container_scanning: 'raw',
  dast: 'raw',
  codequality: 'raw',
  license_scanning: 'raw',
  performance: 'raw',
  metrics: 'gzip',
  metrics_referee: 'gzip',
  network_referee: 'gzip',
  lsif: 'zip',
  dotenv: 'gzip',
  cobertura: 'gzip',
  terraform: 'raw',
  accessibility: 'raw',
  cluster_applications: 'gzip',
  secret_detection: 'raw',
  requirements: 'raw',
  coverage_fuzzing: 'raw',
  browser_performance: 'raw',
  load_performance: 'raw',
  api_fuzzing: 'raw',
  cluster_image_scanning: 'raw',
  cyclonedx: 'gzip',
  requirements_v2: 'raw',
  annotations: 'gzip',
  repository_xray: 'gzip',
  jacoco: 'gzip',
};

export const ARTIFACT_FORMATS = ['zip', 'gzip', 'raw'] as const;
type ArtifactFormat = (typeof ARTIFACT_FORMATS)[number];

export interface ArtifactSettings {
  /** Bytes one uploaded file may have (GitLab's `max_artifacts_size`, 100 MB by default). */
  maxArtifactsSize: number;
  /** GitLab's `default_artifacts_expire_in`, when an upload names none. */
  defaultExpireIn: string;
}

/** `FORGE_MAX_ARTIFACTS_SIZE_MB` (GitLab's `max_artifacts_size`, in MB) or GitLab's 100 MB. */
export function artifactSettings(env: NodeJS.ProcessEnv = process.env): ArtifactSettings {
  const mb = Number(env.FORGE_MAX_ARTIFACTS_SIZE_MB ?? 100);
  if (!Number.isFinite(mb) || mb <= 0)
    throw new Error(
      `FORGE_MAX_ARTIFACTS_SIZE_MB must be a positive number: ${env.FORGE_MAX_ARTIFACTS_SIZE_MB}`,
    );
  return { maxArtifactsSize: Math.floor(mb * 1024 * 1024), defaultExpireIn: '30 days' };
}

export interface ArtifactUploadParams {
  artifact_type?: string;
  artifact_format?: string;
  expire_in?: string;
}

/** What a download answers: a presigned URL to redirect to, or the bytes. */
export type Served =
  { redirect: string } | { stream: Readable; filename: string; size: number; contentType: string };

const ENTRY_INSERT_BATCH = 2000;

export class JobArtifactsService {
  private readonly dataSource: DataSource;
  readonly store: ObjectStore;
  private readonly events: Events;
  readonly removal: ArtifactRemoval;

  constructor(
    private readonly core: CoreDeps,
    private readonly pipelines: PipelinesService,
    readonly settings: ArtifactSettings,
  ) {
    this.dataSource = core.dataSource;
    this.store = core.objectStore;
    this.events = core.events;
    this.removal = new ArtifactRemoval(core.dataSource, core.objectStore, core.logger);
  }

  // --- runners ---

  /** The job `jobId` when the caller is its running job's token (GitLab's `authenticate_job!`): else 403. */
  async runningJob(caller: Caller, jobId: number, manager: EntityManager = this.dataSource.manager) {
    const reach = caller.reach;
    if (!isJobTokenReach(reach) || reach.jobId !== jobId) throw forbidden();
    const job = await manager.findOneBy(Job, { id: jobId, type: 'build' });
    if (!job) throw forbidden();
    if (job.erasedAt) throw forbidden('Job has been erased!');
    if (job.status !== 'running') throw forbidden('Job is not running');
    return job;
  }

  /** `POST /jobs/:id/artifacts/authorize`: whether a file of `filesize` may be uploaded. */
  async authorizeUpload(
    caller: Caller,
    jobId: number,
    params: { filesize?: number; artifact_type?: string },
  ) {
    await this.runningJob(caller, jobId);
    this.fileType(params.artifact_type);
    if (params.filesize !== undefined && params.filesize > this.settings.maxArtifactsSize) throw tooLarge();
    return { TempPath: '', MaximumSize: this.settings.maxArtifactsSize };
  }

  /** `POST /jobs/:id/artifacts`: keeps an uploaded file of the running job, and hands reports to their readers. */
  async upload(
    caller: Caller,
    jobId: number,
    file: UploadedFile | undefined,
    params: ArtifactUploadParams,
  ): Promise<JobArtifact> {
    const job = await this.runningJob(caller, jobId);
    if (!file) throw badParameter('file is missing');
    const fileType = this.fileType(params.artifact_type);
    const format = (params.artifact_format ?? ARTIFACT_TYPES[fileType]) as ArtifactFormat;
    if (!ARTIFACT_FORMATS.includes(format)) throw badParameter('artifact_format does not have a valid value');
    if (fileType === 'archive' && format !== 'zip')
      throw badParameter('artifact_format must be zip for archive');
    const expireAt = this.expireAt(params.expire_in);
    if (file.size > this.settings.maxArtifactsSize) throw tooLarge();
    const entries = format === 'zip' ? await readZipEntries(file.path).catch(() => null) : [];
    if (!entries) throw badParameter('file is not a valid zip archive');
    const filename = sanitize(file.filename || defaultName(fileType, format));
    const key = `artifacts/${job.projectId}/${job.id}/${randomUUID()}/${filename}`;
    // Queued before the object exists: if the process dies between the write and the row's commit, the
    // check finds an object no row names and removes it (a failed transaction removes it at once below).
    await this.dataSource.transaction((manager) =>
      this.events.publish(
        manager,
        'ci.job_artifact_upload_settled',
        { key },
        { startAfter: new Date(Date.now() + UPLOAD_CHECK_AFTER_MS) },
      ),
    );
    const size = await this.store.putFile(key, file.path);
    faultPoint('artifact-upload:stored');
    try {
      return await this.dataSource.transaction(async (manager) => {
        const locked = await this.pipelines.jobs.lock(manager, job.id);
        if (locked.status !== 'running') throw forbidden('Job is not running');
        const artifact = await this.insert(manager, { job, fileType, format, filename, key, size, expireAt });
        await this.insertEntries(manager, artifact.id, entries);
        for (const reader of this.core.contributions.of('artifactReports'))
          if (reader.fileTypes.includes(fileType))
            await reader.accept(manager, {
              job: locked,
              artifactId: artifact.id,
              fileType,
              format,
              path: file.path,
              size,
            });
        await updateArtifactStatistics(manager, job.projectId);
        if (expireAt)
          await this.events.publish(
            manager,
            'ci.job_artifacts_expiry_due',
            { projectId: job.projectId },
            { startAfter: expireAt },
          );
        return artifact;
      });
    } catch (err) {
      await this.store.delete([key]);
      throw err;
    }
  }

  private fileType(value: string | undefined): ArtifactFileType {
    const type = value ?? 'archive';
    if (!(type in ARTIFACT_TYPES)) throw badParameter('artifact_type does not have a valid value');
    return type;
  }

  private expireAt(expireIn: string | undefined): Date | null {
    const seconds = parseExpireIn(expireIn ?? this.settings.defaultExpireIn);
    if (seconds === undefined) throw badParameter('expire_in is invalid');
    return seconds === null ? null : new Date(Date.now() + seconds * 1000);
  }

  private async insert(
    manager: EntityManager,
    input: {
      job: Job;
      fileType: string;
      format: ArtifactFormat;
      filename: string;
      key: string;
      size: number;
      expireAt: Date | null;
    },
  ): Promise<JobArtifact> {
    const rows = manager.getRepository(JobArtifact);
    try {
      return await rows.save(
        rows.create({
          projectId: input.job.projectId,
          jobId: input.job.id,
          fileType: input.fileType,
          fileFormat: input.format,
          filename: input.filename,
          objectKey: input.key,
          size: input.size,
          expireAt: input.expireAt,
          createdAt: new Date(),
        }),
      );
    } catch (err) {
      if (isUniqueViolation(err)) throw badParameter('another artifact of the same type already exists');
      throw err;
    }
  }

  private async insertEntries(manager: EntityManager, artifactId: number, entries: IndexedEntry[]) {
    for (let i = 0; i < entries.length; i += ENTRY_INSERT_BATCH) {
      const batch = entries.slice(i, i + ENTRY_INSERT_BATCH);
      const column = <K extends keyof IndexedEntry>(k: K) => batch.map((entry) => entry[k]);
      await manager.query(
        `INSERT INTO ci_job_artifact_entries
           (artifact_id, path, header_offset, compressed_size, size, compression_method, flags, crc32)
         SELECT $1, * FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::smallint[],
           $7::integer[], $8::bigint[])
         ON CONFLICT DO NOTHING`,
        [
          artifactId,
          column('path'),
          column('headerOffset'),
          column('compressedSize'),
          column('size'),
          column('compressionMethod'),
          column('flags'),
          column('crc32'),
        ],
      );
    }
  }

  /**
   * `GET /jobs/:id/artifacts` for a runner: the archive of its own job or of a job of its project it
   * depends on, with its running job's token.
   */
  async forRunner(caller: Caller, jobId: number): Promise<JobArtifact> {
    const reach = caller.reach;
    if (!isJobTokenReach(reach)) throw forbidden();
    const job = await this.dataSource.manager.findOneBy(Job, { id: jobId, type: 'build' });
    if (!job || job.projectId !== reach.projectId) throw forbidden();
    const archive = await this.archiveOf(job.id);
    if (!archive) throw notFound();
    return archive;
  }

  /** The payload's `artifacts_file` of a dependency: its archive's name and size, or null. */
  async artifactsFile(manager: EntityManager, dependency: Job) {
    const archive = await this.archiveOf(dependency.id, manager);
    return archive ? { filename: archive.filename, size: archive.size } : null;
  }

  // --- users ---

  archiveOf(jobId: number, manager: EntityManager = this.dataSource.manager): Promise<JobArtifact | null> {
    return manager.findOneBy(JobArtifact, { jobId, fileType: 'archive' });
  }

  /** A job's archive: 404 when the job is not there, or has none (only reports, or nothing). */
  async archiveForJob(view: ProjectView, jobId: number): Promise<{ job: Job; archive: JobArtifact }> {
    const job = await this.pipelines.jobs.find(view, jobId);
    const archive = await this.archiveOf(job.id);
    if (!archive) throw notFound();
    return { job, archive };
  }

  /**
   * The archive of the job named `jobName` in the latest successful pipeline of `ref` (by creation), or
   * of its child pipelines, the parent's first.
   */
  async archiveForRef(view: ProjectView, ref: string, jobName: string): Promise<JobArtifact> {
    const rows: Array<{ id: number }> = await this.dataSource.query(
      `WITH RECURSIVE latest AS (
         SELECT id FROM ci_pipelines
         WHERE project_id = $1 AND ref = $2 AND status = 'success' AND source <> 'parent_pipeline'
         ORDER BY created_at DESC, id DESC LIMIT 1
       ), tree AS (
         SELECT id, 0 AS depth FROM latest
         UNION ALL SELECT p.id, t.depth + 1 FROM ci_pipelines p JOIN tree t ON p.parent_pipeline_id = t.id
       )
       SELECT a.id FROM ci_builds b
       JOIN tree t ON t.id = b.pipeline_id
       JOIN ci_job_artifacts a ON a.job_id = b.id AND a.file_type = 'archive'
       WHERE b.name = $3 AND b.type = 'build' AND NOT b.retried
       ORDER BY t.depth, b.pipeline_id, b.id DESC LIMIT 1`,
      [view.project.id, ref, jobName],
    );
    if (rows.length === 0) throw notFound();
    return this.dataSource.manager.findOneByOrFail(JobArtifact, { id: rows[0].id });
  }

  /** The archive's bytes, or where to download them from (a presigned URL, when the store gives one). */
  async serve(artifact: JobArtifact, options: { redirect?: boolean } = {}): Promise<Served> {
    const url =
      options.redirect === false
        ? null
        : await this.store.downloadUrl(artifact.objectKey, {
            filename: artifact.filename,
            contentType: 'application/zip',
          });
    if (url) return { redirect: url };
    const stream = await this.store.get(artifact.objectKey);
    if (!stream) throw notFound();
    return { stream, filename: artifact.filename, size: artifact.size, contentType: 'application/zip' };
  }

  /** One file of the archive, streamed out of it: 400 for an unsafe path, 404 for none there. */
  async serveEntry(artifact: JobArtifact, artifactPath: string): Promise<Served> {
    const entryPath = validEntryPath(artifactPath);
    const entry = await this.dataSource.manager.findOneBy(JobArtifactEntry, {
      artifactId: artifact.id,
      path: entryPath,
    });
    if (!entry || !canDecode(entry)) throw notFound();
    const stream = await openStoredEntry(this.store, artifact.objectKey, artifact.size, entry);
    return {
      stream,
      filename: path.posix.basename(entryPath),
      size: entry.size,
      contentType: contentTypeOf(entryPath),
    };
  }

  /** `keep`: the job's artifacts no longer expire; 404 when it has none. */
  async keep(view: ProjectView, jobId: number): Promise<Job> {
    const job = await this.pipelines.jobs.find(view, jobId);
    const result = await this.dataSource.manager.update(JobArtifact, { jobId: job.id }, { expireAt: null });
    if (!result.affected) throw notFound();
    return job;
  }

  /** Removes one job's artifacts (not its log). */
  async deleteForJob(view: ProjectView, jobId: number): Promise<void> {
    const job = await this.pipelines.jobs.find(view, jobId);
    await this.removal.removeForJob(job.projectId, job.id);
  }

  /** Every deletable artifact of the project expires now; their removal runs on the queue. */
  async deleteForProject(view: ProjectView): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await this.removal.expireAllNow(manager, view.project.id);
      await this.events.publish(manager, 'ci.job_artifacts_expiry_due', { projectId: view.project.id });
    });
  }

  /** After a pipeline succeeds, its project's older artifacts may be unlocked and expired. */
  async removeExpiredAfterPipeline(pipelineId: number): Promise<void> {
    const rows: Array<{ project_id: number }> = await this.dataSource.query(
      'SELECT project_id FROM ci_pipelines WHERE id = $1',
      [pipelineId],
    );
    if (rows[0]) await this.removal.removeExpired(rows[0].project_id);
  }

  /** After an upload had time to commit: its object goes unless a row names it (a crash left it). */
  async settleUpload(key: string): Promise<void> {
    if (await this.dataSource.manager.existsBy(JobArtifact, { objectKey: key })) return;
    await this.store.delete([key]);
  }

  /** GitLab's artifact attributes of each job's representation, by job id (one query a page). */
  async jobFields(jobs: readonly Job[]): Promise<Map<number, Record<string, unknown>>> {
    const byJob = await this.forJobs(jobs.map((job) => job.id));
    const fields = new Map<number, Record<string, unknown>>();
    for (const [jobId, artifacts] of byJob) {
      const archive = artifacts.find((artifact) => artifact.fileType === 'archive');
      fields.set(jobId, {
        artifacts: artifacts.map((artifact) => ({
          file_type: artifact.fileType,
          size: artifact.size,
          filename: artifact.filename,
          file_format: artifact.fileFormat,
        })),
        artifacts_expire_at: archive?.expireAt?.toISOString() ?? null,
        ...(archive ? { artifacts_file: { filename: archive.filename, size: archive.size } } : {}),
      });
    }
    return fields;
  }

  /** A job's erase takes its artifacts: rows now, objects once the erase committed. */
  async eraseWith(manager: EntityManager, job: Job): Promise<void> {
    const rows = await manager.find(JobArtifact, { select: { id: true }, where: { jobId: job.id } });
    const keys = await this.removal.deleteRows(
      manager,
      job.projectId,
      rows.map((row) => row.id),
    );
    if (keys.length) await this.events.publish(manager, 'ci.job_artifact_objects_released', { keys });
  }

  /** Artifacts of each job, for representations: by job id. */
  async forJobs(jobIds: readonly number[]): Promise<Map<number, JobArtifact[]>> {
    const byJob = new Map<number, JobArtifact[]>();
    if (jobIds.length === 0) return byJob;
    const rows = await this.dataSource
      .getRepository(JobArtifact)
      .createQueryBuilder('a')
      .where('a.job_id = ANY(:ids)', { ids: [...jobIds] })
      .orderBy('a.id')
      .getMany();
    for (const row of rows) byJob.set(row.jobId, [...(byJob.get(row.jobId) ?? []), row]);
    return byJob;
  }
}

/** How long an upload has to commit its row before its object is taken for a crash's leftover. */
export const UPLOAD_CHECK_AFTER_MS = 60 * 60 * 1000;

const tooLarge = () => new ApiError(413, { message: 'file size has reached maximum size limit' });

/** Names as GitLab's uploader keeps them: no path, no control characters. */
const sanitize = (name: string) =>
  path.posix
    .basename(name.replace(/\\/g, '/'))
    .replace(/[^\w.+-]/g, '_')
    .slice(0, 255) || 'artifact';

const defaultName = (fileType: string, format: ArtifactFormat) =>
  format === 'zip' ? 'artifacts.zip' : format === 'gzip' ? `${fileType}.gz` : fileType;

/** GitLab's artifact path checks: no traversal, no NUL, valid UTF-8 (the router decoded it already). */
function validEntryPath(raw: string): string {
  const value = raw.replace(/^\/+/, '');
  if (!value || value.includes('\0') || value.includes('\uFFFD') || value.length > 4096)
    throw badParameter('artifact_path is invalid');
  if (value.split('/').some((part) => part === '..')) throw badParameter('artifact_path is invalid');
  return value;
}

const TYPES: Record<string, string> = {
  txt: 'text/plain; charset=utf-8',
  log: 'text/plain; charset=utf-8',
  md: 'text/plain; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  json: 'application/json',
  xml: 'application/xml',
  html: 'text/plain; charset=utf-8',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  gif: 'image/gif',
  zip: 'application/zip',
  gz: 'application/gzip',
};

/** By extension; anything that might run in a browser is served as text or bytes. */
function contentTypeOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return TYPES[dot >= 0 ? name.slice(dot + 1).toLowerCase() : ''] ?? 'application/octet-stream';
}

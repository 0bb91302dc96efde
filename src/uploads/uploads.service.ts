import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import type { DataSource } from 'typeorm';
import type { operations } from '../../generated/openapi.js';
import type { Caller } from '../core/auth.js';
import { badParameter, notFound } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import type { UploadedFile } from '../core/http.js';
import { recordId } from '../core/ids.js';
import { paginateOffset, type Page, type RequestInfo } from '../core/pagination.js';
import { projectSettings } from '../projects/project-settings.js';
import type { ProjectsService, ProjectView } from '../projects/projects.service.js';
import { Upload } from './upload.entity.js';
import type { UploadStorage } from './upload-storage.js';

export type ListUploadsParams = NonNullable<operations['listProjectUploads']['parameters']['query']>;

/** GitLab's `max_attachment_size` default: 100 MB. */
export const MAX_ATTACHMENT_BYTES = 100 * 1024 * 1024;

/**
 * CarrierWave's sanitizing, as GitLab names stored files: every character but letters, digits, `_`,
 * `.`, `-` and `+` becomes `_`; a name of dots only, which would name a directory, becomes `_`.
 */
export function sanitizeFilename(name: string): string {
  const base = name.split(/[/\\]/).pop() ?? '';
  let clean = base.replace(/[^\p{L}\p{N}_.+-]/gu, '_');
  if (/^\.*$/.test(clean)) clean = `_${clean}`;
  // Keep the extension when a long name is cut to the column's 255 characters.
  if (clean.length > 255) {
    const dot = clean.lastIndexOf('.');
    const extension = dot > 0 && clean.length - dot <= 16 ? clean.slice(dot) : '';
    clean = clean.slice(0, 255 - extension.length) + extension;
  }
  return clean;
}

export class UploadsService {
  private readonly dataSource: DataSource;

  constructor(
    deps: CoreDeps,
    private readonly storage: UploadStorage,
    private readonly projects: ProjectsService,
  ) {
    this.dataSource = deps.dataSource;
  }

  /** Keeps a spooled file as an upload of the project: the file first, then its row. */
  async create(caller: Caller, view: ProjectView, file: UploadedFile | undefined): Promise<Upload> {
    if (!file) throw badParameter('file is invalid');
    const filename = sanitizeFilename(file.filename || 'file');
    const secret = crypto.randomBytes(16).toString('hex');
    const projectId = view.project.id;
    await this.storage.place(projectId, secret, filename, file.path);
    try {
      const uploads = this.dataSource.getRepository(Upload);
      const saved = await uploads.save(
        uploads.create({
          projectId,
          secret,
          filename,
          size: file.size,
          uploadedById: caller.user?.id ?? null,
        }),
      );
      return saved;
    } catch (err) {
      await this.storage.remove(projectId, secret).catch(() => undefined);
      throw err;
    }
  }

  /** The project's uploads, newest first, each with its uploader, a page at a time. */
  list(view: ProjectView, params: ListUploadsParams, request: RequestInfo): Promise<Page<Upload>> {
    const query = this.dataSource
      .getRepository(Upload)
      .createQueryBuilder('u')
      .leftJoinAndSelect('u.uploadedBy', 'by')
      .where('u.project_id = :projectId', { projectId: view.project.id })
      .orderBy('u.created_at', 'DESC')
      .addOrderBy('u.id', 'DESC');
    return paginateOffset(query, params, request);
  }

  async findById(view: ProjectView, id: number): Promise<Upload> {
    const upload = await this.dataSource.getRepository(Upload).findOneBy({ projectId: view.project.id, id });
    if (!upload) throw notFound('Upload');
    return upload;
  }

  async findBySecret(projectId: number, secret: string, filename: string): Promise<Upload> {
    const upload = /^[0-9a-f]{32}$/.test(secret)
      ? await this.dataSource.getRepository(Upload).findOneBy({ projectId, secret, filename })
      : null;
    if (!upload) throw notFound('Upload');
    return upload;
  }

  /** The row goes first: a file left by a crash is named by no row and never served. */
  async delete(upload: Upload): Promise<void> {
    await this.dataSource.getRepository(Upload).delete(upload.id);
    await this.storage.remove(upload.projectId, upload.secret);
  }

  async open(upload: Upload): Promise<Readable> {
    const stream = await this.storage.open(upload.projectId, upload.secret, upload.filename);
    if (!stream) throw notFound('Upload');
    return stream;
  }

  /**
   * An upload as the web serves it, at `/-/project/:id/uploads/...` or `/<full path>/uploads/...`:
   * to whoever may read the project, or to anyone with the URL when the project does not enforce
   * authorization checks on uploads. 404 for anything else.
   */
  async forWeb(caller: Caller, project: string, secret: string, filename: string): Promise<Upload> {
    const id = recordId(project);
    const slash = project.lastIndexOf('/');
    const rows = (await this.dataSource.query(
      id !== undefined
        ? 'SELECT p.id, p.settings FROM projects p WHERE p.id = $1'
        : `SELECT p.id, p.settings FROM projects p JOIN namespaces n ON n.id = p.namespace_id
           WHERE lower(n.full_path) = lower($1) AND lower(p.path) = lower($2)`,
      id !== undefined ? [id] : [project.slice(0, slash), project.slice(slash + 1)],
    )) as Array<{ id: number; settings: Record<string, unknown> }>;
    const [row] = rows;
    if (!row || (id === undefined && slash <= 0)) throw notFound();
    if (projectSettings(row.settings).enforce_auth_checks_on_uploads)
      await this.projects.find(caller, row.id).catch(() => {
        throw notFound();
      });
    return this.findBySecret(Number(row.id), secret, filename).catch(() => {
      throw notFound();
    });
  }

  /** Every upload of a deleted project goes with it (its rows went with the project's). */
  removeProject(projectId: number): Promise<void> {
    return this.storage.removeProject(projectId);
  }
}

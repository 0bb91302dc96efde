/**
 * CI job tokens (`CI_JOB_TOKEN`, `glcbt-…`): issued when a runner picks a job, kept only as a SHA-256
 * digest on the build, valid while the build runs. A token acts as the job's user, on the job's own
 * project and on the projects whose inbound job token scope allows the job's project (or is disabled).
 */
import crypto from 'node:crypto';
import type { DataSource } from 'typeorm';
import { hashToken, type Caller } from '../core/auth.js';
import { ApiError } from '../core/errors.js';
import type { JobTokenJob } from '../pipeline_triggers/job-token-triggers.js';
import type { ProjectView } from '../projects/projects.service.js';
import { User } from '../users/user.entity.js';
import type { JobTokenReach } from './contracts.js';

export const JOB_TOKEN_PREFIX = 'glcbt-';

/** A new job token and the digest stored on the build. */
export function newJobToken(): { token: string; digest: string } {
  const token = JOB_TOKEN_PREFIX + crypto.randomBytes(20).toString('base64url');
  return { token, digest: hashToken(token) };
}

interface RunningJobRow {
  id: number;
  pipeline_id: number;
  project_id: number;
  user_id: number | null;
  project_path: string;
}

export class JobTokens {
  constructor(private readonly dataSource: DataSource) {}

  /** The running build a token belongs to; null for anything else (finished jobs' tokens included). */
  async runningJob(token: string): Promise<RunningJobRow | null> {
    if (!token.startsWith(JOB_TOKEN_PREFIX)) return null;
    const rows: RunningJobRow[] = await this.dataSource.query(
      `SELECT j.id, j.pipeline_id, j.project_id, j.user_id, n.full_path || '/' || p.path AS project_path
       FROM ci_builds j JOIN projects p ON p.id = j.project_id JOIN namespaces n ON n.id = p.namespace_id
       WHERE j.token_digest = $1 AND j.status = 'running'`,
      [hashToken(token)],
    );
    return rows[0] ?? null;
  }

  /** The job and its (active) user, for the `ciJobTokens` point and the caller. */
  async jobFor(token: string): Promise<(JobTokenJob & { projectPath: string }) | null> {
    const row = await this.runningJob(token);
    if (!row || row.user_id === null) return null;
    const user = await this.dataSource.manager.findOneBy(User, { id: row.user_id });
    if (!user || user.state !== 'active') return null;
    return {
      jobId: row.id,
      pipelineId: row.pipeline_id,
      projectId: row.project_id,
      user,
      projectPath: row.project_path,
    };
  }

  /** The caller a job token stands for (the `JobToken` and `JobTokenQuery` schemes). */
  async caller(token: string): Promise<Caller | null> {
    const job = await this.jobFor(token);
    if (!job) return null;
    return { user: job.user, token: null, reach: this.reach(job) };
  }

  reach(job: JobTokenJob & { projectPath: string }): JobTokenReach {
    const allows = (target: number) => this.allows(job.projectId, target);
    return {
      kind: 'ci_job_token',
      jobId: job.jobId,
      pipelineId: job.pipelineId,
      projectId: job.projectId,
      userId: job.user.id,
      async check(subjectKind: string, subject: unknown): Promise<void> {
        // Only projects have a job token scope; operations of other kinds opted into job tokens themselves.
        if (subjectKind !== 'project') return;
        const view = subject as ProjectView;
        if (view.project.id === job.projectId || (await allows(view.project.id))) return;
        const target = `${view.project.namespace.fullPath}/${view.project.path}`;
        throw new ApiError(403, {
          message: `403 Forbidden - Authentication by CI/CD job token not allowed from ${job.projectPath} to ${target}.`,
        });
      },
    };
  }

  /**
   * May a job of `source` reach `target`? Yes when `target` limits nothing (inbound scope disabled), or
   * its allowlist names `source` or a group above it. Without settings, the scope is enabled (GitLab's
   * default for new projects).
   */
  async allows(source: number, target: number): Promise<boolean> {
    if (source === target) return true;
    const rows: Array<{ allowed: boolean }> = await this.dataSource.query(
      `SELECT NOT COALESCE((SELECT inbound_enabled FROM ci_job_token_scope_settings WHERE project_id = $2), true)
          OR EXISTS (SELECT 1 FROM ci_job_token_project_scope_links
                     WHERE source_project_id = $2 AND target_project_id = $1)
          OR EXISTS (SELECT 1 FROM ci_job_token_group_scope_links l, projects p JOIN namespaces n ON n.id = p.namespace_id
                     WHERE p.id = $1 AND l.source_project_id = $2 AND l.target_group_id = ANY(n.traversal_ids))
          AS allowed`,
      [source, target],
    );
    return rows[0]?.allowed === true;
  }
}

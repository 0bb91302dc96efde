import type { components } from '../../generated/openapi.js';
import type { Job } from '../pipelines/pipeline.entity.js';
import type { User } from '../users/user.entity.js';
import { presentUserSummary } from '../users/user.presenter.js';
import type { StatusOptions } from './commit-statuses.service.js';

type CommitStatusJson = components['schemas']['CommitStatus'];

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** A job as the statuses API shows it (GitLab's Entities::CommitStatus); posted statuses add their URL and text. */
export function presentCommitStatus(
  job: Job,
  authors: Map<number, User>,
  externalUrl: string,
): CommitStatusJson {
  const options = (job.type === 'generic' ? job.options : {}) as StatusOptions;
  const author = job.userId === null ? undefined : authors.get(job.userId);
  return {
    id: job.id,
    sha: job.sha,
    ref: job.ref,
    status: job.status,
    name: job.name,
    target_url: options.target_url ?? null,
    description: options.description ?? null,
    created_at: job.createdAt.toISOString(),
    started_at: iso(job.startedAt),
    finished_at: iso(job.finishedAt),
    allow_failure: job.allowFailure,
    coverage: job.coverage === null ? null : Number(job.coverage),
    pipeline_id: job.pipelineId,
    author: author ? presentUserSummary(author, externalUrl) : null,
  };
}

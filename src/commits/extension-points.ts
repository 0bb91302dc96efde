/**
 * What other families add to a single commit's representation (GitLab's `status` and `last_pipeline`,
 * which the pipelines answer). A contribution reads every commit of a response at once, by project and
 * SHAs, so a response costs one query per contribution whatever it holds.
 */
import type { EntityManager } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import type { Caller } from '../core/auth.js';
import type { Contributions } from '../core/family.js';
import type { ProjectView } from '../projects/projects.service.js';

type CommitDetailJson = components['schemas']['CommitDetail'];

/** The commits of one response, with who asks and the server's external URL (for links). */
export interface CommitFieldsInput {
  caller: Caller;
  view: ProjectView;
  shas: string[];
  externalUrl: string;
}

/** Fields a family fills in the single commit's representation. */
export interface CommitFieldsContribution {
  /** By SHA: what it shows for each commit (absent: the defaults, `null`). */
  read(manager: EntityManager, input: CommitFieldsInput): Promise<Map<string, Partial<CommitDetailJson>>>;
}

declare module '../core/family.js' {
  interface ContributionPoints {
    commitFields: CommitFieldsContribution;
  }
}

export async function readCommitFields(
  contributions: Contributions,
  manager: EntityManager,
  input: CommitFieldsInput,
): Promise<Map<string, Partial<CommitDetailJson>>> {
  const bySha = new Map<string, Partial<CommitDetailJson>>();
  if (input.shas.length === 0) return bySha;
  for (const contribution of contributions.of('commitFields'))
    for (const [sha, fields] of await contribution.read(manager, input))
      bySha.set(sha, { ...bySha.get(sha), ...fields });
  return bySha;
}

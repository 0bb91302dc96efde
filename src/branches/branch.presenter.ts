import type { components } from '../../generated/openapi.js';
import { presentCommit } from '../commits/commit.presenter.js';
import type { GitCommit } from '../git/commits.js';

export type BranchJson = components['schemas']['Branch'];

/** A branch with what one caller may do on it, as the service found it. */
export interface BranchRecord {
  name: string;
  commit: GitCommit;
  merged: boolean;
  protected: boolean;
  default: boolean;
  developersCanPush: boolean;
  developersCanMerge: boolean;
  canPush: boolean;
}

/** `feature/login` stays readable in URLs; every other special character is escaped. */
const pathOf = (name: string) => name.split('/').map(encodeURIComponent).join('/');

export function presentBranch(branch: BranchRecord, projectWebUrl: string): BranchJson {
  return {
    name: branch.name,
    commit: presentCommit(branch.commit, projectWebUrl),
    merged: branch.merged,
    protected: branch.protected,
    default: branch.default,
    developers_can_push: branch.developersCanPush,
    developers_can_merge: branch.developersCanMerge,
    can_push: branch.canPush,
    web_url: `${projectWebUrl}/-/tree/${pathOf(branch.name)}`,
  };
}

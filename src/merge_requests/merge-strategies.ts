/**
 * How a merge writes its commits, per the project's merge method (as Gitea's services/pull splits
 * merging per strategy): an optional squash commit, then a merge commit (`merge`, `rebase_merge`) or the
 * source's tip itself (`ff`). Nothing here moves a ref; the caller updates the target branch.
 */
import { ApiError } from '../core/errors.js';
import type { GitRepository } from '../git/repository.js';
import type { ProjectSettings } from '../projects/project-settings.js';
import { mergeCommitMessage, squashCommitMessage, type MessageFacts } from './commit-messages.js';

export const branchCannotBeMerged = () => new ApiError(406, { message: 'Branch cannot be merged' });

type Identity = { name: string; email: string };

export interface MergeInput {
  git: GitRepository;
  settings: ProjectSettings;
  /** The target branch's head and the source's head. */
  target: string;
  head: string;
  /** Their merge base, null for unrelated histories. */
  base: string | null;
  facts: MessageFacts;
  squash: boolean;
  author: Identity;
  committer: Identity;
  messages: { merge_commit_message?: string; squash_commit_message?: string };
}

/** The commits a merge writes, and the target branch's new head. */
export interface MergeCommits {
  newTarget: string;
  mergeCommitSha: string | null;
  squashCommitSha: string | null;
}

export async function writeMergeCommits(input: MergeInput): Promise<MergeCommits> {
  const { tip, squashCommitSha } = input.squash
    ? await squashCommit(input)
    : { tip: input.head, squashCommitSha: null };
  if (input.settings.merge_method === 'ff') return { newTarget: tip, mergeCommitSha: null, squashCommitSha };
  const mergeCommitSha = await mergeCommit(input, tip);
  return { newTarget: mergeCommitSha, mergeCommitSha, squashCommitSha };
}

/**
 * The squash commit: the head's tree on the merge base, authored by the merge request's author. One
 * commit whose message would not change is kept as it is, as GitLab does.
 */
async function squashCommit(input: MergeInput): Promise<{ tip: string; squashCommitSha: string }> {
  const { git, head, base, facts } = input;
  const commits = facts.commits;
  const message =
    input.messages.squash_commit_message ?? squashCommitMessage(input.settings.squash_commit_template, facts);
  const single = commits.length === 1 && commits[0].message.trimEnd() === message.trimEnd();
  let tip = head;
  if (!single && commits.length > 0) {
    tip = await git.writeCommit({
      tree: await git.treeOf(head),
      parents: base ? [base] : [],
      message,
      author: input.author,
      committer: input.committer,
    });
  }
  return { tip, squashCommitSha: tip };
}

/** The merge commit of the target and `tip`, by the merger. */
async function mergeCommit(input: MergeInput, tip: string): Promise<string> {
  const { git, target, committer } = input;
  const tree = await git.mergedTree(target, tip);
  if (!tree) throw branchCannotBeMerged();
  return git.writeCommit({
    tree,
    parents: [target, tip],
    message:
      input.messages.merge_commit_message ??
      mergeCommitMessage(input.settings.merge_commit_template, input.facts),
    author: committer,
    committer,
  });
}

/**
 * What project lists show about a repository (empty or not, its README, commit count and size), read
 * from git after every change and stored (src/repository/repository-state-record.ts), so that a page of
 * projects never asks git once per project. Git is read outside a database transaction, never in it.
 */
import crypto from 'node:crypto';
import { repositorySize } from './object-counts.js';
import { readRefs } from './ref-store.js';

/** GitLab prefers a README with a markup it renders over a plain one. */
const README = /^readme(\.(md|markdown|mdown|mkd|rst|adoc|asciidoc|org|textile|txt|rdoc))?$/i;

export interface RepositoryState {
  empty: boolean;
  readmePath: string | null;
  commitCount: number;
  sizeBytes: number;
  /** A digest of every ref and its target when the reading began: a changed digest means a stale reading. */
  refs: string;
}

/** A digest of the refs: compared with a later one, it tells whether any ref moved meanwhile. */
export const digestRefs = (refs: Array<{ ref: string; sha: string }>) =>
  crypto
    .createHash('sha256')
    .update(refs.map((r) => `${r.sha} ${r.ref}`).join('\n'))
    .digest('hex');

/** What the state needs read from git objects: through the repository's long-lived readers, not a process each. */
export interface StateReads {
  rootNames(commit: string): Promise<string[]>;
  commitCount(commit: string): Promise<number>;
}

export async function readRepositoryState(
  gitDir: string,
  defaultBranch: string | null,
  reads: StateReads,
): Promise<RepositoryState> {
  const refs = await readRefs(gitDir);
  let readmePath: string | null = null;
  let commitCount = 0;
  const head = defaultBranch ? refs.find((r) => r.ref === `refs/heads/${defaultBranch}`) : undefined;
  if (head) {
    const readmes = (await reads.rootNames(head.sha)).filter((name) => README.test(name));
    readmePath = readmes.find((name) => name.includes('.')) ?? readmes[0] ?? null;
    commitCount = await reads.commitCount(head.sha);
  }
  return {
    empty: refs.length === 0,
    readmePath,
    commitCount,
    sizeBytes: await repositorySize(gitDir),
    refs: digestRefs(refs),
  };
}

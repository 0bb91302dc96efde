import type { components } from '../../generated/openapi.js';
import { presentCommit } from '../commits/commit.presenter.js';
import type { FileDiff } from '../git/diffs.js';
import type { Comparison } from './repository.service.js';

export type CompareJson = components['schemas']['Compare'];
export type DiffJson = components['schemas']['Diff'];

/** GitLab's unidiff: the `---`/`+++` lines in front of the hunks; notices and empty diffs stay as they are. */
function unidiff(diff: FileDiff): string {
  if (diff.diff === '' || diff.diff.startsWith('Binary files ')) return diff.diff;
  const oldHeader = diff.newFile ? '/dev/null' : `a/${diff.oldPath}`;
  const newHeader = diff.deletedFile ? '/dev/null' : `b/${diff.newPath}`;
  return `--- ${oldHeader}\n+++ ${newHeader}\n${diff.diff}`;
}

export function presentDiff(diff: FileDiff, options: { unidiff: boolean; generated: boolean }): DiffJson {
  return {
    diff: options.unidiff ? unidiff(diff) : diff.diff,
    new_path: diff.newPath,
    old_path: diff.oldPath,
    a_mode: diff.aMode,
    b_mode: diff.bMode,
    new_file: diff.newFile,
    renamed_file: diff.renamedFile,
    deleted_file: diff.deletedFile,
    generated_file: options.generated,
  };
}

export function presentCompare(
  comparison: Comparison,
  projectWebUrl: string,
  unidiffFormat: boolean,
): CompareJson {
  const commits = comparison.commits.map((commit) => presentCommit(commit, projectWebUrl));
  return {
    commit: commits[commits.length - 1] ?? null,
    commits,
    diffs: comparison.diffs.map((diff) =>
      presentDiff(diff, { unidiff: unidiffFormat, generated: comparison.generated.has(diff.newPath) }),
    ),
    compare_timeout: comparison.overflow,
    compare_same_ref: comparison.same,
    web_url: `${projectWebUrl}/-/compare/${comparison.fromSha}...${comparison.toSha}`,
  };
}

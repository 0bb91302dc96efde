/** The whole merge request flow through the real clients: comment, resolve, rebase and merge. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });

async function world() {
  const { project, owner } = await server.factories.ownedProjectWithReadme();
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  return { project, owner, maintainer, developer };
}

const status = (code: number) => ({ cause: { response: { status: code } } });

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('@gitbeaker/rest', () => {
  it('comments, resolves a thread, rebases and merges with squash', async () => {
    const w = await world();
    const dev = new Gitlab({ host: server.url, token: w.developer.token });
    const maintainer = new Gitlab({ host: server.url, token: w.maintainer.token });
    await dev.Commits.create(
      w.project.id,
      'gb/feature',
      'First',
      [{ action: 'create', filePath: 'one.txt', content: '1\n' }],
      { startBranch: 'main' },
    );
    await dev.Commits.create(w.project.id, 'gb/feature', 'Second', [
      { action: 'create', filePath: 'two.txt', content: '2\n' },
    ]);
    await maintainer.Commits.create(w.project.id, 'main', 'Meanwhile', [
      { action: 'create', filePath: 'main.txt', content: 'm\n' },
    ]);
    const mr = await dev.MergeRequests.create(w.project.id, 'gb/feature', 'main', 'Add two files');
    await dev.MergeRequestNotes.create(w.project.id, mr.iid, 'Ready for review');
    const thread = await maintainer.MergeRequestDiscussions.create(w.project.id, mr.iid, 'Why two?');
    await dev.MergeRequestDiscussions.resolve(w.project.id, mr.iid, thread.id as string, true);

    // A Developer may not merge into the protected main; the rebase is theirs to ask for.
    await expect(dev.MergeRequests.accept(w.project.id, mr.iid)).rejects.toMatchObject(status(401));
    expect(await dev.MergeRequests.rebase(w.project.id, mr.iid)).toEqual({ rebase_in_progress: true });
    const rebased = await until(
      () => dev.MergeRequests.show(w.project.id, mr.iid),
      (shown) => shown.rebase_in_progress === false && shown.merge_status === 'can_be_merged',
    );
    expect(rebased.diverged_commits_count).toBe(0);

    const merged = await maintainer.MergeRequests.accept(w.project.id, mr.iid, {
      squash: true,
      shouldRemoveSourceBranch: true,
      sha: rebased.sha as string,
    });
    expect(merged).toMatchObject({ state: 'merged', merged_by: { id: w.maintainer.user.id } });
    const main = await maintainer.Commits.show(w.project.id, 'main');
    expect(main.id).toBe(merged.merge_commit_sha);
    expect(main.parent_ids).toEqual([rebased.diff_refs!.start_sha, merged.squash_commit_sha]);
    const branches = await until(
      () => maintainer.Branches.all(w.project.id),
      (list) => !list.some((branch) => branch.name === 'gb/feature'),
    );
    expect(branches.map((branch) => branch.name)).toEqual(['main']);
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)('merges as its functional tests do (needs Debian python3-gitlab)', async () => {
    const w = await world();
    const admin = await server.factories.user({ admin: true });
    const stdout = await runPythonClient('python_gitlab_merging.py', [
      server.url,
      w.maintainer.token,
      String(w.project.id),
      w.maintainer.user.username,
      admin.token,
    ]);
    expect(JSON.parse(stdout.trim())).toEqual({
      resolved: true,
      merge_ref_parents: true,
      rebase: { rebase_in_progress: true },
      queue_idle: true,
      branch_gone: ['GitlabGetError', 404],
      merged: ['merged', w.maintainer.user.username, true],
      main: [true, 2],
      merge_ref_refused: ['GitlabGetError', 400],
      merge_refused: ['GitlabMRClosedError', 406],
    });
  });
});

/** Merging merge requests for real: merge methods, squash, templates, refusals, merge refs and rebases. */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });

type Json = Record<string, unknown>;

/** A project with a README on main (protected: Maintainers merge), its owner, a Developer and a Reporter. */
async function world(settings: Json = {}) {
  const owner = await server.factories.user();
  const project = await server.factories.projectWithReadme({ owner });
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
  if (Object.keys(settings).length > 0) {
    const res = await server.request('PUT', `/projects/${project.id}`, {
      token: owner.token,
      json: settings,
    });
    expect(res.status, res.text).toBe(200);
  }
  return { owner, project, maintainer, developer, reporter };
}

async function commitFile(
  user: TestUser,
  project: Project,
  branch: string,
  path: string,
  content: string,
  options: { from?: string; message?: string; action?: string } = {},
): Promise<string> {
  const res = await server.request('POST', `/projects/${project.id}/repository/commits`, {
    token: user.token,
    json: {
      branch,
      ...(options.from ? { start_branch: options.from } : {}),
      commit_message: options.message ?? `Change ${path}`,
      actions: [{ action: options.action ?? 'create', file_path: path, content }],
    },
  });
  expect(res.status, res.text).toBe(201);
  return (res.body as Json).id as string;
}

async function openMr(user: TestUser, project: Project, branch: string, json: Json = {}): Promise<Json> {
  const res = await server.request('POST', `/projects/${project.id}/merge_requests`, {
    token: user.token,
    json: { source_branch: branch, target_branch: 'main', title: 'Add a feature', ...json },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as Json;
}

const merge = (user: TestUser, project: Project, iid: number, json: Json = {}) =>
  server.request('PUT', `/projects/${project.id}/merge_requests/${iid}/merge`, { token: user.token, json });

async function commit(user: TestUser, project: Project, ref: string): Promise<Json> {
  const res = await server.request(
    'GET',
    `/projects/${project.id}/repository/commits/${encodeURIComponent(ref)}`,
    { token: user.token },
  );
  expect(res.status, res.text).toBe(200);
  return res.body as Json;
}

const branchHead = async (user: TestUser, project: Project, branch: string) =>
  (await commit(user, project, branch)).id as string;

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const getMr = async (user: TestUser, project: Project, iid: number) =>
  (await server.request('GET', `/projects/${project.id}/merge_requests/${iid}`, { token: user.token }))
    .body as Json;

describe('merge methods', () => {
  it('writes a merge commit with the default message and marks the merge request merged', async () => {
    const w = await world();
    const head = await commitFile(w.developer, w.project, 'feature', 'feature.txt', 'new\n', {
      from: 'main',
    });
    await commitFile(w.owner, w.project, 'main', 'other.txt', 'meanwhile\n');
    const before = await branchHead(w.owner, w.project, 'main');
    const mr = await openMr(w.developer, w.project, 'feature', { title: 'Add the feature' });

    const res = await merge(w.maintainer, w.project, mr.iid as number, { sha: head });
    expect(res.status, res.text).toBe(200);
    const merged = res.body as Json;
    expect(merged).toMatchObject({
      state: 'merged',
      merged_by: { id: w.maintainer.user.id },
      merge_user: { id: w.maintainer.user.id },
      squash_commit_sha: null,
      detailed_merge_status: 'not_open',
    });
    expect(merged.merged_at).toEqual(expect.any(String));
    const main = await commit(w.owner, w.project, 'main');
    expect(merged.merge_commit_sha).toBe(main.id);
    expect(main.parent_ids).toEqual([before, head]);
    const fullPath = `${w.owner.user.username}/${w.project.path}`;
    expect(main.message).toBe(
      `Merge branch 'feature' into 'main'\n\nAdd the feature\n\nSee merge request ${fullPath}!1`,
    );
    expect(main.committer_email).toBe(w.maintainer.user.email);

    // A merged merge request cannot be merged again.
    expect((await merge(w.maintainer, w.project, 1)).status).toBe(405);
    // GitLab records the merge as a system note.
    const notes = await server.request('GET', `/projects/${w.project.id}/merge_requests/1/notes`, {
      token: w.owner.token,
    });
    await waitFor(
      async () =>
        (
          await server.request('GET', `/projects/${w.project.id}/merge_requests/1/notes`, {
            token: w.owner.token,
          })
        ).body as Json[],
      (list) => list.some((note) => note.system === true && note.body === 'merged'),
      'the merged system note',
    );
    expect(notes.status).toBe(200);
  });

  it.each([
    { method: 'ff', diverged: false, status: 200, mergeCommit: false },
    { method: 'ff', diverged: true, status: 405, mergeCommit: false },
    { method: 'rebase_merge', diverged: false, status: 200, mergeCommit: true },
    { method: 'rebase_merge', diverged: true, status: 405, mergeCommit: true },
    { method: 'merge', diverged: false, status: 200, mergeCommit: true },
  ])(
    'merge_method $method, diverged $diverged: $status',
    async ({ method, diverged, status, mergeCommit }) => {
      const w = await world({ merge_method: method });
      const head = await commitFile(w.developer, w.project, 'feature', 'feature.txt', 'new\n', {
        from: 'main',
      });
      if (diverged) await commitFile(w.owner, w.project, 'main', 'other.txt', 'meanwhile\n');
      const before = await branchHead(w.owner, w.project, 'main');
      const mr = await openMr(w.developer, w.project, 'feature');
      const res = await merge(w.owner, w.project, mr.iid as number);
      expect(res.status, res.text).toBe(status);
      const main = await commit(w.owner, w.project, 'main');
      if (status !== 200) {
        expect(res.body).toEqual({ message: '405 Method Not Allowed' });
        expect(main.id).toBe(before);
        expect((await getMr(w.owner, w.project, 1)).state).toBe('opened');
        return;
      }
      if (mergeCommit) {
        expect(main.parent_ids).toEqual([before, head]);
        expect((res.body as Json).merge_commit_sha).toBe(main.id);
      } else {
        expect(main.id).toBe(head);
        expect((res.body as Json).merge_commit_sha).toBeNull();
      }
    },
  );
});

describe('squash and templates', () => {
  it('squashes onto the merge base as the author, then merges the squash commit', async () => {
    const w = await world({ squash_option: 'always' });
    await commitFile(w.developer, w.project, 'feature', 'a.txt', 'a\n', { from: 'main' });
    const head = await commitFile(w.developer, w.project, 'feature', 'b.txt', 'b\n');
    const base = await branchHead(w.owner, w.project, 'main');
    await openMr(w.developer, w.project, 'feature', { title: 'Two files' });
    const res = await merge(w.owner, w.project, 1, { squash: false });
    expect(res.status, res.text).toBe(200);
    const merged = res.body as Json;
    expect(merged.squash_commit_sha).toEqual(expect.any(String));
    const squash = await commit(w.owner, w.project, merged.squash_commit_sha as string);
    expect(squash).toMatchObject({
      parent_ids: [base],
      message: 'Two files',
      author_email: w.developer.user.email,
      committer_email: w.owner.user.email,
    });
    const main = await commit(w.owner, w.project, 'main');
    expect(main.parent_ids).toEqual([base, squash.id]);
    // The squash commit holds the head's files.
    for (const path of ['a.txt', 'b.txt']) {
      const file = await server.request(
        'GET',
        `/projects/${w.project.id}/repository/files/${path}/raw?ref=${squash.id as string}`,
        { token: w.owner.token },
      );
      expect(file.status).toBe(200);
    }
    expect(head).not.toBe(squash.id);
  });

  it('fills the merge and squash commit templates, dropping empty variables with their blank lines', async () => {
    const w = await world({
      squash_option: 'default_on',
      merge_commit_template: '%{title}\n\n%{description}\n\nMerged-by: %{merged_by}\n%{approved_by}',
      squash_commit_template: '%{title} (%{local_reference})\n\n%{all_commits}',
    });
    await commitFile(w.developer, w.project, 'feature', 'a.txt', 'a\n', { from: 'main', message: 'First' });
    await commitFile(w.developer, w.project, 'feature', 'b.txt', 'b\n', { message: 'Second' });
    await openMr(w.developer, w.project, 'feature', { title: 'Templated', squash: true });
    const res = await merge(w.owner, w.project, 1);
    expect(res.status, res.text).toBe(200);
    const main = await commit(w.owner, w.project, 'main');
    expect(main.message).toBe(`Templated\n\nMerged-by: ${w.owner.user.name} <${w.owner.user.email}>`);
    const squash = await commit(w.owner, w.project, (res.body as Json).squash_commit_sha as string);
    expect(squash.message).toBe('Templated (!1)\n\n* First\n\n* Second');
  });

  it('takes the messages given with the merge', async () => {
    const w = await world();
    await commitFile(w.developer, w.project, 'feature', 'a.txt', 'a\n', { from: 'main' });
    await commitFile(w.developer, w.project, 'feature', 'b.txt', 'b\n');
    await openMr(w.developer, w.project, 'feature');
    const res = await merge(w.owner, w.project, 1, {
      squash: true,
      squash_commit_message: 'All in one',
      merge_commit_message: 'Merged by hand',
    });
    expect(res.status, res.text).toBe(200);
    expect((await commit(w.owner, w.project, 'main')).message).toBe('Merged by hand');
    expect((res.body as Json).squash).toBe(true);
    const squash = await commit(w.owner, w.project, (res.body as Json).squash_commit_sha as string);
    expect(squash.message).toBe('All in one');
  });
});

describe('refusals move nothing', () => {
  it('answers 401 to a Developer when Maintainers merge into main, and merges for a Maintainer', async () => {
    const w = await world();
    await commitFile(w.developer, w.project, 'feature', 'a.txt', 'a\n', { from: 'main' });
    const before = await branchHead(w.owner, w.project, 'main');
    await openMr(w.developer, w.project, 'feature');
    for (const user of [w.developer, w.reporter]) {
      const res = await merge(user, w.project, 1);
      expect(res.status, res.text).toBe(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
    }
    expect(await branchHead(w.owner, w.project, 'main')).toBe(before);
    expect((await getMr(w.developer, w.project, 1)).state).toBe('opened');

    // Protection by user: the Developer named in the merge levels may merge.
    await server.request('DELETE', `/projects/${w.project.id}/protected_branches/main`, {
      token: w.owner.token,
    });
    const protect = await server.request('POST', `/projects/${w.project.id}/protected_branches`, {
      token: w.owner.token,
      json: { name: 'main', push_access_level: 40, allowed_to_merge: [{ user_id: w.developer.user.id }] },
    });
    expect(protect.status, protect.text).toBe(201);
    expect((await merge(w.developer, w.project, 1)).status).toBe(200);
  });

  it.each([
    {
      name: 'a draft',
      setup: async (w: Awaited<ReturnType<typeof world>>) =>
        server.request('PUT', `/projects/${w.project.id}/merge_requests/1`, {
          token: w.owner.token,
          json: { title: 'Draft: not yet' },
        }),
      status: 405,
      message: '405 Method Not Allowed',
    },
    {
      name: 'a closed one',
      setup: async (w: Awaited<ReturnType<typeof world>>) =>
        server.request('PUT', `/projects/${w.project.id}/merge_requests/1`, {
          token: w.owner.token,
          json: { state_event: 'close' },
        }),
      status: 405,
      message: '405 Method Not Allowed',
    },
    {
      name: 'one with conflicts',
      setup: async (w: Awaited<ReturnType<typeof world>>) =>
        commitFile(w.owner, w.project, 'main', 'a.txt', 'other\n'),
      status: 406,
      message: 'Branch cannot be merged',
    },
    {
      name: 'one to merge later',
      setup: async (w: Awaited<ReturnType<typeof world>>) =>
        server.request('PUT', `/projects/${w.project.id}/merge_requests/1`, {
          token: w.owner.token,
          json: { merge_after: new Date(Date.now() + 86_400_000).toISOString() },
        }),
      status: 405,
      message: '405 Method Not Allowed',
    },
    {
      name: 'one with an unresolved thread when threads must be resolved',
      setup: async (w: Awaited<ReturnType<typeof world>>) => {
        await server.request('PUT', `/projects/${w.project.id}`, {
          token: w.owner.token,
          json: { only_allow_merge_if_all_discussions_are_resolved: true },
        });
        return server.request('POST', `/projects/${w.project.id}/merge_requests/1/discussions`, {
          token: w.owner.token,
          json: { body: 'Please explain' },
        });
      },
      status: 405,
      message: '405 Method Not Allowed',
    },
    {
      name: 'a stale sha',
      setup: async () => undefined,
      sha: 'f'.repeat(40),
      status: 409,
      message: 'SHA does not match HEAD of source branch: <head>',
    },
  ])('refuses $name with $status', async ({ setup, status, message, sha }) => {
    const w = await world();
    const head = await commitFile(w.developer, w.project, 'feature', 'a.txt', 'a\n', { from: 'main' });
    await openMr(w.developer, w.project, 'feature');
    await setup(w);
    const before = await branchHead(w.owner, w.project, 'main');
    const res = await merge(w.owner, w.project, 1, sha ? { sha } : {});
    expect(res.status, res.text).toBe(status);
    expect(res.body).toEqual({ message: message.replace('<head>', head) });
    expect(await branchHead(w.owner, w.project, 'main')).toBe(before);
    expect((await getMr(w.owner, w.project, 1)).merged_at).toBeNull();
  });
});

describe('after the merge', () => {
  it('removes the source branch when asked, on the queue', async () => {
    const w = await world();
    await commitFile(w.developer, w.project, 'feature', 'a.txt', 'a\n', { from: 'main' });
    await commitFile(w.developer, w.project, 'kept', 'k.txt', 'k\n', { from: 'main' });
    await openMr(w.developer, w.project, 'feature');
    await openMr(w.developer, w.project, 'kept', { remove_source_branch: false });
    expect((await merge(w.owner, w.project, 1, { should_remove_source_branch: true })).status).toBe(200);
    expect((await merge(w.owner, w.project, 2)).status).toBe(200);
    await waitFor(
      () =>
        server.request('GET', `/projects/${w.project.id}/repository/branches/feature`, {
          token: w.owner.token,
        }),
      (res) => res.status === 404,
      'the source branch to go',
    );
    const kept = await server.request('GET', `/projects/${w.project.id}/repository/branches/kept`, {
      token: w.owner.token,
    });
    expect(kept.status).toBe(200);
  });

  it('marks other open merge requests into the branch for a new check', async () => {
    const w = await world();
    await commitFile(w.developer, w.project, 'one', 'same.txt', 'one\n', { from: 'main' });
    await commitFile(w.developer, w.project, 'two', 'same.txt', 'two\n', { from: 'main' });
    await openMr(w.developer, w.project, 'one');
    await openMr(w.developer, w.project, 'two');
    expect((await merge(w.owner, w.project, 1)).status).toBe(200);
    const second = await waitFor(
      () => getMr(w.owner, w.project, 2),
      (mr) => mr.merge_status === 'cannot_be_merged',
      'the conflict to show',
    );
    expect(second.has_conflicts).toBe(true);
    expect((await merge(w.owner, w.project, 2)).status).toBe(406);
  });
});

describe('merge ref', () => {
  it('keeps the merge commit at refs/merge-requests/:iid/merge, made again only when a head moves', async () => {
    const w = await world();
    const head = await commitFile(w.developer, w.project, 'feature', 'a.txt', 'a\n', { from: 'main' });
    const main = await branchHead(w.owner, w.project, 'main');
    await openMr(w.developer, w.project, 'feature');
    const path = `/projects/${w.project.id}/merge_requests/1/merge_ref`;
    const first = await server.request('GET', path, { token: w.reporter.token });
    expect(first.status, first.text).toBe(200);
    const commitId = (first.body as Json).commit_id as string;
    expect((await commit(w.owner, w.project, commitId)).parent_ids).toEqual([main, head]);
    expect((await commit(w.owner, w.project, 'refs/merge-requests/1/merge')).id).toBe(commitId);
    expect(((await server.request('GET', path, { token: w.reporter.token })).body as Json).commit_id).toBe(
      commitId,
    );

    const moved = await commitFile(w.owner, w.project, 'main', 'b.txt', 'b\n');
    const again = (await server.request('GET', path, { token: w.reporter.token })).body as Json;
    expect((await commit(w.owner, w.project, again.commit_id as string)).parent_ids).toEqual([moved, head]);
    // The target branch did not move.
    expect(await branchHead(w.owner, w.project, 'main')).toBe(moved);

    await commitFile(w.owner, w.project, 'main', 'a.txt', 'conflict\n');
    const refused = await server.request('GET', path, { token: w.reporter.token });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ message: 'Merge request is not mergeable' });
  });
});

describe('rebase', () => {
  it('rebases the source branch on the queue, reporting rebase_in_progress, then merges in semi-linear mode', async () => {
    const w = await world({ merge_method: 'rebase_merge' });
    await commitFile(w.developer, w.project, 'feature', 'a.txt', 'a\n', { from: 'main', message: 'Add a' });
    const main = await commitFile(w.owner, w.project, 'main', 'b.txt', 'b\n');
    await openMr(w.developer, w.project, 'feature');
    await waitFor(
      () => getMr(w.owner, w.project, 1),
      (mr) => mr.detailed_merge_status === 'need_rebase',
      'need_rebase',
    );
    expect((await merge(w.owner, w.project, 1)).status).toBe(405);

    const res = await server.request('PUT', `/projects/${w.project.id}/merge_requests/1/rebase`, {
      token: w.developer.token,
    });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({ rebase_in_progress: true });
    const done = await waitFor(
      () => getMr(w.developer, w.project, 1),
      (mr) => mr.rebase_in_progress === false && mr.detailed_merge_status === 'mergeable',
      'the rebase',
    );
    expect(done.merge_error).toBeNull();
    const rebased = await commit(w.owner, w.project, 'feature');
    expect(rebased).toMatchObject({
      parent_ids: [main],
      message: 'Add a',
      author_email: w.developer.user.email,
      committer_email: w.developer.user.email,
    });
    expect(done.sha).toBe(rebased.id);
    const versions = await server.request('GET', `/projects/${w.project.id}/merge_requests/1/versions`, {
      token: w.owner.token,
    });
    expect((versions.body as Json[]).length).toBe(2);

    const merged = await merge(w.owner, w.project, 1);
    expect(merged.status, merged.text).toBe(200);
    expect((await commit(w.owner, w.project, 'main')).parent_ids).toEqual([main, rebased.id]);
  });

  it('records a failed rebase in merge_error and moves nothing', async () => {
    const w = await world();
    const head = await commitFile(w.developer, w.project, 'feature', 'a.txt', 'a\n', { from: 'main' });
    await commitFile(w.owner, w.project, 'main', 'a.txt', 'other\n');
    await openMr(w.developer, w.project, 'feature');
    const res = await server.request('PUT', `/projects/${w.project.id}/merge_requests/1/rebase`, {
      token: w.developer.token,
    });
    expect(res.status).toBe(202);
    const done = await waitFor(
      () => getMr(w.developer, w.project, 1),
      (mr) => mr.rebase_in_progress === false,
      'the rebase',
    );
    expect(done.merge_error).toBe(
      'Rebase failed: Rebase locally, resolve all conflicts, then push the branch.',
    );
    expect(await branchHead(w.owner, w.project, 'feature')).toBe(head);
  });

  it('refuses callers who cannot push to the source branch', async () => {
    const w = await world();
    await commitFile(w.developer, w.project, 'feature', 'a.txt', 'a\n', { from: 'main' });
    await openMr(w.developer, w.project, 'feature');
    const reporter = await server.request('PUT', `/projects/${w.project.id}/merge_requests/1/rebase`, {
      token: w.reporter.token,
    });
    expect(reporter.status).toBe(403);
    await server.request('POST', `/projects/${w.project.id}/protected_branches`, {
      token: w.owner.token,
      json: { name: 'feature', push_access_level: 40 },
    });
    const developer = await server.request('PUT', `/projects/${w.project.id}/merge_requests/1/rebase`, {
      token: w.developer.token,
    });
    expect(developer.status).toBe(403);
    expect(developer.body).toEqual({ message: '403 Forbidden - Cannot push to source branch' });
  });
});

describe('automatic merge', () => {
  const setAuto = (w: Awaited<ReturnType<typeof world>>, json: Json = {}) =>
    merge(w.owner, w.project, 1, { auto_merge: true, ...json });

  it('waits for a draft to become ready, then merges as the user who set it', async () => {
    const w = await world();
    await commitFile(w.developer, w.project, 'feature', 'a.txt', 'a\n', { from: 'main' });
    const before = await branchHead(w.owner, w.project, 'main');
    await openMr(w.developer, w.project, 'feature', { title: 'Draft: Add a' });
    const res = await setAuto(w, { should_remove_source_branch: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      state: 'opened',
      merge_when_pipeline_succeeds: true,
      merge_user: { id: w.owner.user.id },
      merged_by: null,
    });
    expect(await branchHead(w.owner, w.project, 'main')).toBe(before);

    await server.request('PUT', `/projects/${w.project.id}/merge_requests/1`, {
      token: w.developer.token,
      json: { title: 'Add a' },
    });
    const merged = await waitFor(
      () => getMr(w.owner, w.project, 1),
      (mr) => mr.state === 'merged',
      'the automatic merge',
    );
    expect(merged).toMatchObject({ merged_by: { id: w.owner.user.id }, merge_when_pipeline_succeeds: false });
    expect((await commit(w.owner, w.project, 'main')).parent_ids).toEqual([before, merged.sha]);
    await waitFor(
      () =>
        server.request('GET', `/projects/${w.project.id}/repository/branches/feature`, {
          token: w.owner.token,
        }),
      (branch) => branch.status === 404,
      'the source branch to go',
    );
  });

  it('merges when the last thread is resolved, where threads must be resolved', async () => {
    const w = await world({ only_allow_merge_if_all_discussions_are_resolved: true });
    await commitFile(w.developer, w.project, 'feature', 'a.txt', 'a\n', { from: 'main' });
    await openMr(w.developer, w.project, 'feature');
    const thread = await server.request('POST', `/projects/${w.project.id}/merge_requests/1/discussions`, {
      token: w.owner.token,
      json: { body: 'Why?' },
    });
    expect((await setAuto(w)).status).toBe(200);
    await server.request(
      'PUT',
      `/projects/${w.project.id}/merge_requests/1/discussions/${(thread.body as Json).id as string}`,
      {
        token: w.developer.token,
        json: { resolved: true },
      },
    );
    await waitFor(
      () => getMr(w.owner, w.project, 1),
      (mr) => mr.state === 'merged',
      'the automatic merge',
    );
  });

  it('merges at merge_after', async () => {
    const w = await world();
    await commitFile(w.developer, w.project, 'feature', 'a.txt', 'a\n', { from: 'main' });
    const at = new Date(Date.now() + 3000);
    await openMr(w.developer, w.project, 'feature', { merge_after: at.toISOString() });
    expect((await setAuto(w)).status).toBe(200);
    const merged = await waitFor(
      () => getMr(w.owner, w.project, 1),
      (mr) => mr.state === 'merged',
      'the merge at merge_after',
    );
    expect(Date.parse(merged.merged_at as string)).toBeGreaterThanOrEqual(at.getTime() - 1000);
  });

  it('is cancelled by a new head, and by the cancel endpoint', async () => {
    const w = await world();
    await commitFile(w.developer, w.project, 'feature', 'a.txt', 'a\n', { from: 'main' });
    await openMr(w.developer, w.project, 'feature', { title: 'Draft: wait' });
    const cancel = (user: TestUser) =>
      server.request(
        'POST',
        `/projects/${w.project.id}/merge_requests/1/cancel_merge_when_pipeline_succeeds`,
        {
          token: user.token,
        },
      );
    const none = await cancel(w.owner);
    expect(none.status).toBe(406);
    expect(none.body).toEqual({ message: "Can't cancel the automatic merge" });

    expect((await setAuto(w)).status).toBe(200);
    expect((await cancel(w.developer)).status).toBe(401);
    const cancelled = await cancel(w.owner);
    expect(cancelled.status, cancelled.text).toBe(201);
    expect(cancelled.body).toMatchObject({ merge_when_pipeline_succeeds: false, merge_user: null });

    // Set again, then a push: the automatic merge was for the old head, so it is dropped, not merged.
    expect((await setAuto(w)).status).toBe(200);
    await commitFile(w.developer, w.project, 'feature', 'b.txt', 'b\n');
    await server.request('PUT', `/projects/${w.project.id}/merge_requests/1`, {
      token: w.developer.token,
      json: { title: 'Ready' },
    });
    const dropped = await waitFor(
      () => getMr(w.owner, w.project, 1),
      (mr) => mr.merge_when_pipeline_succeeds === false,
      'the automatic merge to be dropped',
    );
    expect(dropped.state).toBe('opened');

    await server.request('PUT', `/projects/${w.project.id}/merge_requests/1`, {
      token: w.owner.token,
      json: { state_event: 'close' },
    });
    expect((await cancel(w.owner)).status).toBe(405);
  });
});

/**
 * Merge requests from a fork into its upstream: the target chosen as GitLab does, the fork's commits
 * fetched into the upstream's repository, pushes to the fork moving them along, and collaboration
 * (`allow_collaboration`) letting the upstream's maintainers push to the fork's branch.
 */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { TestUser } from '../helpers/factories.js';
import { remoteUrl, useGitWorkDir } from '../helpers/git-cli.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });
const { gitCli, work } = useGitWorkDir('forge-fork-mr-');

type Json = Record<string, unknown>;
interface ProjectJson extends Json {
  id: number;
  path_with_namespace: string;
}

/** A public upstream with a README on main, its owner, a Developer, and a fork of it by a contributor. */
async function world(options: { visibility?: string; forkJson?: Json } = {}) {
  const owner = await server.factories.user();
  const created = await server.request('POST', '/projects', {
    token: owner.token,
    json: {
      name: `up-${Math.random().toString(36).slice(2, 8)}`,
      initialize_with_readme: true,
      visibility: options.visibility ?? 'public',
    },
  });
  expect(created.status, created.text).toBe(201);
  const upstream = created.body as ProjectJson;
  const developer = await server.factories.user();
  await member(owner, upstream.id, developer, AccessLevel.Developer);
  const contributor = await server.factories.user();
  // A private upstream is forked by its members only.
  if (options.visibility === 'private') await member(owner, upstream.id, contributor, AccessLevel.Reporter);
  const forked = await server.request('POST', `/projects/${upstream.id}/fork`, {
    token: contributor.token,
    json: options.forkJson ?? {},
  });
  expect(forked.status, forked.text).toBe(201);
  return { owner, upstream, developer, contributor, fork: forked.body as ProjectJson };
}

async function member(admin: TestUser, projectId: number, user: TestUser, level: number) {
  const res = await server.request('POST', `/projects/${projectId}/members`, {
    token: admin.token,
    json: { user_id: user.user.id, access_level: level },
  });
  expect(res.status, res.text).toBe(201);
}

async function commitFile(token: string, projectId: number, branch: string, path: string, from?: string) {
  const res = await server.request('POST', `/projects/${projectId}/repository/commits`, {
    token,
    json: {
      branch,
      ...(from ? { start_branch: from } : {}),
      commit_message: `Change ${path}`,
      actions: [{ action: 'create', file_path: path, content: `${path}\n` }],
    },
  });
  return res;
}

async function committed(token: string, projectId: number, branch: string, path: string, from?: string) {
  const res = await commitFile(token, projectId, branch, path, from);
  expect(res.status, res.text).toBe(201);
  return (res.body as Json).id as string;
}

const createMr = (token: string, projectId: number, json: Json) =>
  server.request('POST', `/projects/${projectId}/merge_requests`, { token, json });

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A fork merge request: a branch `feature` in the fork with one new file, into the upstream's main. */
async function forkMr(w: Awaited<ReturnType<typeof world>>, json: Json = {}) {
  const sha = await committed(w.contributor.token, w.fork.id, 'feature', 'feature.txt', 'main');
  const res = await createMr(w.contributor.token, w.fork.id, {
    source_branch: 'feature',
    target_branch: 'main',
    target_project_id: w.upstream.id,
    title: 'Add a feature',
    ...json,
  });
  expect(res.status, res.text).toBe(201);
  return { sha, mr: res.body as Json };
}

describe('creating a merge request from a fork', () => {
  it('belongs to the upstream, with the fork as its source, diffs, commits and a head ref there', async () => {
    const w = await world();
    const { sha, mr } = await forkMr(w);
    expect(mr).toMatchObject({
      iid: 1,
      project_id: w.upstream.id,
      target_project_id: w.upstream.id,
      source_project_id: w.fork.id,
      source_branch: 'feature',
      target_branch: 'main',
      sha,
      allow_collaboration: false,
      allow_maintainer_to_push: false,
      references: { short: '!1', full: `${w.upstream.path_with_namespace}!1` },
      web_url: `${server.url}/${w.upstream.path_with_namespace}/-/merge_requests/1`,
      changes_count: '1',
      diff_refs: { head_sha: sha },
    });
    // Listed in the upstream, not in the fork.
    const upstreamList = await server.request('GET', `/projects/${w.upstream.id}/merge_requests`, {
      token: w.owner.token,
    });
    expect((upstreamList.body as Json[]).map((m) => m.iid)).toEqual([1]);
    const forkList = await server.request('GET', `/projects/${w.fork.id}/merge_requests`, {
      token: w.contributor.token,
    });
    expect(forkList.body).toEqual([]);

    const base = `/projects/${w.upstream.id}/merge_requests/1`;
    const commits = await server.request('GET', `${base}/commits`, { token: w.owner.token });
    expect(commits.status).toBe(200);
    expect((commits.body as Json[]).map((c) => c.id)).toEqual([sha]);
    const diffs = await server.request('GET', `${base}/diffs`, { token: w.owner.token });
    expect((diffs.body as Json[]).map((d) => d.new_path)).toEqual(['feature.txt']);
    const changes = await server.request('GET', `${base}/changes`, { token: w.owner.token });
    expect(changes.status).toBe(200);
    expect((changes.body as { changes: Json[] }).changes.map((d) => d.new_path)).toEqual(['feature.txt']);
    const versions = await server.request('GET', `${base}/versions`, { token: w.owner.token });
    expect((versions.body as Json[]).map((v) => v.head_commit_sha)).toEqual([sha]);

    // The merge status check runs in the upstream, where the fork's commits now are.
    const checked = await waitFor(
      async () => (await server.request('GET', base, { token: w.owner.token })).body as Json,
      (m) => m.merge_status === 'can_be_merged',
      'the merge status check',
    );
    expect(checked.detailed_merge_status).toBe('mergeable');

    // `git fetch` of the head ref from the upstream works: the objects are there.
    const repo = `${work}/fetch-${w.upstream.id}`;
    expect((await gitCli(['init', '-q', repo])).ok).toBe(true);
    const fetched = await gitCli(
      [
        'fetch',
        '-q',
        remoteUrl(server.url, w.upstream.path_with_namespace, w.owner.token),
        'refs/merge-requests/1/head:refs/mr/1',
      ],
      repo,
    );
    expect(fetched.ok, fetched.stderr).toBe(true);
    expect((await gitCli(['rev-parse', 'refs/mr/1'], repo)).stdout.trim()).toBe(sha);
    expect((await gitCli(['cat-file', '-p', `${sha}:feature.txt`], repo)).stdout).toBe('feature.txt\n');
  });

  it('targets the upstream when target_project_id is left out, unless the fork sets mr_default_target_self', async () => {
    const w = await world();
    await committed(w.contributor.token, w.fork.id, 'topic', 'topic.txt', 'main');
    const res = await createMr(w.contributor.token, w.fork.id, {
      source_branch: 'topic',
      target_branch: 'main',
      title: 'Default target',
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ project_id: w.upstream.id, source_project_id: w.fork.id });
    // A target_project_id naming no project the caller may use falls back to that default, as in GitLab.
    await committed(w.contributor.token, w.fork.id, 'topic2', 'topic2.txt', 'main');
    const unknown = await createMr(w.contributor.token, w.fork.id, {
      source_branch: 'topic2',
      target_branch: 'main',
      target_project_id: 2147483647,
      title: 'Unknown target',
    });
    expect(unknown.status, unknown.text).toBe(201);
    expect(unknown.body).toMatchObject({ project_id: w.upstream.id, iid: 2 });

    const own = await world({ forkJson: { mr_default_target_self: true } });
    await committed(own.contributor.token, own.fork.id, 'topic', 'topic.txt', 'main');
    const self = await createMr(own.contributor.token, own.fork.id, {
      source_branch: 'topic',
      target_branch: 'main',
      title: 'Into the fork',
    });
    expect(self.status, self.text).toBe(201);
    expect(self.body).toMatchObject({ project_id: own.fork.id, source_project_id: own.fork.id });
    expect(self.body).not.toHaveProperty('allow_collaboration');
  });

  it('refuses a target outside the fork network, and a second open merge request for the same branches', async () => {
    const w = await world();
    const { mr } = await forkMr(w);
    const again = await createMr(w.contributor.token, w.fork.id, {
      source_branch: 'feature',
      target_branch: 'main',
      target_project_id: w.upstream.id,
      title: 'Again',
    });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      message: [`Another open merge request already exists for this source branch: !${mr.iid as number}`],
    });
    // The same branches within the fork are another pair.
    const inFork = await createMr(w.contributor.token, w.fork.id, {
      source_branch: 'feature',
      target_branch: 'main',
      target_project_id: w.fork.id,
      title: 'Within the fork',
    });
    expect(inFork.status, inFork.text).toBe(201);
    expect(inFork.body).toMatchObject({ project_id: w.fork.id, iid: 1 });

    // A project of the contributor's that is no fork of the upstream.
    const stranger = await server.request('POST', '/projects', {
      token: w.contributor.token,
      json: { name: `other-${w.fork.id}`, initialize_with_readme: true, visibility: 'public' },
    });
    const other = stranger.body as ProjectJson;
    const outside = await createMr(w.contributor.token, w.fork.id, {
      source_branch: 'feature',
      target_branch: 'main',
      target_project_id: other.id,
      title: 'Elsewhere',
    });
    expect(outside.status).toBe(422);
    expect(outside.body).toEqual({ message: ['Source project is not a fork of the target project'] });

    // A branch missing in the target is reported as such; the same name is fine across projects.
    const missing = await createMr(w.contributor.token, w.fork.id, {
      source_branch: 'feature',
      target_branch: 'nope',
      target_project_id: w.upstream.id,
      title: 'Missing',
    });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: { target_branch: ['does not exist'] } });
    await committed(w.contributor.token, w.fork.id, 'main', 'fork-main.txt');
    const mainToMain = await createMr(w.contributor.token, w.fork.id, {
      source_branch: 'main',
      target_branch: 'main',
      target_project_id: w.upstream.id,
      title: 'Main into main',
    });
    expect(mainToMain.status, mainToMain.text).toBe(201);

    // Only those who may push to the fork open merge requests from it.
    const outsider = await server.factories.user();
    const refused = await createMr(outsider.token, w.fork.id, {
      source_branch: 'feature',
      target_branch: 'main',
      target_project_id: w.upstream.id,
      title: 'Not mine',
    });
    expect(refused.status).toBe(403);
  });
});

describe('archived projects', () => {
  it('open no merge requests from an archived fork; an archived upstream is no target', async () => {
    const w = await world();
    await committed(w.contributor.token, w.fork.id, 'feature', 'feature.txt', 'main');
    const archived = await server.request('POST', `/projects/${w.upstream.id}/archive`, {
      token: w.owner.token,
    });
    expect(archived.status).toBe(201);
    // GitLab falls back to the source itself when the named target is refused.
    const fallback = await createMr(w.contributor.token, w.fork.id, {
      source_branch: 'feature',
      target_branch: 'main',
      target_project_id: w.upstream.id,
      title: 'Into an archived upstream',
    });
    expect(fallback.status, fallback.text).toBe(201);
    expect(fallback.body).toMatchObject({ project_id: w.fork.id });
    await server.request('POST', `/projects/${w.fork.id}/archive`, { token: w.contributor.token });
    const refused = await createMr(w.contributor.token, w.fork.id, {
      source_branch: 'feature',
      target_branch: 'main',
      target_project_id: w.fork.id,
      title: 'From an archived fork',
    });
    expect(refused.status).toBe(403);
  });
});

describe('pushes to the fork', () => {
  it('give the upstream merge request a new version and move its head ref', async () => {
    const w = await world();
    const { sha } = await forkMr(w);
    const base = `/projects/${w.upstream.id}/merge_requests/1`;
    const pushed = await committed(w.contributor.token, w.fork.id, 'feature', 'more.txt');
    expect(pushed).not.toBe(sha);
    const mr = await waitFor(
      async () => (await server.request('GET', base, { token: w.owner.token })).body as Json,
      (m) => m.sha === pushed,
      'the refresh after the push to the fork',
    );
    expect(mr.changes_count).toBe('2');
    const versions = await server.request('GET', `${base}/versions`, { token: w.owner.token });
    expect((versions.body as Json[]).map((v) => v.head_commit_sha)).toEqual([pushed, sha]);
    const commits = await server.request('GET', `${base}/commits`, { token: w.owner.token });
    expect((commits.body as Json[]).map((c) => c.id)).toEqual([pushed, sha]);

    const repo = `${work}/refresh-${w.upstream.id}`;
    expect((await gitCli(['init', '-q', repo])).ok).toBe(true);
    const url = remoteUrl(server.url, w.upstream.path_with_namespace, w.owner.token);
    await waitFor(
      async () => {
        const fetched = await gitCli(['fetch', '-q', url, '+refs/merge-requests/1/head:refs/mr/1'], repo);
        expect(fetched.ok, fetched.stderr).toBe(true);
        return (await gitCli(['rev-parse', 'refs/mr/1'], repo)).stdout.trim();
      },
      (head) => head === pushed,
      'the head ref',
    );

    // A branch of the same name in the upstream is not the merge request's source.
    await committed(w.owner.token, w.upstream.id, 'feature', 'upstream-feature.txt', 'main');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const after = (await server.request('GET', base, { token: w.owner.token })).body as Json;
    expect(after.sha).toBe(pushed);
  });
});

describe('allow_collaboration', () => {
  /** Clones the fork as `user`, commits on `feature`, pushes; the push's result. */
  async function pushToFork(
    w: Awaited<ReturnType<typeof world>>,
    user: TestUser,
    name: string,
    ref = 'feature',
  ) {
    const repo = `${work}/${name}`;
    const url = remoteUrl(server.url, w.fork.path_with_namespace, user.token);
    expect((await gitCli(['clone', '-q', '-b', 'feature', url, repo])).ok).toBe(true);
    await gitCli(['commit', '-q', '--allow-empty', '-m', `From ${name}`], repo);
    return gitCli(['push', '-q', 'origin', `HEAD:${ref}`], repo);
  }

  it('lets who may merge into the target push to the source branch, only while allowed and open', async () => {
    const w = await world();
    await forkMr(w);
    const base = `/projects/${w.upstream.id}/merge_requests/1`;

    // Without collaboration the upstream's people cannot push to the fork.
    const denied = await pushToFork(w, w.owner, 'denied');
    expect(denied.ok).toBe(false);
    expect(denied.stderr).toMatch(/not allowed to push code to this project/);
    const apiDenied = await commitFile(w.owner.token, w.fork.id, 'feature', 'api-denied.txt');
    expect(apiDenied.status).toBe(403);

    // Only one who may push to the fork can turn it on; the upstream's owner cannot.
    const byOwner = await server.request('PUT', base, {
      token: w.owner.token,
      json: { allow_collaboration: true },
    });
    expect(byOwner.status).toBe(200);
    expect(byOwner.body).toMatchObject({ allow_collaboration: false, allow_maintainer_to_push: false });
    const byContributor = await server.request('PUT', base, {
      token: w.contributor.token,
      json: { allow_maintainer_to_push: true },
    });
    expect(byContributor.status, byContributor.text).toBe(200);
    expect(byContributor.body).toMatchObject({ allow_collaboration: true, allow_maintainer_to_push: true });

    // The upstream's maintainer (owner) and developer (main is protected: developers may not merge) .
    const allowed = await pushToFork(w, w.owner, 'allowed');
    expect(allowed.ok, allowed.stderr).toBe(true);
    const developer = await pushToFork(w, w.developer, 'developer');
    expect(developer.ok).toBe(false);
    const viaApi = await commitFile(w.owner.token, w.fork.id, 'feature', 'api-allowed.txt');
    expect(viaApi.status, viaApi.text).toBe(201);
    // Only the source branch: not another branch, not a new one, not the fork's main.
    const otherBranch = await pushToFork(w, w.owner, 'other', 'main');
    expect(otherBranch.ok).toBe(false);
    const newBranch = await commitFile(w.owner.token, w.fork.id, 'elsewhere', 'x.txt', 'main');
    expect(newBranch.status).toBe(403);

    // The pushes moved the merge request along.
    const head = (
      await server.request('GET', `/projects/${w.fork.id}/repository/branches/feature`, {
        token: w.owner.token,
      })
    ).body as { commit: { id: string } };
    await waitFor(
      async () => (await server.request('GET', base, { token: w.owner.token })).body as Json,
      (m) => m.sha === head.commit.id,
      'the version of the collaborators push',
    );

    // One who may not allow it cannot take it back either: the parameter is dropped, as in GitLab.
    const takeBack = await server.request('PUT', base, {
      token: w.owner.token,
      json: { allow_collaboration: false },
    });
    expect(takeBack.body).toMatchObject({ allow_collaboration: true });

    // Closed, the merge request lets nobody in.
    const closed = await server.request('PUT', base, {
      token: w.owner.token,
      json: { state_event: 'close' },
    });
    expect(closed.status).toBe(200);
    const afterClose = await pushToFork(w, w.owner, 'after-close');
    expect(afterClose.ok).toBe(false);
  });

  it('is not kept for a private upstream', async () => {
    const w = await world({ visibility: 'private' });
    const { mr } = await forkMr(w, { allow_collaboration: true });
    expect(mr).toMatchObject({ allow_collaboration: false, source_project_id: w.fork.id });
  });
});

describe('when the fork leaves', () => {
  it('closes its open merge requests on unlinking, keeps them with no source when deleted', async () => {
    const w = await world();
    await forkMr(w);
    const base = `/projects/${w.upstream.id}/merge_requests/1`;
    const unlinked = await server.request('DELETE', `/projects/${w.fork.id}/fork`, {
      token: w.contributor.token,
    });
    expect(unlinked.status).toBe(204);
    const closed = (await server.request('GET', base, { token: w.owner.token })).body as Json;
    expect(closed).toMatchObject({ state: 'closed', source_project_id: w.fork.id });

    const other = await world();
    const { sha } = await forkMr(other);
    const otherBase = `/projects/${other.upstream.id}/merge_requests/1`;
    const deleted = await server.request('DELETE', `/projects/${other.fork.id}`, {
      token: other.contributor.token,
    });
    expect(deleted.status).toBe(202);
    const kept = (await server.request('GET', otherBase, { token: other.owner.token })).body as Json;
    expect(kept).toMatchObject({ state: 'closed', source_project_id: null, sha });
    // Its commits stay readable in the upstream, and it cannot be reopened.
    const commits = await server.request('GET', `${otherBase}/commits`, { token: other.owner.token });
    expect((commits.body as Json[]).map((c) => c.id)).toEqual([sha]);
    const reopened = await server.request('PUT', otherBase, {
      token: other.owner.token,
      json: { state_event: 'reopen' },
    });
    expect(reopened.status).toBe(200);
    expect(reopened.body).toMatchObject({ state: 'closed' });
  });
});

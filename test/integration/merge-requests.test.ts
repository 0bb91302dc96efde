/** Merge requests: create, read, update, delete, the lists and their filters, versions and pushes. */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { remoteUrl, useGitWorkDir } from '../helpers/git-cli.js';
import { useTestServer, type TestResponse } from '../helpers/server.js';

const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });
const { gitCli, work } = useGitWorkDir('forge-mr-');

type Json = Record<string, unknown>;

/** A project with a README on main, its owner, a Developer and a Reporter. */
async function world(attrs: Json = {}, projectOwner?: TestUser) {
  const owner = projectOwner ?? (await server.factories.user());
  const project = await server.factories.projectWithReadme({ owner, ...attrs });
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
  return { owner, project, developer, reporter };
}

/** Commits one file on `branch` (created from `from` when given) through the API. */
async function commitFile(
  token: string,
  project: Project,
  branch: string,
  path: string,
  content: string,
  from?: string,
): Promise<string> {
  const res = await server.request('POST', `/projects/${project.id}/repository/commits`, {
    token,
    json: {
      branch,
      ...(from ? { start_branch: from } : {}),
      commit_message: `Change ${path}`,
      actions: [{ action: 'create', file_path: path, content }],
    },
  });
  expect(res.status, res.text).toBe(201);
  return (res.body as Json).id as string;
}

const createMr = (token: string, project: Project, json: Json): Promise<TestResponse> =>
  server.request('POST', `/projects/${project.id}/merge_requests`, { token, json });

async function openMr(user: TestUser, project: Project, json: Json = {}) {
  const branch = (json.source_branch as string) ?? `feature-${Math.random().toString(36).slice(2, 8)}`;
  await commitFile(user.token, project, branch, `${branch}.txt`, 'new\n', 'main');
  const res = await createMr(user.token, project, {
    source_branch: branch,
    target_branch: 'main',
    title: 'Add a file',
    ...json,
  });
  expect(res.status, res.text).toBe(201);
  return res.body as Json;
}

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const getMr = async (token: string, project: Project, iid: number) =>
  (await server.request('GET', `/projects/${project.id}/merge_requests/${iid}`, { token })).body as Json;

describe('creating and reading', () => {
  it('opens a merge request with its first version, head ref and GitLab fields', async () => {
    const w = await world();
    const sha = await commitFile(w.developer.token, w.project, 'feature', 'lib.txt', 'one\n', 'main');
    const res = await createMr(w.developer.token, w.project, {
      source_branch: 'feature',
      target_branch: 'main',
      title: '[Draft] Add lib',
      description: 'Adds it.\n\n- [x] code\n- [ ] docs\n* [X] tests',
      assignee_ids: [w.reporter.user.id],
      reviewer_ids: [w.owner.user.id],
      remove_source_branch: true,
    });
    expect(res.status, res.text).toBe(201);
    const mr = res.body as Json;
    const fullPath = `${w.owner.user.username}/${w.project.path}`;
    expect(mr).toMatchObject({
      iid: 1,
      project_id: w.project.id,
      source_project_id: w.project.id,
      target_project_id: w.project.id,
      state: 'opened',
      draft: true,
      work_in_progress: true,
      sha,
      labels: [],
      milestone: null,
      user_notes_count: 0,
      references: { short: '!1', relative: '!1', full: `${fullPath}!1` },
      web_url: `${server.url}/${fullPath}/-/merge_requests/1`,
      task_completion_status: { count: 3, completed_count: 2 },
      should_remove_source_branch: true,
      force_remove_source_branch: true,
      author: { id: w.developer.user.id },
      assignee: { id: w.reporter.user.id },
      reviewers: [{ id: w.owner.user.id }],
      changes_count: '1',
      first_contribution: true,
      user: { can_merge: false },
    });
    expect((mr.diff_refs as Json).head_sha).toBe(sha);

    // The queued check settles the status.
    const checked = await waitFor(
      () => getMr(w.developer.token, w.project, 1),
      (body) => body.merge_status === 'can_be_merged',
      'the merge status check',
    );
    expect(checked.detailed_merge_status).toBe('draft_status');

    const commits = await server.request('GET', `/projects/${w.project.id}/merge_requests/1/commits`, {
      token: w.reporter.token,
    });
    expect(commits.status).toBe(200);
    expect((commits.body as Json[]).map((c) => c.id)).toEqual([sha]);
    expect(commits.headers.get('x-total')).toBe('1');

    const changes = await server.request('GET', `/projects/${w.project.id}/merge_requests/1/changes`, {
      token: w.reporter.token,
    });
    expect((changes.body as Json).changes).toMatchObject([{ new_path: 'lib.txt', new_file: true }]);
    const diffs = await server.request('GET', `/projects/${w.project.id}/merge_requests/1/diffs`, {
      token: w.reporter.token,
    });
    expect(diffs.body).toMatchObject([{ new_path: 'lib.txt', diff: '@@ -0,0 +1 @@\n+one\n' }]);

    const versions = await server.request('GET', `/projects/${w.project.id}/merge_requests/1/versions`, {
      token: w.reporter.token,
    });
    const [version] = versions.body as Json[];
    expect(version).toMatchObject({ head_commit_sha: sha, state: 'collected', real_size: '1' });
    expect(version.patch_id_sha).toMatch(/^[0-9a-f]{40}$/);
    const one = await server.request(
      'GET',
      `/projects/${w.project.id}/merge_requests/1/versions/${version.id as number}`,
      { token: w.reporter.token },
    );
    expect(one.body).toMatchObject({
      id: version.id,
      commits: [{ id: sha }],
      diffs: [{ new_path: 'lib.txt' }],
    });

    const participants = await server.request(
      'GET',
      `/projects/${w.project.id}/merge_requests/1/participants`,
      {
        token: w.reporter.token,
      },
    );
    expect((participants.body as Json[]).map((u) => u.id)).toEqual([
      w.developer.user.id,
      w.reporter.user.id,
      w.owner.user.id,
    ]);

    // git fetches the head ref GitLab keeps for every merge request.
    const repo = `${work}/fetch-${w.project.id}`;
    expect((await gitCli(['init', '-q', repo])).ok).toBe(true);
    const fetched = await gitCli(
      [
        'fetch',
        '-q',
        remoteUrl(server.url, fullPath, w.reporter.token),
        'refs/merge-requests/1/head:refs/mr/1',
      ],
      repo,
    );
    expect(fetched.ok, fetched.stderr).toBe(true);
    expect((await gitCli(['rev-parse', 'refs/mr/1'], repo)).stdout.trim()).toBe(sha);
    // The server's own refs cannot be pushed to.
    const pushed = await gitCli(
      ['push', remoteUrl(server.url, fullPath, w.owner.token), 'refs/mr/1:refs/merge-requests/1/head'],
      repo,
    );
    expect(pushed.ok).toBe(false);
  });

  it.each([
    [
      'a missing source branch',
      { source_branch: 'nope' },
      400,
      { message: { source_branch: ['does not exist'] } },
    ],
    [
      'a missing target branch',
      { target_branch: 'nope' },
      400,
      { message: { target_branch: ['does not exist'] } },
    ],
    [
      'the same branch on both sides',
      { source_branch: 'main' },
      422,
      { message: ["You can't use same project/branch for source and target"] },
    ],
    ['no title', { title: undefined }, 400, { error: 'title is missing' }],
  ])('refuses %s', async (_case, change, status, body) => {
    const w = await world();
    await commitFile(w.developer.token, w.project, 'topic', 'a.txt', 'a\n', 'main');
    const res = await createMr(w.developer.token, w.project, {
      source_branch: 'topic',
      target_branch: 'main',
      title: 'A',
      ...change,
    });
    expect(res.status).toBe(status);
    expect(res.body).toEqual(body);
  });

  it('refuses a second open merge request for the same branches, and a Reporter', async () => {
    const w = await world();
    await openMr(w.developer, w.project, { source_branch: 'dup' });
    const again = await createMr(w.developer.token, w.project, {
      source_branch: 'dup',
      target_branch: 'main',
      title: 'B',
    });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      message: ['Another open merge request already exists for this source branch: !1'],
    });
    const reporter = await createMr(w.reporter.token, w.project, {
      source_branch: 'dup',
      target_branch: 'main',
      title: 'C',
    });
    expect(reporter.status).toBe(403);
  });

  it('lets one of several concurrent creates for the same branches win; the others answer 409', async () => {
    const w = await world();
    await commitFile(w.developer.token, w.project, 'race', 'race.txt', 'r\n', 'main');
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        createMr(w.developer.token, w.project, {
          source_branch: 'race',
          target_branch: 'main',
          title: `R${i}`,
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409]);
    const list = await server.request('GET', `/projects/${w.project.id}/merge_requests`, {
      token: w.owner.token,
    });
    expect((list.body as Json[]).length).toBe(1);
  });

  it('answers 403 when the project has merge requests turned off', async () => {
    const w = await world();
    await openMr(w.developer, w.project, { source_branch: 'off' });
    const off = await server.request('PUT', `/projects/${w.project.id}`, {
      token: w.owner.token,
      json: { merge_requests_enabled: false },
    });
    expect(off.status).toBe(200);
    expect(
      (await server.request('GET', `/projects/${w.project.id}/merge_requests`, { token: w.owner.token }))
        .status,
    ).toBe(403);
    expect(
      (await server.request('GET', `/projects/${w.project.id}/merge_requests/1`, { token: w.owner.token }))
        .status,
    ).toBe(403);
  });
});

describe('updating and deleting', () => {
  it('edits, closes and reopens, follows the draft prefix and a new target', async () => {
    const w = await world();
    await openMr(w.developer, w.project, { source_branch: 'edit' });
    await commitFile(w.developer.token, w.project, 'stable', 'stable.txt', 's\n', 'main');
    const put = (token: string, json: Json) =>
      server.request('PUT', `/projects/${w.project.id}/merge_requests/1`, { token, json });

    const drafted = await put(w.developer.token, {
      title: 'Draft: Add a file',
      assignee_id: w.developer.user.id,
      reviewer_ids: [w.reporter.user.id],
      squash: true,
      discussion_locked: true,
      merge_after: '2026-04-01T08:00:00Z',
    });
    expect(drafted.status, drafted.text).toBe(200);
    expect(drafted.body).toMatchObject({
      draft: true,
      assignees: [{ id: w.developer.user.id }],
      reviewers: [{ id: w.reporter.user.id }],
      squash: true,
      discussion_locked: true,
      merge_after: '2026-04-01T08:00:00.000Z',
    });
    const closed = await put(w.developer.token, {
      state_event: 'close',
      title: 'Add a file',
      assignee_ids: [],
    });
    expect(closed.body).toMatchObject({
      state: 'closed',
      draft: false,
      assignees: [],
      closed_by: { id: w.developer.user.id },
      detailed_merge_status: 'not_open',
    });
    // Closed: another one for the same branches may be opened, and then this one cannot reopen.
    const other = await createMr(w.developer.token, w.project, {
      source_branch: 'edit',
      target_branch: 'main',
      title: 'X',
    });
    expect(other.status).toBe(201);
    expect((await put(w.developer.token, { state_event: 'reopen' })).status).toBe(409);
    const retargeted = await put(w.developer.token, { target_branch: 'stable' });
    expect(retargeted.body).toMatchObject({ target_branch: 'stable', state: 'closed' });
    const reopened = await put(w.developer.token, { state_event: 'reopen' });
    expect(reopened.body).toMatchObject({ state: 'opened', closed_at: null, closed_by: null });

    const versions = await server.request('GET', `/projects/${w.project.id}/merge_requests/1/versions`, {
      token: w.developer.token,
    });
    expect((versions.body as Json[]).length).toBe(2);

    expect((await put(w.reporter.token, { title: 'Mine' })).status).toBe(403);
    const none = await put(w.developer.token, {});
    expect(none.status).toBe(400);
    expect((none.body as Json).error).toMatch(/at least one parameter must be provided$/);
    expect((await put(w.developer.token, { target_branch: 'gone' })).body).toEqual({
      message: { target_branch: ['does not exist'] },
    });
  });

  it('lets the Owner delete, not a Developer', async () => {
    const w = await world();
    await openMr(w.developer, w.project);
    const path = `/projects/${w.project.id}/merge_requests/1`;
    expect((await server.request('DELETE', path, { token: w.developer.token })).status).toBe(403);
    expect((await server.request('DELETE', path, { token: w.owner.token })).status).toBe(204);
    expect((await server.request('GET', path, { token: w.owner.token })).body).toEqual({
      message: '404 Not found',
    });
  });
});

describe('time tracking', () => {
  it('sets, adds and resets with GitLab durations', async () => {
    const w = await world();
    await openMr(w.developer, w.project);
    const base = `/projects/${w.project.id}/merge_requests/1`;
    const post = (path: string, json?: Json) =>
      server.request('POST', `${base}/${path}`, { token: w.developer.token, json });
    expect((await post('time_estimate', { duration: '1w2d3h4m' })).body).toMatchObject({
      time_estimate: 5 * 8 * 3600 + 2 * 8 * 3600 + 3 * 3600 + 240,
      human_time_estimate: '1w 2d 3h 4m',
    });
    const spent = await post('add_spent_time', { duration: '2 hours 30 minutes' });
    expect(spent.status).toBe(201);
    expect(spent.body).toMatchObject({ total_time_spent: 9000, human_total_time_spent: '2h 30m' });
    expect((await post('add_spent_time', { duration: '-1h' })).body).toMatchObject({
      total_time_spent: 5400,
    });
    expect((await post('time_estimate', { duration: 'soon' })).body).toEqual({
      error: 'duration is invalid',
    });
    expect((await post('reset_spent_time')).body).toMatchObject({
      total_time_spent: 0,
      human_total_time_spent: null,
    });
    expect((await post('reset_time_estimate')).body).toMatchObject({ time_estimate: 0 });
    expect((await server.request('GET', `${base}/time_stats`, { token: w.reporter.token })).status).toBe(200);
    const refused = await server.request('POST', `${base}/time_estimate`, {
      token: w.reporter.token,
      json: { duration: '1h' },
    });
    expect(refused.status).toBe(403);
  });
});

describe('lists', () => {
  /** Three merge requests: !1 by the Developer (assigned to the Reporter), !2 by the Owner (draft, closed), !3 by the Developer. */
  async function listWorld() {
    const w = await world();
    await openMr(w.developer, w.project, {
      source_branch: 'one',
      title: 'Fix the parser',
      assignee_id: w.reporter.user.id,
    });
    await openMr(w.owner, w.project, {
      source_branch: 'two',
      title: 'Draft: Lexer',
      description: 'parser notes',
      reviewer_ids: [w.developer.user.id],
    });
    await server.request('PUT', `/projects/${w.project.id}/merge_requests/2`, {
      token: w.owner.token,
      json: { state_event: 'close' },
    });
    await openMr(w.developer, w.project, { source_branch: 'three', title: 'Docs', target_branch: 'main' });
    return w;
  }

  it('filters the project list', async () => {
    const w = await listWorld();
    const cases: Array<[string, string, number[]]> = [
      ['everything, newest first', '', [3, 2, 1]],
      ['state', 'state=opened', [3, 1]],
      ['author', `author_id=${w.developer.user.id}`, [3, 1]],
      ['author by name', `author_username=${w.owner.user.username}`, [2]],
      ['state and author', `state=closed&author_id=${w.owner.user.id}`, [2]],
      ['assignee', `assignee_id=${w.reporter.user.id}`, [1]],
      ['no assignee', 'assignee_id=None', [3, 2]],
      ['any assignee', 'assignee_id=Any', [1]],
      ['reviewer', `reviewer_id=${w.developer.user.id}`, [2]],
      ['reviewer by name', `reviewer_username=${w.developer.user.username}`, [2]],
      ['no reviewer', 'reviewer_id=None', [3, 1]],
      ['search in both', 'search=PARSER', [2, 1]],
      ['search in the title', 'search=parser&in=title', [1]],
      ['drafts', 'wip=yes', [2]],
      ['no drafts', 'wip=no', [3, 1]],
      ['source branch', 'source_branch=two', [2]],
      ['target branch', 'target_branch=main', [3, 2, 1]],
      ['iids', 'iids[]=1&iids[]=3', [3, 1]],
      ['not the author', `not[author_id]=${w.developer.user.id}`, [2]],
      ['not the assignee', `not[assignee_username]=${w.reporter.user.username}`, [3, 2]],
      ['not the reviewer', `not[reviewer_id]=${w.developer.user.id}`, [3, 1]],
      ['title order', 'order_by=title&sort=desc', [1, 2, 3]],
      ['oldest first', 'sort=asc', [1, 2, 3]],
      ['created after', 'created_after=2999-01-01T00:00:00Z', []],
      ['updated before', 'updated_before=2999-01-01T00:00:00Z', [3, 2, 1]],
      ['deployments', 'environment=production', []],
      ['merged by', `merge_user_id=${w.owner.user.id}`, []],
      ['scope mine (ignored as all)', 'scope=all', [3, 2, 1]],
    ];
    for (const [name, query, iids] of cases) {
      const res = await server.request('GET', `/projects/${w.project.id}/merge_requests?${query}`, {
        token: w.reporter.token,
      });
      expect(res.status, name).toBe(200);
      expect(
        (res.body as Json[]).map((mr) => mr.iid),
        name,
      ).toEqual(iids);
    }
    const simple = await server.request(
      'GET',
      `/projects/${w.project.id}/merge_requests?view=simple&per_page=1`,
      {
        token: w.reporter.token,
      },
    );
    expect(Object.keys((simple.body as Json[])[0]).sort()).toEqual(
      [
        'created_at',
        'description',
        'id',
        'iid',
        'project_id',
        'state',
        'title',
        'updated_at',
        'web_url',
      ].sort(),
    );
    expect(simple.headers.get('x-total')).toBe('3');
    expect(simple.headers.get('link')).toContain('rel="next"');
  });

  it('leaves the totals out beyond 10,000 merge requests, as GitLab does', async () => {
    const w = await world();
    await server.dataSource.query(
      `INSERT INTO merge_requests (iid, target_project_id, source_project_id, source_branch, target_branch, title)
       SELECT g, $1, $1, 'bulk-' || g, 'main', 'Bulk ' || g FROM generate_series(1, 10001) g`,
      [w.project.id],
    );
    const res = await server.request('GET', `/projects/${w.project.id}/merge_requests?per_page=2&page=3`, {
      token: w.reporter.token,
    });
    expect((res.body as Json[]).map((mr) => mr.iid)).toEqual([9997, 9996]);
    expect(res.headers.get('x-total')).toBeNull();
    expect(res.headers.get('x-total-pages')).toBeNull();
    expect(res.headers.get('x-next-page')).toBe('4');
    expect(res.headers.get('link')).toContain('page=4&per_page=2>; rel="next"');
    expect(res.headers.get('link')).not.toContain('rel="last"');
    const few = await server.request('GET', `/projects/${w.project.id}/merge_requests?search=Bulk 10001`, {
      token: w.reporter.token,
    });
    expect(few.headers.get('x-total')).toBe('1');
  });

  it.each([
    ['author_id=1&author_username=x', 'author_id, author_username are mutually exclusive'],
    ['merge_user_id=1&merge_user_username=x', 'merge_user_id, merge_user_username are mutually exclusive'],
    ['reviewer_id=1&reviewer_username=x', 'reviewer_id, reviewer_username are mutually exclusive'],
    // A year PostgreSQL cannot store is refused before any query.
    ['created_after=0000-01-01T00:00:00Z', 'created_after is invalid'],
  ])('refuses %s', async (query, error) => {
    const w = await world();
    const res = await server.request('GET', `/projects/${w.project.id}/merge_requests?${query}`, {
      token: w.owner.token,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error });
  });

  it('scopes the instance list and the group list', async () => {
    const group = await server.factories.group();
    const groupOwner = await server.factories.memberOf(group, AccessLevel.Owner);
    const w = await world({ namespace: group }, groupOwner);
    await openMr(w.developer, w.project, { source_branch: 'g1', assignee_id: w.reporter.user.id });
    await openMr(w.owner, w.project, { source_branch: 'g2', reviewer_ids: [w.reporter.user.id] });
    const ids = async (token: string, path: string) =>
      ((await server.request('GET', path, { token })).body as Json[])
        .filter((mr) => mr.project_id === w.project.id)
        .map((mr) => mr.iid);
    expect(await ids(w.developer.token, '/merge_requests')).toEqual([1]);
    expect(await ids(w.reporter.token, '/merge_requests')).toEqual([]);
    expect(await ids(w.reporter.token, '/merge_requests?scope=assigned_to_me')).toEqual([1]);
    expect(await ids(w.reporter.token, '/merge_requests?scope=reviews_for_me')).toEqual([2]);
    expect(await ids(w.reporter.token, '/merge_requests?scope=all')).toEqual([2, 1]);
    const outsider = await server.factories.user();
    expect(await ids(outsider.token, '/merge_requests?scope=all')).toEqual([]);
    const owner = groupOwner;
    expect(await ids(owner.token, `/groups/${group.id}/merge_requests?state=opened`)).toEqual([2, 1]);
    expect(await ids(owner.token, `/groups/${group.id}/merge_requests?author_id=${w.owner.user.id}`)).toEqual(
      [2],
    );
  });
});

describe('pushes', () => {
  it('a push to the source branch makes a new version and moves the head ref', async () => {
    const w = await world();
    await openMr(w.developer, w.project, { source_branch: 'moving' });
    const next = await commitFile(w.developer.token, w.project, 'moving', 'second.txt', '2\n');
    const mr = await waitFor(
      () => getMr(w.developer.token, w.project, 1),
      (body) => body.sha === next,
      'the refresh after the push',
    );
    expect((mr.diff_refs as Json).head_sha).toBe(next);
    const versions = await server.request('GET', `/projects/${w.project.id}/merge_requests/1/versions`, {
      token: w.developer.token,
    });
    expect((versions.body as Json[]).map((v) => v.head_commit_sha)[0]).toBe(next);
    expect((versions.body as Json[]).length).toBe(2);
    const commits = await server.request('GET', `/projects/${w.project.id}/merge_requests/1/commits`, {
      token: w.developer.token,
    });
    expect((commits.body as Json[]).length).toBe(2);
  });

  it('conflicts and fast-forward needs are found by the check; a push of the source into the target merges', async () => {
    const w = await world({ merge_method: 'ff' });
    await commitFile(w.developer.token, w.project, 'clash', 'same.txt', 'theirs\n', 'main');
    await server.request('POST', `/projects/${w.project.id}/merge_requests`, {
      token: w.developer.token,
      json: { source_branch: 'clash', target_branch: 'main', title: 'Clash' },
    });
    await openMr(w.developer, w.project, { source_branch: 'ff' });
    await commitFile(w.owner.token, w.project, 'main', 'same.txt', 'ours\n');
    const clash = await waitFor(
      () => getMr(w.developer.token, w.project, 1),
      (body) => body.detailed_merge_status === 'conflict',
      'the conflict',
    );
    expect(clash).toMatchObject({ merge_status: 'cannot_be_merged', has_conflicts: true });
    expect(clash.merge_error).toContain('same.txt');
    const behind = await waitFor(
      () => getMr(w.developer.token, w.project, 2),
      (body) => body.detailed_merge_status === 'need_rebase',
      'need_rebase',
    );
    expect(behind).toMatchObject({ merge_status: 'can_be_merged', diverged_commits_count: 1 });

    // A push that brings the source's head into the target marks it merged.
    const fullPath = `${w.owner.user.username}/${w.project.path}`;
    const repo = `${work}/merge-${w.project.id}`;
    expect((await gitCli(['clone', '-q', remoteUrl(server.url, fullPath, w.owner.token), repo])).ok).toBe(
      true,
    );
    expect((await gitCli(['merge', '-q', '--no-edit', 'origin/ff'], repo)).ok).toBe(true);
    const pushed = await gitCli(['push', '-q', 'origin', 'HEAD:main'], repo);
    expect(pushed.ok, pushed.stderr).toBe(true);
    const merged = await waitFor(
      () => getMr(w.developer.token, w.project, 2),
      (body) => body.state === 'merged',
      'the merge by push',
    );
    expect(merged).toMatchObject({ merge_user: { id: w.owner.user.id }, detailed_merge_status: 'not_open' });
    expect(merged.merged_at).not.toBeNull();
    const list = await server.request('GET', `/projects/${w.project.id}/merge_requests?state=merged`, {
      token: w.developer.token,
    });
    expect((list.body as Json[]).map((mr) => mr.iid)).toEqual([2]);
  });

  it('with_merge_status_recheck queues a check for Developers', async () => {
    const w = await world();
    await openMr(w.developer, w.project);
    await waitFor(
      () => getMr(w.developer.token, w.project, 1),
      (b) => b.merge_status === 'can_be_merged',
      'check',
    );
    const res = await server.request(
      'GET',
      `/projects/${w.project.id}/merge_requests/1?with_merge_status_recheck=true`,
      {
        token: w.developer.token,
      },
    );
    expect((res.body as Json).merge_status).toBe('unchecked');
    await waitFor(
      () => getMr(w.developer.token, w.project, 1),
      (b) => b.merge_status === 'can_be_merged',
      'recheck',
    );
  });
});

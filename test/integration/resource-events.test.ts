/**
 * Resource events of merge requests: label, milestone and state events recorded with each change, by the
 * acting user; lists, single events, 404s, pagination, who may read them, and what deletions leave.
 */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

interface World {
  project: Project;
  owner: TestUser;
  maintainer: TestUser;
  developer: TestUser;
  iid: number;
  mrId: number;
  milestones: { a: number; b: number };
}

/** A request that must succeed; its JSON body. */
async function call(user: TestUser | undefined, method: string, path: string, json?: unknown): Promise<Json> {
  const res = await server.request(method, path, { token: user?.token, json });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body as Json;
}

/** A project with two milestones and merge request !1 by its Developer, opened with `create`. */
async function world(create: Json = {}, visibility: 'public' | 'private' = 'public'): Promise<World> {
  const owner = await server.factories.user();
  const project = await server.factories.projectWithReadme({ owner, visibility });
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const a = await call(owner, 'POST', `/projects/${project.id}/milestones`, { title: 'v1' });
  const b = await call(owner, 'POST', `/projects/${project.id}/milestones`, { title: 'v2' });
  await call(developer, 'POST', `/projects/${project.id}/repository/commits`, {
    branch: 'feature',
    start_branch: 'main',
    commit_message: 'Add feature',
    actions: [{ action: 'create', file_path: 'feature.txt', content: 'new\n' }],
  });
  const milestones = { a: a.id as number, b: b.id as number };
  const fields = { ...create };
  if (typeof fields.milestone_id === 'string') fields.milestone_id = milestones[fields.milestone_id as 'a'];
  const mr = await call(developer, 'POST', `/projects/${project.id}/merge_requests`, {
    source_branch: 'feature',
    target_branch: 'main',
    title: 'Add feature',
    ...fields,
  });
  return { project, owner, maintainer, developer, iid: mr.iid as number, mrId: mr.id as number, milestones };
}

const events = (w: World, kind: 'label' | 'milestone' | 'state') =>
  `/projects/${w.project.id}/merge_requests/${w.iid}/resource_${kind}_events`;

const update = (w: World, user: TestUser, json: Json) =>
  call(user, 'PUT', `/projects/${w.project.id}/merge_requests/${w.iid}`, json);

const labelActions = async (w: World) =>
  ((await call(undefined, 'GET', events(w, 'label'))) as unknown as Json[]).map((e) => [
    (e.label as Json | null)?.name ?? null,
    e.action,
  ]);

describe('label events', () => {
  it.each<[string, Json, Json[], Array<[string, string]>]>([
    [
      'labels at creation',
      { labels: 'bug,ui' },
      [],
      [
        ['bug', 'add'],
        ['ui', 'add'],
      ],
    ],
    ['labels added by update', {}, [{ labels: 'bug' }], [['bug', 'add']]],
    [
      'add_labels',
      { labels: 'bug' },
      [{ add_labels: 'ui,bug' }],
      [
        ['bug', 'add'],
        ['ui', 'add'],
      ],
    ],
    [
      'remove_labels',
      { labels: 'bug,ui' },
      [{ remove_labels: 'bug' }],
      [
        ['bug', 'add'],
        ['ui', 'add'],
        ['bug', 'remove'],
      ],
    ],
    [
      'labels replacing others',
      { labels: 'bug' },
      [{ labels: 'ui' }],
      [
        ['bug', 'add'],
        ['ui', 'add'],
        ['bug', 'remove'],
      ],
    ],
    ['the same labels again (nothing)', { labels: 'bug' }, [{ labels: 'bug' }], [['bug', 'add']]],
    [
      'labels emptied',
      { labels: 'bug' },
      [{ labels: '' }],
      [
        ['bug', 'add'],
        ['bug', 'remove'],
      ],
    ],
  ])('records %s', async (_, create, updates, expected) => {
    const w = await world(create);
    for (const json of updates) await update(w, w.maintainer, json);
    expect(await labelActions(w)).toEqual(expected);
  });

  it('answers in GitLab’s shape, by the acting user, and reads one event', async () => {
    const w = await world({ labels: 'bug' });
    await update(w, w.maintainer, { remove_labels: 'bug' });
    const res = await server.request('GET', events(w, 'label'));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-total')).toBe('2');
    const [added, removed] = res.body as Json[];
    expect(added).toMatchObject({
      user: { id: w.developer.user.id, username: w.developer.user.username },
      resource_type: 'MergeRequest',
      resource_id: w.mrId,
      label: { name: 'bug', color: expect.any(String), description: null, text_color: expect.any(String) },
      action: 'add',
    });
    expect(added.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(removed).toMatchObject({ user: { id: w.maintainer.user.id }, action: 'remove' });
    expect(await call(undefined, 'GET', `${events(w, 'label')}/${added.id as number}`)).toEqual(added);
  });

  it('keeps the events of a deleted label, with no label', async () => {
    const w = await world({ labels: 'bug' });
    const [event] = (await call(undefined, 'GET', events(w, 'label'))) as unknown as Json[];
    const labelId = (event.label as Json).id as number;
    const deleted = await server.request('DELETE', `/projects/${w.project.id}/labels/${labelId}`, {
      token: w.owner.token,
    });
    expect(deleted.status, deleted.text).toBe(204);
    expect(await call(undefined, 'GET', `${events(w, 'label')}/${event.id as number}`)).toMatchObject({
      id: event.id,
      label: null,
      action: 'add',
    });
  });
});

describe('milestone events', () => {
  it.each<[string, Json, Json[], Array<[string, string]>]>([
    ['a milestone at creation', { milestone_id: 'a' }, [], [['v1', 'add']]],
    ['a milestone set', {}, [{ milestone_id: 'a' }], [['v1', 'add']]],
    [
      'a milestone changed',
      { milestone_id: 'a' },
      [{ milestone_id: 'b' }],
      // One event, as GitLab records a change: the new milestone added.
      [
        ['v1', 'add'],
        ['v2', 'add'],
      ],
    ],
    [
      'a milestone unset with 0',
      { milestone_id: 'a' },
      [{ milestone_id: 0 }],
      [
        ['v1', 'add'],
        ['v1', 'remove'],
      ],
    ],
    ['the same milestone again (nothing)', { milestone_id: 'a' }, [{ milestone_id: 'a' }], [['v1', 'add']]],
    ['a change of something else (nothing)', { milestone_id: 'a' }, [{ title: 'Renamed' }], [['v1', 'add']]],
  ])('records %s', async (_, create, updates, expected) => {
    const w = await world(create);
    for (const json of updates) {
      const fields = { ...json };
      if (typeof fields.milestone_id === 'string')
        fields.milestone_id = w.milestones[fields.milestone_id as 'a'];
      await update(w, w.maintainer, fields);
    }
    const listed = (await call(undefined, 'GET', events(w, 'milestone'))) as unknown as Json[];
    expect(listed.map((e) => [(e.milestone as Json).title, e.action])).toEqual(expected);
  });

  it('embeds the milestone as the milestones API shows it', async () => {
    const w = await world({ milestone_id: 'a' });
    const [event] = (await call(undefined, 'GET', events(w, 'milestone'))) as unknown as Json[];
    const milestone = await call(w.owner, 'GET', `/projects/${w.project.id}/milestones/${w.milestones.a}`);
    expect(event).toMatchObject({ resource_type: 'MergeRequest', resource_id: w.mrId, action: 'add' });
    expect(event.milestone).toEqual(milestone);
    expect(await call(undefined, 'GET', `${events(w, 'milestone')}/${event.id as number}`)).toEqual(event);
  });
});

describe('state events', () => {
  it.each<[string, Array<[Json, 'developer' | 'maintainer']>, string[]]>([
    ['a close', [[{ state_event: 'close' }, 'developer']], ['closed']],
    [
      'a close and a reopen',
      [
        [{ state_event: 'close' }, 'developer'],
        [{ state_event: 'reopen' }, 'maintainer'],
      ],
      ['closed', 'reopened'],
    ],
    ['a reopen of an open one (nothing)', [[{ state_event: 'reopen' }, 'developer']], []],
    ['a title change (nothing)', [[{ title: 'Renamed' }, 'developer']], []],
  ])('records %s', async (_, steps, expected) => {
    const w = await world();
    for (const [json, who] of steps) await update(w, w[who], json);
    const listed = (await call(undefined, 'GET', events(w, 'state'))) as unknown as Json[];
    expect(listed.map((e) => e.state)).toEqual(expected);
    if (steps.length === 2) expect((listed[1].user as Json).id).toBe(w.maintainer.user.id);
  });

  it('records a merge through PUT …/merge, by the merger', async () => {
    const w = await world();
    const res = await server.request('PUT', `/projects/${w.project.id}/merge_requests/${w.iid}/merge`, {
      token: w.maintainer.token,
    });
    expect(res.status, res.text).toBe(200);
    const [event] = (await call(undefined, 'GET', events(w, 'state'))) as unknown as Json[];
    expect(event).toMatchObject({
      state: 'merged',
      user: { id: w.maintainer.user.id },
      resource_type: 'MergeRequest',
      resource_id: w.mrId,
    });
    expect(await call(undefined, 'GET', `${events(w, 'state')}/${event.id as number}`)).toEqual(event);
  });

  it('records a merge by a push of its commits to the target, by the pusher', async () => {
    const w = await world();
    await call(w.owner, 'POST', `/projects/${w.project.id}/repository/commits`, {
      branch: 'main',
      start_branch: 'feature',
      force: true,
      commit_message: 'Bring the feature',
      actions: [{ action: 'create', file_path: 'more.txt', content: 'more\n' }],
    });
    const deadline = Date.now() + 20_000;
    let listed: Json[] = [];
    while (Date.now() < deadline) {
      listed = (await call(undefined, 'GET', events(w, 'state'))) as unknown as Json[];
      if (listed.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(listed).toMatchObject([{ state: 'merged', user: { id: w.owner.user.id } }]);
  });
});

describe('reading events', () => {
  it.each(['label', 'milestone', 'state'] as const)(
    'answers 404 for unknown %s events and merge requests',
    async (kind) => {
      const w = await world();
      const other = await world({ labels: 'bug', milestone_id: 'a' });
      await update(other, other.maintainer, { state_event: 'close' });
      const [foreign] = (await call(undefined, 'GET', events(other, kind))) as unknown as Json[];
      for (const path of [
        `${events(w, kind)}/${foreign.id as number}`,
        `${events(w, kind)}/2147483647`,
        `/projects/${w.project.id}/merge_requests/999/resource_${kind}_events`,
      ]) {
        const res = await server.request('GET', path);
        expect(res.status, path).toBe(404);
        expect(res.body).toEqual({ message: '404 Not found' });
      }
    },
  );

  it('paginates oldest first, with GitLab’s headers', async () => {
    const w = await world({ labels: 'a,b,c' });
    const res = await server.request('GET', `${events(w, 'label')}?per_page=2&page=2`);
    expect(res.status).toBe(200);
    expect((res.body as Json[]).map((e) => (e.label as Json).name)).toEqual(['c']);
    expect(res.headers.get('x-total')).toBe('3');
    expect(res.headers.get('x-total-pages')).toBe('2');
    expect(res.headers.get('x-prev-page')).toBe('1');
  });

  it('is for readers of the merge request only', async () => {
    const w = await world({ labels: 'bug' }, 'private');
    const outsider = await server.factories.user();
    const guest = await server.factories.memberOf(w.project, AccessLevel.Guest);
    const reporter = await server.factories.memberOf(w.project, AccessLevel.Reporter);
    expect((await server.request('GET', events(w, 'label'))).status).toBe(404);
    expect((await server.request('GET', events(w, 'label'), { token: outsider.token })).status).toBe(404);
    // A Guest of a private project does not read its merge requests.
    expect((await server.request('GET', events(w, 'label'), { token: guest.token })).status).toBe(403);
    const res = await server.request('GET', events(w, 'label'), { token: reporter.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toHaveLength(1);
  });

  it('shows a deleted user’s events as the ghost user’s, and deletes events with the merge request', async () => {
    const w = await world({ labels: 'bug' });
    await update(w, w.maintainer, { state_event: 'close' });
    await server.dataSource.query('DELETE FROM users WHERE id = $1', [w.maintainer.user.id]);
    const [event] = (await call(undefined, 'GET', events(w, 'state'))) as unknown as Json[];
    expect((event.user as Json).username).toBe('ghost');
    await call(w.owner, 'DELETE', `/projects/${w.project.id}/merge_requests/${w.iid}`);
    const [{ count }] = (await server.dataSource.query(
      'SELECT count(*)::int AS count FROM resource_label_events WHERE merge_request_id = $1',
      [w.mrId],
    )) as Array<{ count: number }>;
    expect(count).toBe(0);
  });
});

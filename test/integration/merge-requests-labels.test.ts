/** Labels and milestones on merge requests: setting them, the list filters, label counts, deletions. */
import { beforeAll, describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Namespace } from '../../src/namespaces/namespace.entity.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

interface World {
  owner: TestUser;
  developer: TestUser;
  group: Namespace;
  subgroup: Namespace;
  project: Project;
}

/** A project in a subgroup of a group, with a Developer. */
async function world(): Promise<World> {
  const f = server.factories;
  const owner = await f.user();
  const group = await f.group();
  const subgroup = await f.group({ parent: group });
  await f.member(group, owner.user, AccessLevel.Owner);
  const project = await f.projectWithReadme({ owner, namespace: subgroup });
  const developer = await f.memberOf(project, AccessLevel.Developer);
  return { owner, developer, group, subgroup, project };
}

async function call(method: string, path: string, token: string, json?: Json) {
  return server.request(method, path, { token, ...(json ? { json } : {}) });
}

async function ok(method: string, path: string, token: string, json?: Json, status = 200) {
  const res = await call(method, path, token, json);
  expect(res.status, res.text).toBe(status);
  return res.body as Json;
}

let branches = 0;
/** A merge request from a new branch, created with `json`. */
async function openMr(w: World, json: Json = {}): Promise<Json> {
  const branch = `feature-${++branches}`;
  await ok(
    'POST',
    `/projects/${w.project.id}/repository/commits`,
    w.developer.token,
    {
      branch,
      start_branch: 'main',
      commit_message: 'Add a file',
      actions: [{ action: 'create', file_path: `${branch}.txt`, content: 'x\n' }],
    },
    201,
  );
  return ok(
    'POST',
    `/projects/${w.project.id}/merge_requests`,
    w.developer.token,
    { source_branch: branch, target_branch: 'main', title: branch, ...json },
    201,
  );
}

const label = (w: World, owner: 'project' | 'group', name: string, color = '#d9534f') =>
  ok(
    'POST',
    owner === 'project' ? `/projects/${w.project.id}/labels` : `/groups/${w.group.id}/labels`,
    w.owner.token,
    { name, color },
    201,
  );

const milestone = (w: World, owner: 'project' | 'group', title: string, extra: Json = {}) =>
  ok(
    'POST',
    owner === 'project' ? `/projects/${w.project.id}/milestones` : `/groups/${w.group.id}/milestones`,
    w.owner.token,
    { title, ...extra },
    201,
  );

const edit = (w: World, iid: unknown, json: Json) =>
  ok('PUT', `/projects/${w.project.id}/merge_requests/${iid}`, w.developer.token, json);

describe('setting labels and a milestone', () => {
  it('creates with labels (group labels found ignoring case, unknown ones created) and a group milestone', async () => {
    const w = await world();
    await label(w, 'group', 'Bug');
    const m = await milestone(w, 'group', 'v1');
    const mr = await openMr(w, { labels: 'bug,zeta, alpha', milestone_id: m.id });
    // Sorted as Ruby sorts strings: by bytes, capitals first.
    expect(mr.labels).toEqual(['Bug', 'alpha', 'zeta']);
    expect(mr.milestone).toMatchObject({ id: m.id, title: 'v1', group_id: w.group.id });
    const projectLabels = (await ok(
      'GET',
      `/projects/${w.project.id}/labels`,
      w.owner.token,
    )) as unknown as Json[];
    expect(projectLabels.map((l) => [l.name, l.color, l.is_project_label])).toEqual([
      ['Bug', '#d9534f', false],
      ['alpha', '#6699cc', true],
      ['zeta', '#6699cc', true],
    ]);
  });

  it('updates with labels, add_labels, remove_labels and milestone_id', async () => {
    const w = await world();
    await label(w, 'project', 'bug');
    const m = await milestone(w, 'project', 'v2');
    const mr = await openMr(w);
    expect(mr).toMatchObject({ labels: [], milestone: null });
    const steps: Array<[Json, string[]]> = [
      [{ labels: 'bug,ui' }, ['bug', 'ui']],
      [{ add_labels: 'backend,BUG' }, ['backend', 'bug', 'ui']],
      [{ remove_labels: 'UI,unknown' }, ['backend', 'bug']],
      [{ labels: 'docs', add_labels: 'bug', remove_labels: 'docs' }, ['bug']],
      [{ labels: '' }, []],
    ];
    for (const [json, labels] of steps)
      expect((await edit(w, mr.iid, json)).labels, JSON.stringify(json)).toEqual(labels);
    expect((await edit(w, mr.iid, { milestone_id: m.id })).milestone).toMatchObject({ id: m.id, iid: 1 });
    expect((await edit(w, mr.iid, { milestone_id: 0 })).milestone).toBeNull();
    const empty = await call(
      'PUT',
      `/projects/${w.project.id}/merge_requests/${mr.iid}`,
      w.developer.token,
      {},
    );
    expect(empty.status).toBe(400);
    expect((empty.body as Json).error).toMatch(
      /^add_labels, allow_collaboration, .*milestone_id, remove_labels/,
    );
  });

  it('drops a milestone the project cannot use, as GitLab does', async () => {
    const w = await world();
    const other = await world();
    const foreign = await milestone(other, 'project', 'elsewhere');
    const own = await milestone(w, 'project', 'here');
    const mr = await openMr(w, { milestone_id: foreign.id });
    expect(mr.milestone).toBeNull();
    await edit(w, mr.iid, { milestone_id: own.id });
    expect((await edit(w, mr.iid, { milestone_id: 2147483647 })).milestone).toBeNull();
  });

  it('refuses a label name GitLab refuses, without creating the merge request', async () => {
    const w = await world();
    await ok(
      'POST',
      `/projects/${w.project.id}/repository/branches?branch=long&ref=main`,
      w.developer.token,
      undefined,
      201,
    );
    const res = await call('POST', `/projects/${w.project.id}/merge_requests`, w.developer.token, {
      source_branch: 'long',
      target_branch: 'main',
      title: 'x',
      labels: ['fine', 'x'.repeat(256)],
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toEqual({ message: { title: ['is too long (maximum is 255 characters)'] } });
    expect(await ok('GET', `/projects/${w.project.id}/merge_requests`, w.owner.token)).toEqual([]);
    expect(await ok('GET', `/projects/${w.project.id}/labels`, w.owner.token)).toEqual([]);
  });

  it('deleting a label unlinks it; deleting a milestone unsets it', async () => {
    const w = await world();
    const bug = await label(w, 'project', 'bug');
    const m = await milestone(w, 'project', 'v3');
    const mr = await openMr(w, { labels: 'bug,keep', milestone_id: m.id });
    await ok('DELETE', `/projects/${w.project.id}/labels/${bug.id}`, w.owner.token, undefined, 204);
    await ok('DELETE', `/projects/${w.project.id}/milestones/${m.id}`, w.owner.token, undefined, 204);
    const after = await ok('GET', `/projects/${w.project.id}/merge_requests/${mr.iid}`, w.owner.token);
    expect(after).toMatchObject({ labels: ['keep'], milestone: null });
  });
});

describe('list filters', () => {
  let w: World;
  const iids: Record<string, number> = {};

  beforeAll(async () => {
    w = await world();
    await label(w, 'group', 'Bug', '#ffffff');
    const v1 = await milestone(w, 'project', 'v1');
    const v2 = await milestone(w, 'group', 'v2', { start_date: '2000-01-01' });
    await milestone(w, 'project', 'later', { due_date: '9998-01-01' });
    const soon = await milestone(w, 'project', 'soon', { due_date: '9990-01-01' });
    iids.bugBackend = (await openMr(w, { labels: 'bug,backend', milestone_id: v1.id })).iid as number;
    iids.bug = (await openMr(w, { labels: 'Bug', milestone_id: v2.id })).iid as number;
    iids.ui = (await openMr(w, { labels: 'ui', milestone_id: soon.id })).iid as number;
    iids.none = (await openMr(w)).iid as number;
  });

  const cases: Array<[string, string, string[]]> = [
    ['labels all match, ignoring case', 'labels=BUG,backend', ['bugBackend']],
    ['one label', 'labels=bug', ['bugBackend', 'bug']],
    ['labels None', 'labels=None', ['none']],
    ['labels Any', 'labels=Any', ['bugBackend', 'bug', 'ui']],
    ['not[labels]', 'not[labels]=backend,UI', ['bug', 'none']],
    ['milestone None', 'milestone=None', ['none']],
    ['milestone Any', 'milestone=Any', ['bugBackend', 'bug', 'ui']],
    ['milestone title', 'milestone=v2', ['bug']],
    ['milestone Started', 'milestone=Started', ['bug']],
    ['milestone Upcoming', 'milestone=Upcoming', ['ui']],
    ['not[milestone]', 'not[milestone]=v1', ['bug', 'ui', 'none']],
    ['labels and milestone', 'labels=bug&milestone=v1', ['bugBackend']],
  ];

  it.each(cases)('%s (%s)', async (_name, query, expected) => {
    const want = expected.map((key) => iids[key]).sort();
    for (const path of [
      `/projects/${w.project.id}/merge_requests`,
      `/groups/${w.group.id}/merge_requests`,
      `/merge_requests?scope=all`,
    ]) {
      const sep = path.includes('?') ? '&' : '?';
      const body = (await ok('GET', `${path}${sep}${query}`, w.developer.token)) as unknown as Json[];
      const found = body.filter((mr) => mr.project_id === w.project.id).map((mr) => mr.iid as number);
      expect(found.sort(), path).toEqual(want);
    }
  });

  it('with_labels_details returns GitLab label objects', async () => {
    const body = (await ok(
      'GET',
      `/projects/${w.project.id}/merge_requests?labels=backend&with_labels_details=true`,
      w.developer.token,
    )) as unknown as Json[];
    expect(body[0].labels).toEqual([
      {
        id: expect.any(Number),
        name: 'Bug',
        color: '#ffffff',
        description: null,
        description_html: null,
        text_color: '#1F1E24',
      },
      {
        id: expect.any(Number),
        name: 'backend',
        color: '#6699cc',
        description: null,
        description_html: null,
        text_color: '#FFFFFF',
      },
    ]);
  });

  it('counts open merge requests per label (with_counts=true)', async () => {
    const project = (await ok(
      'GET',
      `/projects/${w.project.id}/labels?with_counts=true`,
      w.developer.token,
    )) as unknown as Json[];
    expect(Object.fromEntries(project.map((l) => [l.name, l.open_merge_requests_count]))).toEqual({
      backend: 1,
      Bug: 2,
      ui: 1,
    });
    await edit(w, iids.bug, { state_event: 'close' });
    const group = (await ok(
      'GET',
      `/groups/${w.group.id}/labels?with_counts=true`,
      w.owner.token,
    )) as unknown as Json[];
    expect(group.find((l) => l.name === 'Bug')?.open_merge_requests_count).toBe(1);
    await edit(w, iids.bug, { state_event: 'reopen' });
  });
});

describe('the label ids each merge request keeps for the filters', () => {
  /** Merge requests whose `label_ids` differ from their links. */
  const drift = () =>
    server.dataSource.query(`SELECT mr.id, mr.label_ids, l.ids FROM merge_requests mr
      LEFT JOIN (SELECT merge_request_id, array_agg(label_id ORDER BY label_id) AS ids
                 FROM merge_request_labels GROUP BY merge_request_id) l ON l.merge_request_id = mr.id
      WHERE ARRAY(SELECT id FROM unnest(mr.label_ids) id ORDER BY id) IS DISTINCT FROM COALESCE(l.ids, '{}')`);
  const iidsOf = async (project: Project, query: string) =>
    ((await ok('GET', `/projects/${project.id}/merge_requests?${query}`, w.owner.token)) as unknown as Json[])
      .map((mr) => mr.iid)
      .sort();
  let w: World;

  it('follow every change of the links: edits, label deletions, promotions, merge request deletions', async () => {
    w = await world();
    const sibling = await server.factories.projectWithReadme({ owner: w.owner, namespace: w.subgroup });
    const team = await label(w, 'group', 'Team');
    const a = await openMr(w, { labels: 'bug,team,docs' });
    const b = await openMr(w, { labels: 'docs' });
    const c = await openMr({ ...w, project: sibling, developer: w.owner }, { labels: 'bug' });
    expect(await drift()).toEqual([]);
    await edit(w, a.iid, { add_labels: 'ui', remove_labels: 'docs' });
    await edit(w, b.iid, { labels: 'bug,UI' });
    expect(await drift()).toEqual([]);
    expect(await iidsOf(w.project, 'labels=bug,ui')).toEqual([a.iid, b.iid].sort());
    await ok('DELETE', `/groups/${w.group.id}/labels/${team.id as number}`, w.owner.token, undefined, 204);
    expect(await drift()).toEqual([]);
    expect(await iidsOf(w.project, 'labels=Any&not[labels]=team')).toEqual([a.iid, b.iid].sort());
    // The project's `bug` becomes the subgroup's; the sibling's `bug` is merged into it.
    const bug = (
      (await ok('GET', `/projects/${w.project.id}/labels`, w.owner.token)) as unknown as Json[]
    ).find((l) => l.name === 'bug')!;
    await ok('PUT', `/projects/${w.project.id}/labels/${bug.id as number}/promote`, w.owner.token);
    expect(await drift()).toEqual([]);
    expect(await iidsOf(sibling, 'labels=BUG')).toEqual([c.iid]);
    expect(await iidsOf(w.project, 'labels=bug')).toEqual([a.iid, b.iid].sort());
    await ok('DELETE', `/projects/${w.project.id}/merge_requests/${a.iid}`, w.owner.token, undefined, 204);
    expect(await drift()).toEqual([]);
    expect(await iidsOf(w.project, 'labels=ui')).toEqual([b.iid]);
    expect(await iidsOf(w.project, 'labels=None')).toEqual([]);
  });
});

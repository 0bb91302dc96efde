/** Label subscriptions (per project and at the group level) and promoting a project label to its group. */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Namespace } from '../../src/namespaces/namespace.entity.js';
import type { Project } from '../../src/projects/project.entity.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const { Guest, Planner, Reporter, Owner } = AccessLevel;
type Json = Record<string, unknown>;

const labels = (project: Project, rest = '') => `/projects/${project.id}/labels${rest}`;
const groupLabels = (group: Namespace, rest = '') => `/groups/${group.id}/labels${rest}`;

async function ok(method: string, path: string, token: string, json?: Json, status = 201): Promise<Json> {
  const response = await server.request(method, path, { token, json });
  expect(response.status, `${method} ${path}: ${response.text}`).toBe(status);
  return response.body as Json;
}

/** A private group with a private project, its owner, a label `bug` of each, and a Guest of the project. */
async function setup() {
  const f = server.factories;
  const owner = await f.user();
  const group = await f.group({ visibility: 'private' });
  await f.member(group, owner.user, Owner);
  const project = await f.projectWithReadme({ owner, namespace: group, visibility: 'private' });
  const guest = await f.memberOf(project, Guest);
  const own = await ok('POST', labels(project), owner.token, { name: 'bug', color: '#FFF' });
  const shared = await ok('POST', groupLabels(group), owner.token, { name: 'security', color: '#000' });
  return { owner, group, project, guest, own, shared };
}

describe('label subscriptions', () => {
  it('subscribes and unsubscribes the caller alone, and answers 304 when nothing changes', async () => {
    const { owner, project, guest } = await setup();
    const subscribed = await ok('POST', labels(project, '/bug/subscribe'), guest.token);
    expect(subscribed).toMatchObject({ name: 'bug', subscribed: true, is_project_label: true });
    const again = await server.request('POST', labels(project, '/bug/subscribe'), { token: guest.token });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    // The subscription is the guest's: the owner's reads say false.
    expect(await ok('GET', labels(project, '/bug'), guest.token, undefined, 200)).toMatchObject({
      subscribed: true,
    });
    expect(await ok('GET', labels(project, '/bug'), owner.token, undefined, 200)).toMatchObject({
      subscribed: false,
    });
    const listed = (await ok('GET', labels(project), guest.token, undefined, 200)) as unknown as Json[];
    expect(listed.map((l) => [l.name, l.subscribed])).toEqual([
      ['bug', true],
      ['security', false],
    ]);
    const unsubscribed = await ok('POST', labels(project, '/bug/unsubscribe'), guest.token);
    expect(unsubscribed).toMatchObject({ name: 'bug', subscribed: false });
    const twice = await server.request('POST', labels(project, '/bug/unsubscribe'), { token: guest.token });
    expect(twice.status).toBe(304);
  });

  it('keeps a group label’s subscriptions per project and at the group level, one level at a time', async () => {
    const { owner, group, project, shared } = await setup();
    const inProject = await ok('POST', labels(project, `/${shared.id as number}/subscribe`), owner.token);
    expect(inProject).toMatchObject({ id: shared.id, subscribed: true, is_project_label: false });
    expect(await ok('GET', groupLabels(group, '/security'), owner.token, undefined, 200)).toMatchObject({
      subscribed: false,
    });
    // Subscribing at the group level ends the project's subscription, and the other way round.
    const atGroup = await ok('POST', groupLabels(group, '/security/subscribe'), owner.token);
    expect(atGroup).toMatchObject({ subscribed: true });
    expect(await ok('GET', labels(project, '/security'), owner.token, undefined, 200)).toMatchObject({
      subscribed: false,
    });
    const groupList = (await ok('GET', groupLabels(group), owner.token, undefined, 200)) as unknown as Json[];
    expect(groupList.map((l) => [l.name, l.subscribed])).toEqual([['security', true]]);
    await ok('POST', labels(project, '/security/subscribe'), owner.token);
    expect(await ok('GET', groupLabels(group, '/security'), owner.token, undefined, 200)).toMatchObject({
      subscribed: false,
    });
    const notAtGroup = await server.request('POST', groupLabels(group, '/security/unsubscribe'), {
      token: owner.token,
    });
    expect(notAtGroup.status).toBe(304);
  });

  it('needs a token and a label the subject can use', async () => {
    const { owner, group, project, guest } = await setup();
    const outsider = await server.factories.user();
    const anonymous = await server.request('POST', labels(project, '/bug/subscribe'));
    expect(anonymous.status).toBe(401);
    const hidden = await server.request('POST', labels(project, '/bug/subscribe'), { token: outsider.token });
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ message: '404 Project Not Found' });
    for (const path of [labels(project, '/nope/subscribe'), groupLabels(group, '/bug/subscribe')]) {
      const missing = await server.request('POST', path, { token: owner.token });
      expect(missing.status, path).toBe(404);
      expect(missing.body).toEqual({ message: '404 Label Not Found' });
    }
    const ofGroup = await server.request('POST', groupLabels(group, '/security/subscribe'), {
      token: guest.token,
    });
    // The project's Guest belongs to nothing of the private group's but the project: it sees the group.
    expect(ofGroup.status, ofGroup.text).toBe(201);
  });
});

describe('promoting a project label', () => {
  /**
   * A group with projects A and B and a subgroup project C, each with a label `bug`, and a group label
   * `bug` made after them; B's merge request carries B's `bug`, B gives its `bug` priority 3.
   */
  async function promotionWorld() {
    const f = server.factories;
    const owner = await f.user();
    const group = await f.group({ visibility: 'private' });
    const subgroup = await f.group({ visibility: 'private', parent: group });
    await f.member(group, owner.user, Owner);
    const a = await f.projectWithReadme({ owner, namespace: group, visibility: 'private' });
    const b = await f.projectWithReadme({ owner, namespace: group, visibility: 'private' });
    const c = await f.projectWithReadme({ owner, namespace: subgroup, visibility: 'private' });
    const bugA = await ok('POST', labels(a), owner.token, { name: 'bug', color: '#d9534f', priority: 1 });
    const bugB = await ok('POST', labels(b), owner.token, { name: 'bug', color: '#FFF', priority: 3 });
    const bugC = await ok('POST', labels(c), owner.token, { name: 'bug', color: '#FFF' });
    await ok('POST', `/projects/${b.id}/repository/branches`, owner.token, { branch: 'fix', ref: 'main' });
    await ok('POST', `/projects/${b.id}/repository/commits`, owner.token, {
      branch: 'fix',
      commit_message: 'Fix',
      actions: [{ action: 'create', file_path: 'fix.txt', content: 'fix\n' }],
    });
    await ok('POST', `/projects/${b.id}/merge_requests`, owner.token, {
      source_branch: 'fix',
      target_branch: 'main',
      title: 'Fix',
      labels: 'bug',
    });
    const bugGroup = await ok('POST', groupLabels(group), owner.token, { name: 'bug', color: '#000' });
    return { owner, group, subgroup, a, b, c, bugA, bugB, bugC, bugGroup };
  }

  it('keeps the label’s id and merges the group’s labels of the same name into it', async () => {
    const w = await promotionWorld();
    const watcher = await server.factories.memberOf(w.b, Reporter);
    const groupWatcher = await server.factories.memberOf(w.group, Reporter);
    await ok('POST', labels(w.b, `/${w.bugB.id as number}/subscribe`), watcher.token);
    await ok('POST', groupLabels(w.group, `/${w.bugGroup.id as number}/subscribe`), groupWatcher.token);

    const promoted = await ok('PUT', labels(w.a, '/bug/promote'), w.owner.token, undefined, 200);
    expect(promoted).toEqual({
      id: w.bugA.id,
      name: 'bug',
      color: '#d9534f',
      text_color: '#FFFFFF',
      description: null,
      description_html: null,
      subscribed: false,
    });
    expect(await ok('GET', labels(w.a, '/bug'), w.owner.token, undefined, 200)).toMatchObject({
      id: w.bugA.id,
      is_project_label: false,
      priority: 1,
    });
    // B now uses the group's label, with B's priority, on its merge request, for its subscriber.
    const inB = (await ok('GET', labels(w.b), w.owner.token, undefined, 200)) as unknown as Json[];
    expect(inB.map((l) => [l.id, l.name, l.priority, l.is_project_label])).toEqual([
      [w.bugA.id, 'bug', 3, false],
    ]);
    const mr = await ok('GET', `/projects/${w.b.id}/merge_requests/1`, w.owner.token, undefined, 200);
    expect(mr.labels).toEqual(['bug']);
    const [detailed] = (await ok(
      'GET',
      `/projects/${w.b.id}/merge_requests?with_labels_details=true`,
      w.owner.token,
      undefined,
      200,
    )) as unknown as Json[];
    expect((detailed.labels as Json[]).map((l) => l.id)).toEqual([w.bugA.id]);
    expect(await ok('GET', labels(w.b, '/bug'), watcher.token, undefined, 200)).toMatchObject({
      subscribed: true,
    });
    expect(await ok('GET', groupLabels(w.group, '/bug'), groupWatcher.token, undefined, 200)).toMatchObject({
      id: w.bugA.id,
      subscribed: true,
    });
    // The merged labels are gone; the subgroup's project keeps its own.
    for (const id of [w.bugB.id, w.bugGroup.id]) {
      const gone = await server.request('GET', labels(w.b, `/${id as number}`), { token: w.owner.token });
      expect(gone.status).toBe(404);
    }
    const inC = (await ok('GET', labels(w.c), w.owner.token, undefined, 200)) as unknown as Json[];
    expect(inC.map((l) => [l.id, l.is_project_label])).toEqual([
      [w.bugA.id, false],
      [w.bugC.id, true],
    ]);
  });

  it('takes the older form with the name in the body', async () => {
    const w = await promotionWorld();
    const missing = await server.request('PUT', labels(w.a, '/promote'), { token: w.owner.token, json: {} });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: 'name is missing' });
    const promoted = await ok('PUT', labels(w.a, '/promote'), w.owner.token, { name: 'bug' }, 200);
    expect(promoted).toMatchObject({ id: w.bugA.id, name: 'bug' });
    expect(await ok('GET', groupLabels(w.group, '/bug'), w.owner.token, undefined, 200)).toMatchObject({
      id: w.bugA.id,
    });
  });

  it.each<[string, number, number, number, Json | null]>([
    ['a Planner of the project and of the group', 200, Planner, Planner, null],
    ['a Planner of the project only', 403, Planner, 0, { message: '403 Forbidden' }],
    ['a Guest of the project', 403, Guest, 0, { message: '403 Forbidden' }],
    ['a Planner of the group, and so of its project', 200, 0, Planner, null],
  ])('answers %s: %s', async (_, status, projectLevel, groupLevel, body) => {
    const { group, project } = await setup();
    const user = await server.factories.memberOf(project, projectLevel);
    if (groupLevel) await server.factories.member(group, user.user, groupLevel);
    const response = await server.request('PUT', labels(project, '/bug/promote'), { token: user.token });
    expect(response.status, response.text).toBe(status);
    if (body) expect(response.body).toEqual(body);
  });

  it('refuses a project outside a group, a group label, and an unknown one', async () => {
    const owner = await server.factories.user();
    const personal = await server.factories.projectWithReadme({ owner });
    await ok('POST', labels(personal), owner.token, { name: 'bug', color: '#FFF' });
    const outside = await server.request('PUT', labels(personal, '/bug/promote'), { token: owner.token });
    expect(outside.status).toBe(400);
    expect(outside.body).toEqual({ message: 'Failed to promote project label to group label' });

    const w = await setup();
    for (const name of ['security', 'nope']) {
      const response = await server.request('PUT', labels(w.project, `/${name}/promote`), {
        token: w.owner.token,
      });
      expect(response.status, name).toBe(404);
      expect(response.body).toEqual({ message: '404 Label Not Found' });
    }
  });
});

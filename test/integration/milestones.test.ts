/** Project and group milestones: iids, states, dates, title rules, filters, permissions. */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { castDate } from '../../src/milestones/milestones.service.js';
import type { Namespace } from '../../src/namespaces/namespace.entity.js';
import type { Project } from '../../src/projects/project.entity.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const { Guest, Planner, Reporter } = AccessLevel;
type Json = Record<string, unknown>;

async function setup() {
  const f = server.factories;
  const owner = await f.user();
  const group = await f.group({ visibility: 'private' });
  const subgroup = await f.group({ visibility: 'private', parent: group });
  await f.member(group, owner.user, AccessLevel.Owner);
  const project = await f.projectWithReadme({ owner, namespace: subgroup });
  return { owner, group, subgroup, project, guest: await f.memberOf(project, Guest) };
}

const milestones = (project: Project, rest = '') => `/projects/${project.id}/milestones${rest}`;
const groupMilestones = (group: Namespace, rest = '') => `/groups/${group.id}/milestones${rest}`;

async function create(path: string, token: string, json: Json) {
  const response = await server.request('POST', path, { token, json });
  expect(response.status, response.text).toBe(201);
  return response.body as Json;
}

const titles = (body: unknown) => (body as Json[]).map((m) => m.title);

describe('dates as Rails casts them', () => {
  it.each([
    ['2026-03-01', '2026-03-01'],
    ['2026-3-1', '2026-03-01'],
    ['2026-03-01T10:00:00Z', '2026-03-01'],
    ['2024-02-29', '2024-02-29'],
    ['2026-02-29', null],
    ['2026-13-01', null],
    ['tomorrow', null],
    ['', null],
    ['10000-01-01', '10000-01-01'],
    ['0000-01-01', null],
    ['9'.repeat(100_000) + '-01-01', null],
  ])('%j is %j', (input, expected) => {
    expect(castDate(input)).toBe(expected);
  });
});

describe('project milestones', () => {
  it('creates, reads, updates, closes, reopens and deletes', async () => {
    const s = await setup();
    const first = await create(milestones(s.project), s.owner.token, {
      title: ' <i>v1.0</i> ',
      description: 'First',
      start_date: '2026-03-01',
      due_date: '2026-03-31',
    });
    const path = `${s.subgroup.fullPath}/${s.project.path}`;
    expect(first).toEqual({
      id: expect.any(Number),
      iid: 1,
      project_id: s.project.id,
      title: 'v1.0',
      description: 'First',
      state: 'active',
      created_at: expect.any(String),
      updated_at: expect.any(String),
      start_date: '2026-03-01',
      due_date: '2026-03-31',
      expired: expect.any(Boolean),
      web_url: `${server.config.externalUrl}/${path}/-/milestones/1`,
    });
    const second = await create(milestones(s.project), s.owner.token, { title: 'v2.0' });
    expect(second).toMatchObject({
      iid: 2,
      due_date: null,
      start_date: null,
      expired: false,
      description: null,
    });

    const read = await server.request('GET', milestones(s.project, `/${first.id as number}`), {
      token: s.guest.token,
    });
    expect(read.body).toEqual(first);

    const closed = await server.request('PUT', milestones(s.project, `/${first.id as number}`), {
      token: s.owner.token,
      json: { state_event: 'close', title: 'v1.0.0', due_date: '' },
    });
    expect(closed.body).toMatchObject({ state: 'closed', title: 'v1.0.0', due_date: null });
    const reopened = await server.request('PUT', milestones(s.project, `/${first.id as number}`), {
      token: s.owner.token,
      form: { state_event: 'activate' },
    });
    expect(reopened.body).toMatchObject({ state: 'active' });

    const removed = await server.request('DELETE', milestones(s.project, `/${first.id as number}`), {
      token: s.owner.token,
    });
    expect(removed.status).toBe(204);
    const gone = await server.request('GET', milestones(s.project, `/${first.id as number}`), {
      token: s.owner.token,
    });
    expect([gone.status, gone.body]).toEqual([404, { message: '404 Not found' }]);
    // iids are not reused.
    expect(await create(milestones(s.project), s.owner.token, { title: 'v3.0' })).toMatchObject({ iid: 3 });
  });

  it('is expired once its due date has passed', async () => {
    const s = await setup();
    const past = await create(milestones(s.project), s.owner.token, {
      title: 'past',
      due_date: '2000-01-01',
    });
    const future = await create(milestones(s.project), s.owner.token, {
      title: 'future',
      due_date: '2999-01-01',
    });
    expect([past.expired, future.expired]).toEqual([true, false]);
  });

  it('filters and orders the list, and pages through it', async () => {
    const s = await setup();
    await create(groupMilestones(s.subgroup), s.owner.token, { title: 'Group Q1', due_date: '2026-01-15' });
    await create(groupMilestones(s.group), s.owner.token, { title: 'Top Q1', due_date: '2026-01-20' });
    const a = await create(milestones(s.project), s.owner.token, { title: 'beta', due_date: '2026-02-01' });
    await create(milestones(s.project), s.owner.token, { title: 'Alpha', due_date: '2026-02-01' });
    await create(milestones(s.project), s.owner.token, { title: 'backlog', description: 'Someday maybe' });
    await server.request('PUT', milestones(s.project, `/${a.id as number}`), {
      token: s.owner.token,
      json: { state_event: 'close' },
    });
    const list = async (query: string) =>
      titles((await server.request('GET', milestones(s.project, query), { token: s.guest.token })).body);
    expect(await list('')).toEqual(['Alpha', 'beta', 'backlog']);
    expect(await list('?include_ancestors=true')).toEqual(['Group Q1', 'Top Q1', 'Alpha', 'beta', 'backlog']);
    expect(await list('?include_parent_milestones=true&state=active')).toEqual([
      'Group Q1',
      'Top Q1',
      'Alpha',
      'backlog',
    ]);
    expect(await list('?state=closed')).toEqual(['beta']);
    expect(await list('?title=Alpha')).toEqual(['Alpha']);
    expect(await list('?title=alpha')).toEqual([]);
    expect(await list('?search=SOMEDAY')).toEqual(['backlog']);
    expect(await list('?iids[]=1&iids[]=3')).toEqual(['beta', 'backlog']);
    expect(await list('?iids=2,3')).toEqual(['Alpha', 'backlog']);
    expect(await list('?updated_after=2999-01-01T00:00:00Z')).toEqual([]);
    expect(await list('?updated_before=2999-01-01T00:00:00Z')).toEqual(['Alpha', 'beta', 'backlog']);

    const page = await server.request('GET', milestones(s.project, '?per_page=2&page=2'), {
      token: s.guest.token,
    });
    expect(titles(page.body)).toEqual(['backlog']);
    expect(page.headers.get('x-total')).toBe('3');
    expect(page.headers.get('x-prev-page')).toBe('1');

    const both = await server.request(
      'GET',
      milestones(s.project, '?include_ancestors=true&include_parent_milestones=true'),
      {
        token: s.guest.token,
      },
    );
    expect(both.body).toEqual({
      error: 'include_ancestors, include_parent_milestones are mutually exclusive',
    });
  });

  it.each([
    [{}, 400, { error: 'title is missing' }],
    [{ title: '  ' }, 400, { message: 'Failed to create milestone {:title=>["can\'t be blank"]}' }],
    [
      { title: 'dup' },
      400,
      {
        message:
          'Failed to create milestone {:title=>["already being used for another group or project milestone."]}',
      },
    ],
    [
      { title: 'group-dup' },
      400,
      {
        message:
          'Failed to create milestone {:title=>["already being used for another group or project milestone."]}',
      },
    ],
    [
      { title: 'x', start_date: '2026-03-02', due_date: '2026-03-01' },
      400,
      { message: 'Failed to create milestone {:due_date=>["must be greater than start date"]}' },
    ],
    [
      { title: 'x', start_date: '2026-03-01', due_date: '2026-03-01' },
      400,
      { message: 'Failed to create milestone {:due_date=>["must be greater than start date"]}' },
    ],
    [
      { title: 'x', due_date: '10000-01-01' },
      400,
      { message: 'Failed to create milestone {:due_date=>["date must not be after 9999-12-31"]}' },
    ],
    [{ title: 'Dup' }, 201, undefined],
    [{ title: 'x', due_date: 'soon' }, 201, undefined],
  ])('creating %j answers %i', async (json, status, body) => {
    const s = await setup();
    await create(milestones(s.project), s.owner.token, { title: 'dup' });
    await create(groupMilestones(s.subgroup), s.owner.token, { title: 'group-dup' });
    const response = await server.request('POST', milestones(s.project), { token: s.owner.token, json });
    expect(response.status, response.text).toBe(status);
    if (body) expect(response.body).toEqual(body);
  });

  it.each([
    [
      {},
      {
        error:
          'title, description, start_date, due_date, state_event are missing, at least one parameter must be provided',
      },
    ],
    [{ state_event: 'finish' }, { error: 'state_event does not have a valid value' }],
    [
      { title: 'other' },
      {
        message:
          'Failed to update milestone {:title=>["already being used for another group or project milestone."]}',
      },
    ],
    [
      { start_date: '2026-05-01' },
      { message: 'Failed to update milestone {:due_date=>["must be greater than start date"]}' },
    ],
  ])('updating with %j answers 400', async (json, body) => {
    const s = await setup();
    await create(milestones(s.project), s.owner.token, { title: 'other' });
    const m = await create(milestones(s.project), s.owner.token, { title: 'mine', due_date: '2026-04-01' });
    const response = await server.request('PUT', milestones(s.project, `/${m.id as number}`), {
      token: s.owner.token,
      json,
    });
    expect([response.status, response.body]).toEqual([400, body]);
  });

  it('finds no milestone of another project or of a group through a project', async () => {
    const s = await setup();
    const groupMilestone = await create(groupMilestones(s.subgroup), s.owner.token, { title: 'g' });
    const other = await server.factories.projectWithReadme({ owner: s.owner, namespace: s.subgroup });
    const elsewhere = await create(milestones(other), s.owner.token, { title: 'o' });
    for (const id of [groupMilestone.id, elsewhere.id, 2147483647]) {
      const response = await server.request('GET', milestones(s.project, `/${id as number}`), {
        token: s.owner.token,
      });
      expect([response.status, response.body]).toEqual([404, { message: '404 Not found' }]);
    }
  });

  it.each([
    ['guest', Guest, 403],
    ['planner', Planner, 201],
    ['reporter', Reporter, 201],
  ])('a %s (%i) creating a milestone gets %i', async (_role, level, status) => {
    const { project } = await server.factories.ownedProjectWithReadme();
    const member = await server.factories.memberOf(project, level);
    const response = await server.request('POST', milestones(project), {
      token: member.token,
      json: { title: `m${level}` },
    });
    expect(response.status).toBe(status);
  });

  it('needs a token, even for a public project', async () => {
    const { project } = await server.factories.ownedProjectWithReadme({ visibility: 'public' });
    expect((await server.request('GET', milestones(project))).status).toBe(401);
  });
});

describe('group milestones', () => {
  it('numbers them per group and lists ancestors’ and descendants’', async () => {
    const s = await setup();
    const top = await create(groupMilestones(s.group), s.owner.token, { title: 'Top' });
    const sub = await create(groupMilestones(s.subgroup), s.owner.token, { title: 'Sub' });
    await create(milestones(s.project), s.owner.token, { title: 'Leaf' });
    expect([top.iid, sub.iid]).toEqual([1, 1]);
    expect(top).toMatchObject({
      group_id: s.group.id,
      web_url: `${server.config.externalUrl}/groups/${s.group.fullPath}/-/milestones/1`,
    });
    expect(top).not.toHaveProperty('project_id');
    const list = async (group: Namespace, query: string) =>
      titles((await server.request('GET', groupMilestones(group, query), { token: s.owner.token })).body);
    expect(await list(s.subgroup, '')).toEqual(['Sub']);
    expect(await list(s.subgroup, '?include_ancestors=true')).toEqual(['Sub', 'Top']);
    expect(await list(s.group, '?include_descendants=true')).toEqual(['Leaf', 'Sub', 'Top']);

    const closed = await server.request('PUT', groupMilestones(s.group, `/${top.id as number}`), {
      token: s.owner.token,
      json: { state_event: 'close' },
    });
    expect(closed.body).toMatchObject({ state: 'closed' });
    expect(
      (
        await server.request('GET', groupMilestones(s.subgroup, `/${top.id as number}`), {
          token: s.owner.token,
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await server.request('DELETE', groupMilestones(s.group, `/${top.id as number}`), {
          token: s.owner.token,
        })
      ).status,
    ).toBe(204);
  });

  it('refuses a title a project directly in the group already uses', async () => {
    const s = await setup();
    await create(milestones(s.project), s.owner.token, { title: 'shared' });
    const response = await server.request('POST', groupMilestones(s.subgroup), {
      token: s.owner.token,
      json: { title: 'shared' },
    });
    expect(response.body).toEqual({
      message:
        'Failed to create milestone {:title=>["already being used for another group or project milestone."]}',
    });
    // The grandparent group is not checked against the project, as in GitLab.
    await create(groupMilestones(s.group), s.owner.token, { title: 'shared' });
  });

  it('gives each of many concurrent creations its own iid', async () => {
    const s = await setup();
    const created = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        create(groupMilestones(s.group), s.owner.token, { title: `c${i}` }),
      ),
    );
    expect(created.map((m) => m.iid).sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

describe('the service merge requests use', () => {
  it('finds a milestone a project may use by id or title', async () => {
    const s = await setup();
    const own = await create(milestones(s.project), s.owner.token, { title: 'own' });
    const inherited = await create(groupMilestones(s.group), s.owner.token, { title: 'inherited' });
    const stranger = await server.factories.ownedProjectWithReadme();
    const foreign = await create(milestones(stranger.project), stranger.owner.token, { title: 'foreign' });
    const m = server.services.milestones;
    expect((await m.availableToProject(s.project.id, { id: own.id as number }))?.title).toBe('own');
    expect((await m.availableToProject(s.project.id, { title: 'inherited' }))?.id).toBe(inherited.id);
    expect(await m.availableToProject(s.project.id, { id: foreign.id as number })).toBeNull();
    expect(await m.availableToProject(s.project.id, { title: 'INHERITED' })).toBeNull();
  });
});

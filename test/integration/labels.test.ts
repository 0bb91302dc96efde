/** Project and group labels: names, colours, inheritance down the group tree, priorities, permissions. */
import { describe, expect, it, vi } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { DARK_TEXT, LIGHT_TEXT, parseColor, textColorFor } from '../../src/labels/colors.js';
import type { Namespace } from '../../src/namespaces/namespace.entity.js';
import type { Project } from '../../src/projects/project.entity.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const { Guest, Planner, Reporter, Maintainer } = AccessLevel;
type Json = Record<string, unknown>;

/** A group with a subgroup holding a project, an owner of all, and members of the project by role. */
async function setup() {
  const f = server.factories;
  const owner = await f.user();
  const group = await f.group({ visibility: 'private' });
  const subgroup = await f.group({ visibility: 'private', parent: group });
  await f.member(group, owner.user, AccessLevel.Owner);
  const project = await f.projectWithReadme({ owner, namespace: subgroup });
  return {
    owner,
    group,
    subgroup,
    project,
    guest: await f.memberOf(project, Guest),
    planner: await f.memberOf(project, Planner),
    reporter: await f.memberOf(project, Reporter),
  };
}

const labels = (project: Project, rest = '') => `/projects/${project.id}/labels${rest}`;
const groupLabels = (group: Namespace, rest = '') => `/groups/${group.id}/labels${rest}`;

async function create(path: string, token: string, json: Json) {
  const response = await server.request('POST', path, { token, json });
  expect(response.status, response.text).toBe(201);
  return response.body as Json;
}

describe('colours', () => {
  it.each([
    ['#d9534f', '#d9534f', LIGHT_TEXT],
    ['#FFF', '#FFF', DARK_TEXT],
    ['#ffecdb', '#ffecdb', DARK_TEXT],
    ['red', '#FF0000', LIGHT_TEXT],
    [' SteelBlue ', '#4682B4', LIGHT_TEXT],
    ['yellow', '#FFFF00', DARK_TEXT],
    ['', '#6699cc', LIGHT_TEXT],
  ])('reads %j as %s with text %s', (input, stored, text) => {
    expect(parseColor(input)).toBe(stored);
    expect(textColorFor(parseColor(input)!)).toBe(text);
  });

  it.each(['#12345', 'FF0000', '#GGGGGG', 'cyan', 'not a colour'])('refuses %j', (input) => {
    expect(parseColor(input)).toBeUndefined();
  });
});

describe('project labels', () => {
  it('creates, reads, lists, updates and deletes a label', async () => {
    const s = await setup();
    const created = await create(labels(s.project), s.planner.token, {
      name: '  <b>bug</b> ',
      color: '#d9534f',
      description: 'Broken <script>alert(1)</script>& ugly',
      priority: 3,
    });
    expect(created).toEqual({
      id: expect.any(Number),
      name: 'bug',
      color: '#d9534f',
      text_color: '#FFFFFF',
      description: 'Broken & ugly',
      description_html: 'Broken &amp; ugly',
      subscribed: false,
      priority: 3,
      is_project_label: true,
    });
    const byName = await server.request('GET', labels(s.project, '/bug'), { token: s.guest.token });
    expect(byName.body).toEqual(created);
    const byId = await server.request('GET', labels(s.project, `/${created.id as number}`), {
      token: s.guest.token,
    });
    expect(byId.body).toEqual(created);

    const updated = await server.request('PUT', labels(s.project, '/bug'), {
      token: s.reporter.token,
      json: { new_name: 'defect', color: 'white', priority: null },
    });
    expect(updated.body).toMatchObject({
      name: 'defect',
      color: '#FFFFFF',
      text_color: '#1F1E24',
      priority: null,
    });

    const removed = await server.request('DELETE', labels(s.project, '/defect'), { token: s.reporter.token });
    expect(removed.status).toBe(204);
    const gone = await server.request('GET', labels(s.project, '/defect'), { token: s.guest.token });
    expect([gone.status, gone.body]).toEqual([404, { message: '404 Label Not Found' }]);
  });

  it('lists its own and its ancestor groups’ labels by name, with search, counts and pages', async () => {
    const s = await setup();
    await create(groupLabels(s.group), s.owner.token, { name: 'security', color: '#FF0000' });
    await create(groupLabels(s.subgroup), s.owner.token, { name: 'backend', color: '#428BCA' });
    await create(labels(s.project), s.owner.token, { name: 'bug', color: '#d9534f', description: 'defects' });
    await create(labels(s.project), s.owner.token, { name: 'docs', color: '#FFF' });

    const all = await server.request('GET', labels(s.project), { token: s.guest.token });
    expect((all.body as Json[]).map((l) => [l.name, l.is_project_label])).toEqual([
      ['backend', false],
      ['bug', true],
      ['docs', true],
      ['security', false],
    ]);
    expect(all.body as Json[]).not.toContainEqual(expect.objectContaining({ open_issues_count: 0 }));
    const own = await server.request('GET', labels(s.project, '?include_ancestor_groups=false'), {
      token: s.guest.token,
    });
    expect((own.body as Json[]).map((l) => l.name)).toEqual(['bug', 'docs']);
    const searched = await server.request('GET', labels(s.project, '?search=DEFECT&with_counts=true'), {
      token: s.guest.token,
    });
    expect(searched.body).toEqual([
      expect.objectContaining({
        name: 'bug',
        open_issues_count: 0,
        closed_issues_count: 0,
        open_merge_requests_count: 0,
      }),
    ]);
    const page = await server.request('GET', labels(s.project, '?per_page=3&page=2'), {
      token: s.guest.token,
    });
    expect((page.body as Json[]).map((l) => l.name)).toEqual(['security']);
    expect(page.headers.get('x-total')).toBe('4');
    expect(page.headers.get('x-total-pages')).toBe('2');
    expect(page.headers.get('link')).toContain('rel="first"');

    // A group label is read through the project, but changed only through its group.
    const inherited = await server.request('GET', labels(s.project, '/security'), { token: s.guest.token });
    expect(inherited.body).toMatchObject({ name: 'security', is_project_label: false, priority: null });
    for (const [method, json] of [
      ['PUT', { color: '#000000' }],
      ['DELETE', undefined],
    ] as const) {
      const refused = await server.request(method, labels(s.project, '/security'), {
        token: s.owner.token,
        json,
      });
      expect([refused.status, refused.body]).toEqual([404, { message: '404 Label Not Found' }]);
    }
  });

  it('changes no group label through a project, its priority included', async () => {
    const s = await setup();
    await create(groupLabels(s.group), s.owner.token, { name: 'urgent', color: '#FF0000' });
    const other = await server.factories.projectWithReadme({ owner: s.owner, namespace: s.group });
    const label = (await server.request('GET', labels(s.project, '/urgent'), { token: s.owner.token }))
      .body as Json;
    // As in GitLab, updates find the project's own labels only.
    const own = await server.request('PUT', labels(s.project), {
      token: s.owner.token,
      json: { label_id: label.id, priority: 1 },
    });
    expect(own.status).toBe(404);
    const elsewhere = await server.request('GET', labels(other, '/urgent'), { token: s.owner.token });
    expect(elsewhere.body).toMatchObject({ priority: null });
  });

  it('refuses a duplicate name with 409, but not a name differing in case', async () => {
    const s = await setup();
    await create(groupLabels(s.group), s.owner.token, { name: 'security', color: '#FF0000' });
    await create(labels(s.project), s.owner.token, { name: 'bug', color: '#FF0000' });
    for (const name of ['bug', 'security']) {
      const duplicate = await server.request('POST', labels(s.project), {
        token: s.owner.token,
        json: { name, color: '#000' },
      });
      expect([duplicate.status, duplicate.body]).toEqual([409, { message: 'Label already exists' }]);
    }
    await create(labels(s.project), s.owner.token, { name: 'Bug', color: '#FF0000' });
    await create(labels(s.project), s.owner.token, { name: 'other', color: '#FF0000' });
    const renamed = await server.request('PUT', labels(s.project, '/other'), {
      token: s.owner.token,
      json: { new_name: 'bug' },
    });
    expect([renamed.status, renamed.body]).toEqual([400, { message: { title: ['has already been taken'] } }]);
  });

  const long = 'x'.repeat(256);
  it.each([
    [{ color: '#FFF' }, { error: 'name is missing' }],
    [{ name: 'a' }, { error: 'color is missing' }],
    [{ name: '', color: '#FFF' }, { message: { title: ["can't be blank", 'is invalid'] } }],
    [{ name: '   ', color: '#FFF' }, { message: { title: ["can't be blank", 'is invalid'] } }],
    [{ name: 'a,b', color: '#FFF' }, { message: { title: ['is invalid'] } }],
    [{ name: long, color: '#FFF' }, { message: { title: ['is too long (maximum is 255 characters)'] } }],
    [{ name: 'a', color: 'FFF' }, { message: { color: ['must be a valid color code'] } }],
    [{ name: 'a', color: '#FFF', priority: -1 }, { error: 'priority is invalid' }],
    [
      { name: 'a,', color: 'nope' },
      { message: { title: ['is invalid'], color: ['must be a valid color code'] } },
    ],
  ])('refuses %j on creation', async (json, expected) => {
    const s = await setup();
    const response = await server.request('POST', labels(s.project), { token: s.owner.token, json });
    expect([response.status, response.body]).toEqual([400, expected]);
  });

  it.each([
    [
      {},
      {
        error: 'new_name, color, description, priority are missing, at least one parameter must be provided',
      },
    ],
    [{ new_name: '' }, { message: { title: ["can't be blank", 'is invalid'] } }],
    [{ color: '#1234' }, { message: { color: ['must be a valid color code'] } }],
  ])('refuses %j on update', async (json, expected) => {
    const s = await setup();
    await create(labels(s.project), s.owner.token, { name: 'bug', color: '#FFF' });
    const response = await server.request('PUT', labels(s.project, '/bug'), { token: s.owner.token, json });
    expect([response.status, response.body]).toEqual([400, expected]);
  });

  it.each([
    [{ color: '#000' }, { error: 'label_id, name are missing, exactly one parameter must be provided' }],
    [{ label_id: 1, name: 'bug', color: '#000' }, { error: 'label_id, name are mutually exclusive' }],
  ])('the older update refuses %j', async (json, expected) => {
    const s = await setup();
    const response = await server.request('PUT', labels(s.project), { token: s.owner.token, json });
    expect([response.status, response.body]).toEqual([400, expected]);
  });

  it('takes forms, and an empty colour is the default', async () => {
    const s = await setup();
    const response = await server.request('POST', labels(s.project), {
      token: s.owner.token,
      form: { name: 'form', color: '' },
    });
    expect(response.body).toMatchObject({ name: 'form', color: '#6699cc', description: null });
  });
});

describe('permissions', () => {
  it.each([
    ['guest', Guest, 403],
    ['planner', Planner, 201],
    ['reporter', Reporter, 201],
    ['maintainer', Maintainer, 201],
  ])('a %s (%i) creating a project label gets %i', async (_role, level, status) => {
    const { project } = await server.factories.ownedProjectWithReadme();
    const member = await server.factories.memberOf(project, level);
    const response = await server.request('POST', labels(project), {
      token: member.token,
      json: { name: `l${level}`, color: '#FFF' },
    });
    expect(response.status).toBe(status);
  });

  it('needs a token even for a public project, and hides private ones', async () => {
    const { project } = await server.factories.ownedProjectWithReadme({ visibility: 'public' });
    expect((await server.request('GET', labels(project))).status).toBe(401);
    const outsider = await server.factories.user();
    expect((await server.request('GET', labels(project), { token: outsider.token })).status).toBe(200);
    const hidden = await server.factories.ownedProjectWithReadme();
    const response = await server.request('GET', labels(hidden.project), { token: outsider.token });
    expect([response.status, response.body]).toEqual([404, { message: '404 Project Not Found' }]);
  });

  it('keeps an archived project’s labels as they are', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    await create(labels(project), owner.token, { name: 'bug', color: '#FFF' });
    expect(
      (await server.request('POST', `/projects/${project.id}/archive`, { token: owner.token })).status,
    ).toBe(201);
    const response = await server.request('POST', labels(project), {
      token: owner.token,
      json: { name: 'new', color: '#FFF' },
    });
    expect(response.status).toBe(403);
    expect((await server.request('GET', labels(project, '/bug'), { token: owner.token })).status).toBe(200);
  });
});

describe('group labels', () => {
  it('lists ancestors’, descendants’ and projects’ labels as asked', async () => {
    const s = await setup();
    await create(groupLabels(s.group), s.owner.token, { name: 'top', color: '#FFF' });
    await create(groupLabels(s.subgroup), s.owner.token, { name: 'middle', color: '#FFF' });
    await create(labels(s.project), s.owner.token, { name: 'leaf', color: '#FFF' });
    const names = async (group: Namespace, query: string) =>
      ((await server.request('GET', groupLabels(group, query), { token: s.owner.token })).body as Json[]).map(
        (l) => l.name,
      );
    expect(await names(s.subgroup, '')).toEqual(['middle', 'top']);
    expect(await names(s.subgroup, '?include_ancestor_groups=false')).toEqual(['middle']);
    expect(await names(s.group, '')).toEqual(['top']);
    expect(await names(s.group, '?include_descendant_groups=true')).toEqual(['middle', 'top']);
    expect(await names(s.group, '?include_descendant_groups=true&only_group_labels=false')).toEqual([
      'leaf',
      'middle',
      'top',
    ]);
    const one = await server.request('GET', groupLabels(s.subgroup, '/top'), { token: s.owner.token });
    expect(one.body).toEqual({
      id: expect.any(Number),
      name: 'top',
      color: '#FFF',
      text_color: '#1F1E24',
      description: null,
      description_html: null,
      subscribed: false,
    });
  });

  it('updates through both forms, and deletes', async () => {
    const s = await setup();
    const label = await create(groupLabels(s.group), s.owner.token, { name: 'sec', color: '#FFF' });
    const byPath = await server.request('PUT', groupLabels(s.group, '/sec'), {
      token: s.owner.token,
      json: { new_name: 'security' },
    });
    expect(byPath.body).toMatchObject({ id: label.id, name: 'security' });
    const byBody = await server.request('PUT', groupLabels(s.group), {
      token: s.owner.token,
      json: { name: 'security', description: 'Vulnerabilities' },
    });
    expect(byBody.body).toMatchObject({ id: label.id, description: 'Vulnerabilities' });
    const empty = await server.request('PUT', groupLabels(s.group, '/security'), {
      token: s.owner.token,
      json: {},
    });
    expect(empty.body).toEqual({
      error: 'new_name, color, description are missing, at least one parameter must be provided',
    });
    // The subgroup cannot change its parent's label.
    const fromChild = await server.request('DELETE', groupLabels(s.subgroup, '/security'), {
      token: s.owner.token,
    });
    expect(fromChild.status).toBe(404);
    expect(
      (await server.request('DELETE', groupLabels(s.group, '/security'), { token: s.owner.token })).status,
    ).toBe(204);
  });

  it('lets Planners manage and anyone who sees the group read', async () => {
    const s = await setup();
    const planner = await server.factories.memberOf(s.group, Planner);
    const guest = await server.factories.memberOf(s.group, Guest);
    await create(groupLabels(s.group), planner.token, { name: 'plan', color: '#FFF' });
    const refused = await server.request('POST', groupLabels(s.group), {
      token: guest.token,
      json: { name: 'nope', color: '#FFF' },
    });
    expect(refused.status).toBe(403);
    expect((await server.request('GET', groupLabels(s.group), { token: guest.token })).status).toBe(200);
    const outsider = await server.factories.user();
    const hidden = await server.request('GET', groupLabels(s.group), { token: outsider.token });
    expect([hidden.status, hidden.body]).toEqual([404, { message: '404 Group Not Found' }]);
  });
});

describe('the service merge requests use', () => {
  it('finds labels a project may use by name, ignoring case', async () => {
    const s = await setup();
    await create(groupLabels(s.group), s.owner.token, { name: 'Security', color: '#FFF' });
    await create(labels(s.project), s.owner.token, { name: 'bug', color: '#FFF' });
    await create(labels(s.project), s.owner.token, { name: 'BUG', color: '#FFF' });
    const stranger = await server.factories.ownedProjectWithReadme();
    await create(labels(stranger.project), stranger.owner.token, { name: 'docs', color: '#FFF' });
    const found = await server.services.labels.availableToProject(s.project.id, ['SECURITY', 'Bug', 'docs']);
    expect(found.map((l) => l.title).sort()).toEqual(['BUG', 'Security', 'bug']);
  });

  it('counts open merge requests through the labelCounts extension point', async () => {
    const s = await setup();
    const label = await create(labels(s.project), s.owner.token, { name: 'counted', color: '#FFF' });
    const counter = vi
      .spyOn(server.services.mergeRequestLists, 'countOpenWithLabels')
      .mockImplementation(async (_caller, ids, scope) => {
        expect(scope).toEqual({ projectId: s.project.id });
        return new Map(ids.map((id) => [id, 7]));
      });
    try {
      const listed = await server.request('GET', labels(s.project, '?with_counts=true'), {
        token: s.owner.token,
      });
      expect(listed.body).toEqual([expect.objectContaining({ id: label.id, open_merge_requests_count: 7 })]);
    } finally {
      counter.mockRestore();
    }
  });
});

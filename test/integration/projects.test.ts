import { describe, expect, it } from 'vitest';
import type { VisibilityName } from '../../src/core/abilities.js';
import { AccessLevel } from '../../src/core/access-level.js';
import { send, useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;
type Role = 'anonymous' | 'outsider' | 'external' | 'admin' | 'guest' | 'reporter' | 'maintainer';

/** A project in a group, and a caller with the given role on it. */
async function scenario(visibility: VisibilityName, role: Role) {
  const group = await server.factories.group({ visibility: 'public' });
  const project = await server.factories.project({ namespace: group, visibility });
  const levels: Record<string, number> = {
    guest: AccessLevel.Guest,
    reporter: AccessLevel.Reporter,
    maintainer: AccessLevel.Maintainer,
  };
  const caller =
    role === 'guest' || role === 'reporter' || role === 'maintainer'
      ? await server.factories.memberOf(project, levels[role])
      : await server.factories.caller(role);
  return { group, project, token: caller?.token };
}

describe('who sees a project', () => {
  const cases: Array<[Role, VisibilityName, boolean]> = [
    ['anonymous', 'public', true],
    ['anonymous', 'internal', false],
    ['anonymous', 'private', false],
    ['outsider', 'public', true],
    ['outsider', 'internal', true],
    ['outsider', 'private', false],
    ['external', 'public', true],
    ['external', 'internal', false],
    ['external', 'private', false],
    ['guest', 'private', true],
    ['reporter', 'private', true],
    ['admin', 'private', true],
    ['admin', 'internal', true],
  ];

  it.each(cases)('%s, %s project: visible=%s', async (role, visibility, visible) => {
    const { project, token } = await scenario(visibility, role);
    const single = await server.request('GET', `/projects/${project.id}`, { token });
    expect(single.status).toBe(visible ? 200 : 404);
    if (!visible) expect(single.body).toEqual({ message: '404 Project Not Found' });
    const list = await server.request('GET', `/projects?search=${project.path}`, { token });
    expect(list.status).toBe(200);
    expect((list.body as Json[]).map((p) => p.id)).toEqual(visible ? [project.id] : []);
  });

  it('lists simple fields only for anonymous callers', async () => {
    const { project } = await scenario('public', 'anonymous');
    const list = await server.request('GET', `/projects?search=${project.path}`);
    const [item] = list.body as Json[];
    expect(item).toHaveProperty('path_with_namespace');
    expect(item).not.toHaveProperty('issues_enabled');
    expect(item).not.toHaveProperty('_links');
  });

  it('hides a project inherited through an expired membership', async () => {
    const group = await server.factories.group();
    const project = await server.factories.project({ namespace: group });
    const bob = await server.factories.user();
    await server.factories.member(group, bob.user, AccessLevel.Developer, '2020-01-01');
    expect((await server.request('GET', `/projects/${project.id}`, { token: bob.token })).status).toBe(404);
  });

  it('shows a private project to members of an ancestor group', async () => {
    const top = await server.factories.group();
    const sub = await server.factories.group({ parent: top });
    const project = await server.factories.project({ namespace: sub });
    const bob = await server.factories.user();
    await server.factories.member(top, bob.user, AccessLevel.Reporter);
    const response = await server.request('GET', `/projects/${project.id}`, { token: bob.token });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      permissions: { project_access: null, group_access: { access_level: 20 } },
    });
  });
});

describe('fields that depend on the caller', () => {
  it.each([
    ['guest', false],
    ['reporter', true],
    ['maintainer', true],
    ['admin', true],
    ['outsider', false],
  ] as Array<[Role, boolean]>)('statistics for %s: %s', async (role, shown) => {
    const { project, token } = await scenario('public', role);
    const single = await server.request('GET', `/projects/${project.id}?statistics=true`, { token });
    expect('statistics' in (single.body as Json)).toBe(shown);
    if (shown) expect(single.body).toHaveProperty('statistics.commit_count', 0);
    const list = await server.request('GET', `/projects?statistics=true&search=${project.path}`, { token });
    expect('statistics' in (list.body as Json[])[0]).toBe(shown);
  });

  it.each([
    ['reporter', false],
    ['maintainer', true],
    ['admin', true],
  ] as Array<[Role, boolean]>)('runners_token for %s: %s', async (role, shown) => {
    const { project, token } = await scenario('private', role);
    const single = await server.request('GET', `/projects/${project.id}`, { token });
    expect('runners_token' in (single.body as Json)).toBe(shown);
  });

  it('shows repository_storage to administrators only', async () => {
    const admin = await scenario('public', 'admin');
    const outsider = await scenario('public', 'outsider');
    expect(
      (await server.request('GET', `/projects/${admin.project.id}`, { token: admin.token })).body,
    ).toHaveProperty('repository_storage', 'default');
    expect(
      (await server.request('GET', `/projects/${outsider.project.id}`, { token: outsider.token })).body,
    ).not.toHaveProperty('repository_storage');
  });

  it('gives permissions, owner and license to the right callers', async () => {
    const alice = await server.factories.user();
    const created = await server.request('POST', '/projects', {
      token: alice.token,
      json: { name: 'mine', visibility: 'public' },
    });
    const id = (created.body as Json).id;
    const own = (await server.request('GET', `/projects/${id}?license=true`, { token: alice.token }))
      .body as Json;
    expect(own.permissions).toEqual({
      project_access: { access_level: 50, notification_level: 3 },
      group_access: null,
    });
    expect(own.owner).toMatchObject({ id: alice.user.id, username: alice.user.username });
    expect(own).toHaveProperty('license', null);
    const anonymous = (await server.request('GET', `/projects/${id}`)).body as Json;
    expect(anonymous).not.toHaveProperty('permissions');
    expect(anonymous).not.toHaveProperty('license');
  });
});

describe('list filters', () => {
  async function world() {
    const alice = await server.factories.user();
    const group = await server.factories.group({ visibility: 'public' });
    await server.factories.member(group, alice.user, AccessLevel.Developer);
    const tag = Math.random().toString(36).slice(2, 8);
    const make = (path: string, extra: Json = {}) =>
      server.factories.project({ namespace: group, path: `${tag}-${path}`, visibility: 'public', ...extra });
    const alpha = await make('alpha', { description: 'The first one', topics: ['Go', 'cli'] });
    const beta = await make('beta', { topics: ['go'], issues_enabled: false });
    const gamma = await make('gamma', { merge_requests_enabled: false });
    const own = await server.factories.project({ owner: alice, path: `${tag}-own`, visibility: 'public' });
    await server.dataSource.query('UPDATE projects SET archived = true WHERE id = $1', [gamma.id]);
    return { alice, group, tag, alpha, beta, gamma, own };
  }
  const ids = (body: unknown) => (body as Json[]).map((p) => p.id);

  it('filters by each parameter', async () => {
    const w = await world();
    const list = async (query: string) =>
      ids((await server.request('GET', `/projects?search=${w.tag}&${query}`, { token: w.alice.token })).body);
    expect(await list('archived=true')).toEqual([w.gamma.id]);
    expect((await list('archived=false')).sort()).toEqual([w.alpha.id, w.beta.id, w.own.id].sort());
    expect(await list('owned=true')).toEqual([w.own.id]);
    expect((await list('membership=true')).length).toBe(4);
    expect(await list('min_access_level=50')).toEqual([w.own.id]);
    expect((await list('topic=go')).sort()).toEqual([w.alpha.id, w.beta.id].sort());
    expect(await list('topic=go,CLI')).toEqual([w.alpha.id]);
    expect(await list('with_issues_enabled=true&order_by=path&sort=asc')).toEqual([
      w.alpha.id,
      w.gamma.id,
      w.own.id,
    ]);
    expect(await list('with_merge_requests_enabled=true&order_by=path&sort=asc')).toEqual([
      w.alpha.id,
      w.beta.id,
      w.own.id,
    ]);
    expect(await list(`id_after=${w.beta.id}&id_before=${w.own.id}`)).toEqual([w.gamma.id]);
    expect(await list('visibility=private')).toEqual([]);
    expect(await list('imported=true')).toEqual([]);
    expect(await list('repository_checksum_failed=true')).toEqual([]);
    expect((await list('last_activity_after=2000-01-01T00:00:00Z')).length).toBe(4);
    expect(await list('last_activity_before=2000-01-01T00:00:00Z')).toEqual([]);
  });

  it('searches path, name and description, ANDing terms', async () => {
    const w = await world();
    const search = async (terms: string, extra = '') =>
      ids((await server.request('GET', `/projects?search=${terms}${extra}`, { token: w.alice.token })).body);
    expect(await search(`${w.tag}-alpha`)).toEqual([w.alpha.id]);
    expect(await search(`${w.tag}+first`)).toEqual([w.alpha.id]);
    expect(await search(`${w.tag}%20FIRST`)).toEqual([w.alpha.id]);
    expect(await search(`${w.tag}+nothing`)).toEqual([]);
    expect(await search(w.group.path)).toEqual([]);
    expect((await search(w.group.path, '&search_namespaces=true')).length).toBe(3);
  });

  it('orders by each column, both ways', async () => {
    const w = await world();
    const order = async (query: string) =>
      ids((await server.request('GET', `/projects?search=${w.tag}&${query}`, { token: w.alice.token })).body);
    const byPath = [w.alpha.id, w.beta.id, w.gamma.id, w.own.id];
    expect(await order('order_by=path&sort=asc')).toEqual(byPath);
    expect(await order('order_by=path&sort=desc')).toEqual([...byPath].reverse());
    expect(await order('order_by=id&sort=asc')).toEqual(byPath);
    expect(await order('')).toEqual([...byPath].reverse());
    expect(await order('order_by=name&sort=asc')).toEqual(byPath);
    // Not an administrator: size orders fall back to created_at.
    expect(await order('order_by=storage_size')).toEqual([...byPath].reverse());
  });

  it('ranks by similarity among the caller’s projects', async () => {
    const w = await world();
    const response = await server.request('GET', `/projects?search=${w.tag}-alpha&order_by=similarity`, {
      token: w.alice.token,
    });
    expect(ids(response.body)).toEqual([w.alpha.id]);
    const ranked = await server.request('GET', `/projects?search=${w.tag}&order_by=similarity`, {
      token: w.alice.token,
    });
    expect(ids(ranked.body)).toHaveLength(4);
  });

  it('needs a caller for membership filters', async () => {
    const response = await server.request('GET', '/projects?membership=true');
    expect(response.status).toBe(401);
  });

  it('lists projects marked for deletion only to administrators who ask', async () => {
    const admin = await server.factories.user({ admin: true });
    const project = await server.factories.project({ owner: admin, visibility: 'public' });
    await server.dataSource.query('UPDATE projects SET marked_for_deletion_at = now() WHERE id = $1', [
      project.id,
    ]);
    const list = async (query: string) =>
      ids(
        (await server.request('GET', `/projects?search=${project.path}${query}`, { token: admin.token }))
          .body,
      );
    expect(await list('')).toEqual([]);
    expect(await list('&include_pending_delete=true')).toEqual([project.id]);
  });
});

describe('pagination', () => {
  async function manyProjects(count: number) {
    const alice = await server.factories.user();
    const tag = Math.random().toString(36).slice(2, 8);
    const created = [];
    for (let i = 0; i < count; i++)
      created.push(await server.factories.project({ owner: alice, path: `${tag}-${i}` }));
    return { alice, tag, ids: created.map((p) => p.id) };
  }

  it('walks offset pages by following rel="next"', async () => {
    const { alice, tag, ids } = await manyProjects(7);
    let url: string | undefined = `${server.api}/projects?search=${tag}&per_page=3&order_by=id&sort=asc`;
    const seen: number[] = [];
    const pages: string[] = [];
    while (url) {
      const response = await send(url, 'GET', { token: alice.token });
      expect(response.status).toBe(200);
      seen.push(...(response.body as Json[]).map((p) => p.id as number));
      pages.push(response.headers.get('x-page')!);
      expect(response.headers.get('x-total')).toBe('7');
      expect(response.headers.get('x-total-pages')).toBe('3');
      expect(response.headers.get('x-per-page')).toBe('3');
      url = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
      if (url) expect(url.startsWith(`${server.url}/api/v4/projects?`)).toBe(true);
    }
    expect(seen).toEqual(ids);
    expect(pages).toEqual(['1', '2', '3']);
    // Past the end no row carries the count, which is then read apart.
    const past = await send(`${server.api}/projects?search=${tag}&per_page=3&page=4`, 'GET', {
      token: alice.token,
    });
    expect(past.body).toEqual([]);
    expect(past.headers.get('x-total')).toBe('7');
  });

  it('gives first, prev, next and last links and empty edges', async () => {
    const { alice, tag } = await manyProjects(5);
    const middle = await server.request('GET', `/projects?search=${tag}&per_page=2&page=2`, {
      token: alice.token,
    });
    expect(middle.headers.get('x-next-page')).toBe('3');
    expect(middle.headers.get('x-prev-page')).toBe('1');
    const rels = [...(middle.headers.get('link') ?? '').matchAll(/rel="(\w+)"/g)].map((m) => m[1]);
    expect(rels).toEqual(['prev', 'next', 'first', 'last']);
    const last = await server.request('GET', `/projects?search=${tag}&per_page=2&page=3`, {
      token: alice.token,
    });
    expect(last.headers.get('x-next-page')).toBe('');
    const beyond = await server.request('GET', `/projects?search=${tag}&per_page=2&page=9`, {
      token: alice.token,
    });
    expect(beyond.body).toEqual([]);
  });

  it('caps per_page at 100', async () => {
    const response = await server.request('GET', '/projects?per_page=1000');
    expect(response.headers.get('x-per-page')).toBe('100');
  });

  it.each([['asc'], ['desc']])('walks keyset pages (%s) with no totals', async (sort) => {
    const { alice, tag, ids } = await manyProjects(5);
    let url: string | undefined =
      `${server.api}/projects?search=${tag}&pagination=keyset&order_by=id&sort=${sort}&per_page=2`;
    const seen: number[] = [];
    let requests = 0;
    while (url) {
      const response = await send(url, 'GET', { token: alice.token });
      requests++;
      expect(response.headers.get('x-total')).toBeNull();
      seen.push(...(response.body as Json[]).map((p) => p.id as number));
      url = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    }
    expect(seen).toEqual(sort === 'asc' ? ids : [...ids].reverse());
    expect(requests).toBe(3);
  });

  it('refuses keyset pagination for other orders', async () => {
    const response = await server.request('GET', '/projects?pagination=keyset&order_by=name');
    expect(response.status).toBe(405);
    expect(response.body).toEqual({
      message: 'Keyset pagination is not yet available for this type of request',
    });
  });
});

describe('creating a project', () => {
  it('fills a new project from the request', async () => {
    const alice = await server.factories.user();
    const response = await server.request('POST', '/projects', {
      token: alice.token,
      json: {
        name: 'My Great Project+',
        description: 'Line one\n\nTwo <b>bold</b>',
        visibility: 'public',
        topics: ['api', 'API', 'web'],
        default_branch: 'trunk',
        merge_method: 'ff',
        container_registry_enabled: false,
        build_timeout: 7200,
      },
    });
    expect(response.status, response.text).toBe(201);
    expect(response.body).toMatchObject({
      name: 'My Great Project+',
      path: 'my-great-project',
      path_with_namespace: `${alice.user.username}/my-great-project`,
      name_with_namespace: `${alice.user.name} / My Great Project+`,
      visibility: 'public',
      topics: ['api', 'web'],
      default_branch: 'trunk',
      merge_method: 'ff',
      container_registry_access_level: 'disabled',
      container_registry_enabled: false,
      build_timeout: 7200,
      creator_id: alice.user.id,
      web_url: `${server.url}/${alice.user.username}/my-great-project`,
      http_url_to_repo: `${server.url}/${alice.user.username}/my-great-project.git`,
      description_html: '<p dir="auto">Line one</p>\n<p dir="auto">Two &lt;b&gt;bold&lt;/b&gt;</p>',
      namespace: { kind: 'user', full_path: alice.user.username },
    });
  });

  it.each([
    ['a path with a slash', { path: 'a/b' }, { path: [expect.stringContaining('can contain only')] }],
    ['a path ending in .git', { path: 'repo.git' }, { path: [expect.stringContaining('can contain only')] }],
    [
      'a name starting with a dash',
      { name: '-bad', path: 'ok' },
      { name: [expect.stringContaining('must start with')] },
    ],
  ])('refuses %s', async (_name, json, message) => {
    const alice = await server.factories.user();
    const response = await server.request('POST', '/projects', { token: alice.token, json });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ message });
  });

  it.each([
    ['an Owner of the group', AccessLevel.Owner, 'private', 201],
    ['a Developer of the group', AccessLevel.Developer, 'private', 201],
    ['a Reporter of the group', AccessLevel.Reporter, 'private', 403],
    ['an outsider of a public group', 0, 'public', 403],
    ['an outsider of a private group', 0, 'private', 404],
  ] as Array<[string, number, VisibilityName, number]>)(
    'in a group, as %s: %s',
    async (_name, level, visibility, status) => {
      const bob = await server.factories.user();
      const group = await server.factories.group({ visibility });
      if (level) await server.factories.member(group, bob.user, level);
      const response = await server.request('POST', '/projects', {
        token: bob.token,
        json: { name: 'grouped', namespace_id: group.id },
      });
      expect(response.status, response.text).toBe(status);
      if (status === 201) expect(response.body).toMatchObject({ namespace: { id: group.id, kind: 'group' } });
    },
  );

  it("refuses another user's namespace, and an unknown one", async () => {
    const bob = await server.factories.user();
    const carol = await server.factories.user();
    const carolNamespace = await server.services.users.personalNamespace(carol.user.id);
    for (const namespaceId of [carolNamespace!.id, 999999]) {
      const response = await server.request('POST', '/projects', {
        token: bob.token,
        json: { name: 'x', namespace_id: namespaceId },
      });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ message: '404 Namespace Not Found' });
    }
  });

  it('refuses a visibility above the group’s', async () => {
    const bob = await server.factories.user();
    const group = await server.factories.group({ visibility: 'private' });
    await server.factories.member(group, bob.user, AccessLevel.Owner);
    const response = await server.request('POST', '/projects', {
      token: bob.token,
      json: { name: 'loud', namespace_id: group.id, visibility: 'public' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: { visibility_level: ['public is not allowed in a private group.'] },
    });
  });

  it('gives one of two concurrent creates of the same path a 400, leaving one project', async () => {
    const alice = await server.factories.user();
    const responses = await Promise.all(
      [1, 2, 3].map(() =>
        server.request('POST', '/projects', { token: alice.token, json: { path: 'race', name: 'race' } }),
      ),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([201, 400, 400]);
    const [{ count }] = await server.dataSource.query(
      `SELECT count(*)::int AS count FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE n.owner_id = $1`,
      [alice.user.id],
    );
    expect(count).toBe(1);
  });
});

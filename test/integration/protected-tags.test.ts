/** Protected tags: the rules' API, and the rules guarding tags pushed with git and created through the API. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitText } from '../../src/git/git.js';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { remoteUrl, useGitWorkDir } from '../helpers/git-cli.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const { work, gitCli } = useGitWorkDir('forge-ptags-');

type Json = Record<string, unknown>;
let counter = 0;

const rulesPath = (project: Project, rest = '') => `/projects/${project.id}/protected_tags${rest}`;

const setup = () => server.factories.ownedProjectWithReadme();

/** One create access level as the API shows it, unset fields null. */
const entry = (fields: Json) => ({
  id: expect.any(Number),
  access_level: null,
  user_id: null,
  group_id: null,
  deploy_key_id: null,
  ...fields,
});
const role = (level: number, description: string) =>
  entry({ access_level: level, access_level_description: description });

describe('protecting tags', () => {
  it('protects a wildcard for Maintainers by default', async () => {
    const { owner, project } = await setup();
    const response = await server.request('POST', rulesPath(project), {
      token: owner.token,
      json: { name: 'v*' },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ name: 'v*', create_access_levels: [role(40, 'Maintainers')] });
  });

  it('adds up a level, users and groups', async () => {
    const { owner, project } = await setup();
    const developer = await server.factories.memberOf(project, AccessLevel.Developer);
    const group = await server.factories.group();
    await server.factories.share(project, group, AccessLevel.Developer);
    const response = await server.request('POST', rulesPath(project), {
      token: owner.token,
      json: {
        name: 'release-*',
        create_access_level: 30,
        allowed_to_create: [{ user_id: developer.user.id }, { group_id: group.id }, { access_level: 0 }],
      },
    });
    expect(response.status).toBe(201);
    const levels = (response.body as { create_access_levels: Json[] }).create_access_levels;
    expect(levels).toEqual([
      role(30, 'Developers + Maintainers'),
      entry({ access_level_description: developer.user.name, user_id: developer.user.id }),
      entry({ access_level_description: group.name, group_id: group.id }),
      role(0, 'No one'),
    ]);
    expect(new Set(levels.map((level) => level.id)).size).toBe(4);
  });

  it('takes bracket-notation form fields', async () => {
    const { owner, project } = await setup();
    const developer = await server.factories.memberOf(project, AccessLevel.Developer);
    const response = await server.request('POST', rulesPath(project), {
      token: owner.token,
      body: `name=stable&create_access_level=60&allowed_to_create[][user_id]=${developer.user.id}`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).toBe(201);
    expect((response.body as { create_access_levels: Json[] }).create_access_levels).toMatchObject([
      { access_level: 60, access_level_description: 'Administrators' },
      { user_id: developer.user.id },
    ]);
  });

  it.each([
    ['a name already protected', { name: 'taken' }, ['Name has already been taken']],
    ['a blank name', { name: '  ' }, ["Name can't be blank"]],
    [
      'an unknown user',
      { name: 'x', allowed_to_create: [{ user_id: 999999 }] },
      ["Create access levels user can't be blank"],
    ],
    [
      'a deploy key',
      { name: 'x', allowed_to_create: [{ deploy_key_id: 1 }] },
      ["Create access levels deploy key can't be blank"],
    ],
    [
      'a level twice',
      { name: 'x', create_access_level: 40, allowed_to_create: [{ access_level: 40 }] },
      ['Create access levels access level has already been taken'],
    ],
  ])('refuses %s with 422', async (_what, json, message) => {
    const { owner, project } = await setup();
    await server.request('POST', rulesPath(project), { token: owner.token, json: { name: 'taken' } });
    const response = await server.request('POST', rulesPath(project), { token: owner.token, json });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({ message });
  });

  it('refuses users who are not members and groups without access', async () => {
    const { owner, project } = await setup();
    const outsider = await server.factories.user();
    const group = await server.factories.group();
    const response = await server.request('POST', rulesPath(project), {
      token: owner.token,
      json: { name: 'x', allowed_to_create: [{ user_id: outsider.user.id }, { group_id: group.id }] },
    });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      message: [
        'Create access levels user is not a member of the project',
        'Create access levels group does not have access to the project',
      ],
    });
    expect((await server.request('GET', rulesPath(project), { token: owner.token })).body).toEqual([]);
  });

  it.each([
    [{ create_access_level: 40 }, 'name is missing'],
    [{ name: 'x', create_access_level: 20 }, 'create_access_level does not have a valid value'],
  ])('answers 400 to %j', async (json, error) => {
    const { owner, project } = await setup();
    const response = await server.request('POST', rulesPath(project), { token: owner.token, json });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error });
  });
});

describe('reading and removing rules', () => {
  it('lists rules oldest first, with pagination headers', async () => {
    const { owner, project } = await setup();
    for (const name of ['a*', 'b', 'c-*'])
      await server.request('POST', rulesPath(project), { token: owner.token, json: { name } });
    const page = await server.request('GET', rulesPath(project, '?per_page=2'), { token: owner.token });
    expect(page.status).toBe(200);
    expect((page.body as Json[]).map((rule) => rule.name)).toEqual(['a*', 'b']);
    expect(page.headers.get('x-total')).toBe('3');
    expect(page.headers.get('x-next-page')).toBe('2');
    expect(page.headers.get('link')).toContain(
      `<${server.api}${rulesPath(project)}?page=2&per_page=2>; rel="next"`,
    );
  });

  it('reads and removes a rule by its exact, encoded name', async () => {
    const { owner, project } = await setup();
    await server.request('POST', rulesPath(project), { token: owner.token, json: { name: 'rel/*' } });
    const found = await server.request('GET', rulesPath(project, '/rel%2F%2A'), { token: owner.token });
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ name: 'rel/*' });
    // A tag the wildcard matches is not a rule.
    const matched = await server.request('GET', rulesPath(project, '/rel%2F1'), { token: owner.token });
    expect(matched.status).toBe(404);
    expect(matched.body).toEqual({ message: '404 Not found' });
    const removed = await server.request('DELETE', rulesPath(project, '/rel%2F%2A'), { token: owner.token });
    expect(removed.status).toBe(204);
    expect(
      (await server.request('GET', rulesPath(project, '/rel%2F%2A'), { token: owner.token })).status,
    ).toBe(404);
    expect(
      (await server.request('DELETE', rulesPath(project, '/rel%2F%2A'), { token: owner.token })).status,
    ).toBe(404);
  });

  it.each([
    ['anonymous', null, 401],
    ['an outsider', 0, 404],
    ['a Developer', AccessLevel.Developer, 403],
    ['a Maintainer', AccessLevel.Maintainer, 200],
  ])('%s (level %s) gets %i', async (_who, level, status) => {
    const { owner, project } = await setup();
    await server.request('POST', rulesPath(project), { token: owner.token, json: { name: 'v*' } });
    let token: string | undefined;
    if (level !== null) token = (await server.factories.memberOf(project, level)).token;
    const requests: Array<[string, string, Json?]> = [
      ['GET', rulesPath(project)],
      ['GET', rulesPath(project, '/v%2A')],
      ['POST', rulesPath(project), { name: 'new' }],
      ['DELETE', rulesPath(project, '/v%2A')],
    ];
    for (const [method, url, json] of requests) {
      const response = await server.request(method, url, { token, json });
      expect(response.status, `${method} ${url}`).toBe(
        status === 200 ? ({ POST: 201, DELETE: 204 }[method] ?? 200) : status,
      );
      if (status === 404) expect(response.body).toEqual({ message: '404 Project Not Found' });
    }
  });
});

describe('what the rules guard', () => {
  const remote = (project: Project, owner: TestUser, token: string) =>
    remoteUrl(server.url, `${owner.user.username}/${project.path}`, token);

  async function clone(project: Project, owner: TestUser, user: TestUser): Promise<string> {
    const dir = path.join(work, `clone-${++counter}`);
    const cloned = await gitCli(['clone', '-q', remote(project, owner, user.token), dir]);
    expect(cloned.ok, cloned.stderr).toBe(true);
    return dir;
  }

  it('refuses a protected tag pushed by a Developer, and lets a Maintainer push it', async () => {
    const { owner, project } = await setup();
    await server.request('POST', rulesPath(project), { token: owner.token, json: { name: 'v*' } });
    const developer = await server.factories.memberOf(project, AccessLevel.Developer);
    const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
    const dir = await clone(project, owner, developer);
    await gitCli(['tag', 'v1.0'], dir);
    await gitCli(['tag', 'nightly'], dir);
    const refused = await gitCli(['push', 'origin', 'v1.0'], dir);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain('You are not allowed to create this tag as it is protected.');
    const unprotected = await gitCli(['push', 'origin', 'nightly'], dir);
    expect(unprotected.ok, unprotected.stderr).toBe(true);

    const maintainerDir = await clone(project, owner, maintainer);
    await gitCli(['tag', 'v1.0'], maintainerDir);
    const pushed = await gitCli(['push', 'origin', 'v1.0'], maintainerDir);
    expect(pushed.ok, pushed.stderr).toBe(true);
    const tags = await server.request('GET', `/projects/${project.id}/repository/tags?order_by=name`, {
      token: owner.token,
    });
    expect((tags.body as Json[]).map((tag) => [tag.name, tag.protected])).toEqual([
      ['v1.0', true],
      ['nightly', false],
    ]);

    // Nobody moves a protected tag.
    await gitCli(['commit', '-q', '--allow-empty', '-m', 'later'], maintainerDir);
    await gitCli(['tag', '-f', 'v1.0'], maintainerDir);
    const moved = await gitCli(['push', '-f', 'origin', 'v1.0'], maintainerDir);
    expect(moved.ok).toBe(false);
    expect(moved.stderr).toContain('Protected tags cannot be updated.');
  });

  it('lets a user named in the rule create the tag through the API, and no one else', async () => {
    const { owner, project } = await setup();
    const named = await server.factories.memberOf(project, AccessLevel.Developer);
    const other = await server.factories.memberOf(project, AccessLevel.Developer);
    await server.request('POST', rulesPath(project), {
      token: owner.token,
      json: { name: 'release-*', allowed_to_create: [{ user_id: named.user.id }] },
    });
    const create = (user: TestUser, tag_name: string) =>
      server.request('POST', `/projects/${project.id}/repository/tags`, {
        token: user.token,
        json: { tag_name, ref: 'main' },
      });
    const refused = await create(other, 'release-1');
    expect(refused.status).toBe(405);
    expect(refused.body).toEqual({ message: 'You are not allowed to create this tag as it is protected.' });
    expect((await create(named, 'release-1')).status).toBe(201);
    // Unprotected, anyone who may push creates it.
    await server.request('DELETE', rulesPath(project, '/release-%2A'), { token: owner.token });
    expect((await create(other, 'release-2')).status).toBe(201);
    const head = await gitText(['rev-parse', 'refs/tags/release-2'], {
      gitDir: server.services.storage.diskPath('default', project.id),
    });
    expect(head).toMatch(/^[0-9a-f]{40}$/);
  });
});

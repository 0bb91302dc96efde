import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

/** A private project in a public group, and a user with `level` on the project (0: none). */
async function projectWithMember(level: number) {
  const group = await server.factories.group({ visibility: 'public' });
  const project = await server.factories.project({ namespace: group, visibility: 'private' });
  const member = await server.factories.memberOf(project, level);
  return { group, project, member };
}

describe('editing a project', () => {
  it('changes only the attributes sent, from JSON, form fields or the query string', async () => {
    const { project, member } = await projectWithMember(AccessLevel.Maintainer);
    const path = `/projects/${project.id}`;
    const json = await server.request('PUT', path, {
      token: member.token,
      json: { description: 'New words', topics: ['api', 'API', 'go'], merge_method: 'ff' },
    });
    expect(json.status).toBe(200);
    expect(json.body).toMatchObject({
      id: project.id,
      description: 'New words',
      topics: ['api', 'go'],
      merge_method: 'ff',
      name: project.name,
      visibility: 'private',
      issues_enabled: true,
    });

    const form = await server.request('PUT', path, {
      token: member.token,
      form: { issues_enabled: 'false', container_registry_access_level: 'private' },
    });
    expect(form.body).toMatchObject({
      issues_enabled: false,
      container_registry_access_level: 'private',
      container_registry_enabled: true,
      description: 'New words',
      merge_method: 'ff',
    });

    const query = await server.request('PUT', `${path}?container_registry_enabled=false&name=Renamed`, {
      token: member.token,
    });
    expect(query.body).toMatchObject({ container_registry_access_level: 'disabled', name: 'Renamed' });
    const read = await server.request('GET', path, { token: member.token });
    expect(read.body).toMatchObject({ name: 'Renamed', issues_enabled: false, merge_method: 'ff' });
  });

  it.each([
    [0, 404],
    [AccessLevel.Guest, 403],
    [AccessLevel.Developer, 403],
    [AccessLevel.Maintainer, 200],
    [AccessLevel.Owner, 200],
  ])('with access level %i answers %i', async (level, status) => {
    const { project, member } = await projectWithMember(level);
    const response = await server.request('PUT', `/projects/${project.id}`, {
      token: member.token,
      json: { description: 'x' },
    });
    expect(response.status).toBe(status);
    if (status === 403) expect(response.body).toEqual({ message: '403 Forbidden' });
    if (status === 404) expect(response.body).toEqual({ message: '404 Project Not Found' });
  });

  it.each([
    [AccessLevel.Maintainer, 403],
    [AccessLevel.Owner, 200],
  ])('changing visibility with access level %i answers %i', async (level, status) => {
    const { project, member } = await projectWithMember(level);
    const response = await server.request('PUT', `/projects/${project.id}`, {
      token: member.token,
      json: { visibility: 'internal' },
    });
    expect(response.status).toBe(status);
    if (status === 200) expect((response.body as Json).visibility).toBe('internal');
  });

  it('keeps visibility within the namespace, and names and paths unique', async () => {
    const admin = await server.factories.user({ admin: true });
    const group = await server.factories.group({ visibility: 'internal' });
    const project = await server.factories.project({ namespace: group });
    const other = await server.factories.project({ namespace: group });
    const path = `/projects/${project.id}`;

    const tooOpen = await server.request('PUT', path, { token: admin.token, json: { visibility: 'public' } });
    expect(tooOpen.status).toBe(400);
    expect(tooOpen.body).toEqual({
      message: { visibility_level: ['public is not allowed in a internal group.'] },
    });
    const taken = await server.request('PUT', path, { token: admin.token, json: { path: other.path } });
    expect(taken.status).toBe(400);
    expect(taken.body).toEqual({ message: { path: ['has already been taken'] } });
    const badPath = await server.request('PUT', path, { token: admin.token, json: { path: '-bad' } });
    expect(badPath.status).toBe(400);
    expect(Object.keys((badPath.body as { message: Json }).message)).toEqual(['path']);
    const badEnum = await server.request('PUT', path, {
      token: admin.token,
      json: { merge_method: 'squash' },
    });
    expect(badEnum.status).toBe(400);
    expect(badEnum.body).toEqual({ error: 'merge_method does not have a valid value' });

    const renamed = await server.request('PUT', path, { token: admin.token, json: { path: 'renamed-path' } });
    expect(renamed.body).toMatchObject({
      path: 'renamed-path',
      path_with_namespace: `${group.fullPath}/renamed-path`,
    });
    const byPath = await server.request(
      'GET',
      `/projects/${encodeURIComponent(`${group.fullPath}/renamed-path`)}`,
      {
        token: admin.token,
      },
    );
    expect((byPath.body as Json).id).toBe(project.id);
  });

  it('escapes a default branch in readme_url, which stays a URL whatever the branch is called', async () => {
    const owner = await server.factories.user();
    const project = await server.factories.projectWithReadme({ owner });
    const path = `/projects/${project.id}`;
    const branch = 'über/#1';
    const created = await server.request('POST', `${path}/repository/branches`, {
      token: owner.token,
      json: { branch, ref: 'main' },
    });
    expect(created.status).toBe(201);
    const updated = await server.request('PUT', path, {
      token: owner.token,
      json: { default_branch: branch },
    });
    expect(updated.status).toBe(200);
    expect((updated.body as Json).readme_url).toBe(
      `${(updated.body as Json).web_url}/-/blob/%C3%BCber/%231/README.md`,
    );
  });
});

describe('archiving a project', () => {
  it('is for Owners, changes `archived`, filters the list, and can be undone', async () => {
    const { project, member } = await projectWithMember(AccessLevel.Owner);
    const archived = await server.request('POST', `/projects/${project.id}/archive`, { token: member.token });
    expect(archived.status).toBe(201);
    expect((archived.body as Json).archived).toBe(true);
    const again = await server.request('POST', `/projects/${project.id}/archive`, { token: member.token });
    expect((again.body as Json).archived).toBe(true);

    const list = await server.request('GET', `/projects?archived=true&membership=true`, {
      token: member.token,
    });
    expect((list.body as Json[]).map((p) => p.id)).toEqual([project.id]);
    const edit = await server.request('PUT', `/projects/${project.id}`, {
      token: member.token,
      json: { description: 'still editable' },
    });
    expect(edit.status).toBe(200);

    const unarchived = await server.request('POST', `/projects/${project.id}/unarchive`, {
      token: member.token,
    });
    expect(unarchived.status).toBe(201);
    expect((unarchived.body as Json).archived).toBe(false);
  });

  it.each([
    [AccessLevel.Maintainer, 403],
    [AccessLevel.Reporter, 403],
    [0, 404],
  ])('with access level %i answers %i', async (level, status) => {
    const { project, member } = await projectWithMember(level);
    for (const action of ['archive', 'unarchive']) {
      const response = await server.request('POST', `/projects/${project.id}/${action}`, {
        token: member.token,
      });
      expect(response.status).toBe(status);
    }
  });
});

describe('deleting a project', () => {
  it('is for Owners, removes the project at once, and answers 202', async () => {
    const { project, member } = await projectWithMember(AccessLevel.Owner);
    const maintainer = await server.factories.user();
    await server.factories.member(project, maintainer.user, AccessLevel.Maintainer);
    const refused = await server.request('DELETE', `/projects/${project.id}`, { token: maintainer.token });
    expect(refused.status).toBe(403);

    const deleted = await server.request('DELETE', `/projects/${project.id}`, { token: member.token });
    expect(deleted.status).toBe(202);
    expect(deleted.body).toEqual({ message: '202 Accepted' });
    const gone = await server.request('GET', `/projects/${project.id}`, { token: member.token });
    expect(gone.status).toBe(404);
    const rows = await server.dataSource.query(
      `SELECT count(*)::int AS n FROM members WHERE source_type = 'Project' AND source_id = $1`,
      [project.id],
    );
    expect(rows[0].n).toBe(0);
  });

  it('with permanently_remove needs the full path', async () => {
    const admin = await server.factories.user({ admin: true });
    const group = await server.factories.group();
    const project = await server.factories.project({ namespace: group });
    const wrong = await server.request(
      'DELETE',
      `/projects/${project.id}?permanently_remove=true&full_path=nope`,
      {
        token: admin.token,
      },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({
      message: '`full_path` is incorrect. You must enter the complete path for the project.',
    });
    const right = await server.request(
      'DELETE',
      `/projects/${project.id}?permanently_remove=true&full_path=${encodeURIComponent(`${group.fullPath}/${project.path}`)}`,
      { token: admin.token },
    );
    expect(right.status).toBe(202);
  });
});

describe('shared_with_groups', () => {
  it('lists the groups a project is shared with, on the single project and in lists', async () => {
    const { project, member } = await projectWithMember(AccessLevel.Developer);
    const qa = await server.factories.group({ visibility: 'private' });
    await server.factories.share(project, qa, AccessLevel.Reporter, '2999-01-01');
    const expired = await server.factories.group();
    await server.factories.share(project, expired, AccessLevel.Reporter, '2001-01-01');
    const expected = [
      {
        group_id: qa.id,
        group_name: qa.name,
        group_full_path: qa.fullPath,
        group_access_level: AccessLevel.Reporter,
        expires_at: '2999-01-01',
      },
    ];
    const single = await server.request('GET', `/projects/${project.id}`, { token: member.token });
    expect((single.body as Json).shared_with_groups).toEqual(expected);
    const list = await server.request('GET', `/projects?membership=true`, { token: member.token });
    expect((list.body as Json[])[0].shared_with_groups).toEqual(expected);
  });
});

describe('who may create a project', () => {
  it('refuses personal projects to external users, and beyond projects_limit', async () => {
    const external = await server.factories.user({ external: true });
    const refused = await server.request('POST', '/projects', {
      token: external.token,
      json: { name: 'mine' },
    });
    // GitLab's API turns limit_reached into 403, the reasons as the message.
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      message: ['Personal project creation is not allowed. Please contact your administrator with questions'],
    });

    const limited = await server.factories.user();
    await server.dataSource.query('UPDATE users SET projects_limit = 1 WHERE id = $1', [limited.user.id]);
    const first = await server.request('POST', '/projects', { token: limited.token, json: { name: 'one' } });
    expect(first.status).toBe(201);
    const second = await server.request('POST', '/projects', { token: limited.token, json: { name: 'two' } });
    expect(second.status).toBe(403);
    expect(second.body).toEqual({
      message: ['Your project limit is 1 projects! Please contact your administrator to increase it'],
    });
  });

  it.each([
    [undefined, AccessLevel.Developer, 201],
    [undefined, AccessLevel.Reporter, 403],
    ['maintainer', AccessLevel.Developer, 403],
    ['maintainer', AccessLevel.Maintainer, 201],
    ['owner', AccessLevel.Maintainer, 403],
    ['noone', AccessLevel.Owner, 403],
  ])(
    'in a group with project_creation_level %s, access level %i answers %i',
    async (setting, level, status) => {
      const group = await server.factories.group({ visibility: 'private' });
      if (setting)
        await server.dataSource.query(`UPDATE namespaces SET settings = $2 WHERE id = $1`, [
          group.id,
          JSON.stringify({ project_creation_level: setting }),
        ]);
      const user = await server.factories.user();
      await server.factories.member(group, user.user, level);
      const response = await server.request('POST', '/projects', {
        token: user.token,
        json: { name: 'in-group', namespace_id: group.id },
      });
      expect(response.status).toBe(status);
    },
  );
});

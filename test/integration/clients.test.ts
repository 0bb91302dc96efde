import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

describe('@gitbeaker/rest', () => {
  it('creates, shows and lists projects, following pagination', async () => {
    const alice = await server.factories.user();
    const api = new Gitlab({ host: server.url, token: alice.token });
    const created = await api.Projects.create({
      name: 'Beaker Made',
      visibility: 'internal',
      topics: ['one', 'two'],
    });
    expect(created).toMatchObject({
      name: 'Beaker Made',
      path: 'beaker-made',
      visibility: 'internal',
      topics: ['one', 'two'],
    });
    for (let i = 0; i < 4; i++) await api.Projects.create({ name: `beaker-${i}` });

    const shown = await api.Projects.show(created.id, { statistics: true });
    expect(shown.statistics).toMatchObject({ commit_count: 0 });
    const byPath = await api.Projects.show(created.path_with_namespace);
    expect(byPath.id).toBe(created.id);

    const all = await api.Projects.all({ owned: true, perPage: 2, orderBy: 'id', sort: 'asc' });
    expect(all.map((p) => p.name)).toEqual(['Beaker Made', 'beaker-0', 'beaker-1', 'beaker-2', 'beaker-3']);

    const keyset = await api.Projects.all({
      owned: true,
      pagination: 'keyset',
      orderBy: 'id',
      sort: 'desc',
      perPage: 2,
    });
    expect(keyset.map((p) => p.id)).toEqual(all.map((p) => p.id).reverse());

    const { paginationInfo } = await api.Projects.all({
      owned: true,
      pagination: 'offset',
      perPage: 2,
      page: 2,
      maxPages: 1,
      showExpanded: true,
    });
    expect(paginationInfo).toMatchObject({
      total: 5,
      totalPages: 3,
      current: 2,
      next: 3,
      previous: 1,
      perPage: 2,
    });
  });

  it('edits, archives, unarchives and removes a project, and acts through sudo', async () => {
    const alice = await server.factories.user();
    const api = new Gitlab({ host: server.url, token: alice.token });
    const project = await api.Projects.create({ name: 'beaker-lifecycle' });
    const edited = await api.Projects.edit(project.id, { description: 'edited', mergeMethod: 'ff' });
    expect(edited).toMatchObject({ description: 'edited', merge_method: 'ff' });
    expect((await api.Projects.archive(project.id)).archived).toBe(true);
    expect((await api.Projects.unarchive(project.id)).archived).toBe(false);
    await api.Projects.remove(project.id);
    await expect(api.Projects.show(project.id)).rejects.toMatchObject({
      cause: { response: { status: 404 } },
    });

    const admin = await server.factories.user({ admin: true });
    const sudoToken = await server.factories.token(admin.user, ['api', 'sudo']);
    const asAlice = new Gitlab({ host: server.url, token: sudoToken, sudo: alice.user.username });
    const made = await asAlice.Projects.create({ name: 'made-as-alice' });
    expect(made.creator_id).toBe(alice.user.id);
  });

  it('reports GitLab errors', async () => {
    const alice = await server.factories.user();
    const api = new Gitlab({ host: server.url, token: alice.token });
    await expect(api.Projects.show(999999)).rejects.toMatchObject({ cause: { response: { status: 404 } } });
    const anonymous = new Gitlab({ host: server.url, token: 'glpat-wrong' });
    await expect(anonymous.Projects.all({ maxPages: 1 })).rejects.toMatchObject({
      cause: { response: { status: 401 } },
    });
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)('creates, gets and lists projects (needs Debian python3-gitlab)', async () => {
    const alice = await server.factories.user();
    const admin = await server.factories.user({ admin: true });
    const stdout = await runPythonClient('python_gitlab_projects.py', [server.url, alice.token, admin.token]);
    const [result, lifecycle, attributes] = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(result).toMatchObject({
      created_name: 'Python Made',
      created_path: 'python-made',
      issues_enabled: false,
      statistics: 0,
      same_id: true,
      current_page: 2,
      total: 6,
      total_pages: 3,
      next_page: 3,
      missing: 404,
      invalid: [400, 'name, path are missing, at least one parameter must be provided'],
    });
    expect(result.offset_ids).toHaveLength(6);
    expect(result.keyset_ids).toEqual(result.offset_ids);
    expect(lifecycle).toEqual({
      description: 'edited by python-gitlab',
      merge_method: 'ff',
      archived: true,
      unarchived: false,
      after_delete: 404,
    });
    expect(attributes).toEqual({
      custom_attribute: 'gold',
      custom_attributes: [['tier', 'gold']],
      filtered_ids: [attributes.created_id],
      created_id: attributes.created_id,
    });
  });
});

import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const tag = () => Math.random().toString(36).slice(2, 8);

describe('@gitbeaker/rest', () => {
  it('creates, shows, lists, edits and removes groups', async () => {
    const alice = await server.factories.user();
    const api = new Gitlab({ host: server.url, token: alice.token });
    const t = tag();
    const top = await api.Groups.create(`Beaker ${t}`, `beaker-${t}`, { visibility: 'public' });
    expect(top).toMatchObject({ name: `Beaker ${t}`, full_path: `beaker-${t}`, visibility: 'public' });
    const sub = await api.Groups.create('Sub', 'sub', { parentId: top.id, description: 'nested' });
    expect(sub).toMatchObject({ full_path: `beaker-${t}/sub`, parent_id: top.id, description: 'nested' });
    for (let i = 0; i < 3; i++) await api.Groups.create(`Extra ${i}`, `extra-${i}`, { parentId: top.id });
    const project = await api.Projects.create({ name: 'App', namespaceId: sub.id });

    const shown = await api.Groups.show(`beaker-${t}/sub`);
    expect(shown.id).toBe(sub.id);
    expect((shown.projects as Array<{ id: number }>).map((p) => p.id)).toEqual([project.id]);

    const all = await api.Groups.all({ search: t, pagination: 'offset', perPage: 2, orderBy: 'path' });
    expect(all.map((g) => g.full_path)).toEqual([
      `beaker-${t}`,
      `beaker-${t}/extra-0`,
      `beaker-${t}/extra-1`,
      `beaker-${t}/extra-2`,
      `beaker-${t}/sub`,
    ]);
    const { paginationInfo } = await api.Groups.all({
      search: t,
      pagination: 'offset',
      perPage: 2,
      page: 2,
      maxPages: 1,
      showExpanded: true,
    });
    expect(paginationInfo).toMatchObject({ total: 5, totalPages: 3, current: 2, next: 3, previous: 1 });

    const subgroups = await api.Groups.allSubgroups(top.id, { perPage: 3 });
    expect(subgroups.map((g) => g.path)).toEqual(['extra-0', 'extra-1', 'extra-2', 'sub']);
    const projects = await api.Groups.allProjects(top.id, { includeSubgroups: true });
    expect(projects.map((p) => p.id)).toEqual([project.id]);

    const edited = await api.Groups.edit(top.id, { path: `beaker-edited-${t}`, requestAccessEnabled: false });
    expect(edited).toMatchObject({ full_path: `beaker-edited-${t}`, request_access_enabled: false });
    expect((await api.Groups.show(sub.id)).full_path).toBe(`beaker-edited-${t}/sub`);

    await api.Groups.remove(top.id);
    await expect(api.Groups.show(sub.id)).rejects.toMatchObject({ cause: { response: { status: 404 } } });
  });

  it('reports GitLab errors', async () => {
    const alice = await server.factories.user();
    const api = new Gitlab({ host: server.url, token: alice.token });
    await expect(api.Groups.create('Bad', 'api')).rejects.toMatchObject({
      cause: { description: 'Failed to save group {:path=>["api is a reserved name"]}' },
    });
    const hidden = await server.factories.group();
    await expect(api.Groups.remove(hidden.id)).rejects.toMatchObject({
      cause: { response: { status: 404 } },
    });
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'creates, gets, lists, saves and deletes groups (needs Debian python3-gitlab)',
    async () => {
      const alice = await server.factories.user();
      const t = tag();
      const stdout = await runPythonClient('python_gitlab_groups.py', [server.url, alice.token, t]);
      expect(JSON.parse(stdout.trim())).toEqual({
        full_path: `py-${t}/sub`,
        by_id: `py-${t}`,
        by_path: true,
        projects_in_detail: ['app'],
        searched: [`py-${t}/extra-0`, `py-${t}/extra-1`, `py-${t}/extra-2`, `py-${t}`, `py-${t}/sub`],
        subgroups: ['extra-0', 'extra-1', 'extra-2', 'sub'],
        skipped: ['extra-0', 'extra-1', 'extra-2'],
        projects: [`py-${t}/sub/app`],
        current_page: 2,
        total: 5,
        total_pages: 3,
        saved: ['Saved by python-gitlab', `py-renamed-${t}`],
        moved: `py-renamed-${t}/sub`,
        project: `py-${t}/sub/app`,
        invalid: [
          400,
          "Failed to save group {:path=>[\"can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.\"]}",
        ],
        deleted: 404,
      });
    },
  );
});

import fs from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { git, gitText } from '../../src/git/git.js';
import { RepositoryStorage, parseStorages } from '../../src/git/storage.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

const repositoryOf = (projectId: number) => server.services.storage.diskPath('default', projectId);

describe('repository storage', () => {
  it('keeps each repository at a hashed path under its named storage', () => {
    expect(RepositoryStorage.relativePath(1)).toMatch(/^@hashed\/6b\/86\/6b86b273ff34fce1[0-9a-f]{48}\.git$/);
    expect(parseStorages('fast=/srv/fast', '/data')).toEqual({
      default: '/data/repositories',
      fast: '/srv/fast',
    });
    expect(parseStorages('default=/srv/main', '/data')).toEqual({ default: '/srv/main' });
    expect(() => parseStorages('nope', '/data')).toThrow(/FORGE_STORAGES/);
  });

  it('creates an empty bare repository with the project, whose HEAD is the default branch', async () => {
    const owner = await server.factories.user();
    const created = await server.request('POST', '/projects', {
      token: owner.token,
      json: { name: 'bare', default_branch: 'trunk' },
    });
    const dir = repositoryOf((created.body as Json).id as number);
    expect(await gitText(['rev-parse', '--is-bare-repository'], { gitDir: dir })).toBe('true');
    expect(await gitText(['symbolic-ref', 'HEAD'], { gitDir: dir })).toBe('refs/heads/trunk');
    expect(await gitText(['for-each-ref'], { gitDir: dir })).toBe('');
    expect(created.body).toMatchObject({ empty_repo: true, readme_url: null });
  });

  it('with initialize_with_readme makes the first commit on the default branch', async () => {
    const owner = await server.factories.user({ name: 'Ada Lovelace' });
    const created = await server.request('POST', '/projects', {
      token: owner.token,
      json: { name: 'Readme', description: 'Has one.', initialize_with_readme: true },
    });
    const dir = repositoryOf((created.body as Json).id as number);
    expect(await gitText(['show', 'main:README.md'], { gitDir: dir })).toBe('# Readme\n\nHas one.');
    expect(await gitText(['log', '-1', '--format=%an <%ae>|%s', 'main'], { gitDir: dir })).toBe(
      `Ada Lovelace <${owner.user.email}>|Initial commit`,
    );
    const shown = await server.request('GET', `/projects/${(created.body as Json).id}?statistics=true`, {
      token: owner.token,
    });
    expect(shown.body).toMatchObject({
      empty_repo: false,
      readme_url: `${(created.body as Json).web_url}/-/blob/main/README.md`,
      statistics: { commit_count: 1 },
    });
    expect(((shown.body as Json).statistics as Json).repository_size).toBeGreaterThan(0);
  });

  it('leaves neither a row nor a repository when creation fails half-way', async () => {
    const owner = await server.factories.user();
    const spy = vi
      .spyOn(server.services.storage, 'initializeWithReadme')
      .mockRejectedValueOnce(new Error('disk full'));
    const before = await server.dataSource.query('SELECT max(id) AS id FROM projects');
    const failed = await server.request('POST', '/projects', {
      token: owner.token,
      json: { name: 'half-way', initialize_with_readme: true },
    });
    spy.mockRestore();
    expect(failed.status).toBe(500);
    expect(failed.body).toEqual({ message: '500 Internal Server Error' });
    const rows = await server.dataSource.query(`SELECT id FROM projects WHERE path = 'half-way'`);
    expect(rows).toEqual([]);
    // The id the failed project had is the next one after the last committed project.
    const attempted = Number(before[0].id ?? 0) + 1;
    expect(fs.existsSync(repositoryOf(attempted))).toBe(false);
  });

  it('removes the repository with the project', async () => {
    const owner = await server.factories.user();
    const created = await server.request('POST', '/projects', {
      token: owner.token,
      json: { name: 'doomed', initialize_with_readme: true },
    });
    const id = (created.body as Json).id as number;
    expect(fs.existsSync(repositoryOf(id))).toBe(true);
    await git(['fsck'], { gitDir: repositoryOf(id) });
    expect((await server.request('DELETE', `/projects/${id}`, { token: owner.token })).status).toBe(202);
    expect(fs.existsSync(repositoryOf(id))).toBe(false);
  });

  it('puts the repository back when the rows cannot be deleted', async () => {
    const owner = await server.factories.user();
    const project = await server.factories.project({ owner });
    const spy = vi
      .spyOn(server.dataSource, 'transaction')
      .mockRejectedValueOnce(new Error('connection lost'));
    const failed = await server.request('DELETE', `/projects/${project.id}`, { token: owner.token });
    spy.mockRestore();
    expect(failed.status).toBe(500);
    expect(fs.existsSync(repositoryOf(project.id))).toBe(true);
    expect((await server.request('GET', `/projects/${project.id}`, { token: owner.token })).status).toBe(200);
  });

  it('reports the license file of the default branch with license=true', async () => {
    const owner = await server.factories.user();
    const project = await server.factories.project({ owner, initialize_with_readme: true });
    const path = `/projects/${project.id}?license=true`;
    expect((await server.request('GET', path, { token: owner.token })).body).toMatchObject({
      license_url: null,
      license: null,
    });
    const mit =
      'MIT License\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\n' +
      'The above copyright notice and this permission notice shall be included in all copies.\n';
    const added = await server.request('POST', `/projects/${project.id}/repository/files/LICENSE`, {
      token: owner.token,
      json: { branch: 'main', content: mit, commit_message: 'Add a license' },
    });
    expect(added.status).toBe(201);
    const shown = (await server.request('GET', path, { token: owner.token })).body as Json;
    expect(shown.license_url).toBe(`${shown.web_url}/-/blob/main/LICENSE`);
    expect(shown.license).toEqual({
      key: 'mit',
      name: 'MIT License',
      nickname: null,
      html_url: 'https://choosealicense.com/licenses/mit/',
      source_url: 'https://opensource.org/licenses/MIT',
    });
  });
});

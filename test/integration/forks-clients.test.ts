/** Forks and uploads through the real clients: @gitbeaker/rest and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

describe('@gitbeaker/rest', () => {
  it('forks, lists forks, unlinks and links them', async () => {
    const { project } = await server.factories.ownedProjectWithReadme({ visibility: 'public' });
    const forker = await server.factories.user();
    const admin = await server.factories.user({ admin: true });
    const api = new Gitlab({ host: server.url, token: forker.token });

    const fork = (await api.Projects.fork(project.id, { mrDefaultTargetSelf: true })) as Json;
    expect(fork).toMatchObject({
      forked_from_project: { id: project.id },
      mr_default_target_self: true,
      import_status: 'finished',
    });
    const other = await server.factories.user();
    await new Gitlab({ host: server.url, token: other.token }).Projects.fork(project.id, {
      path: 'second-fork',
      name: 'second fork',
    });
    const forks = await api.Projects.allForks(project.id, { orderBy: 'id', sort: 'asc' });
    expect(forks.map((p) => p.id)).toHaveLength(2);
    expect(forks[0].id).toBe(fork.id);

    await api.Projects.removeForkRelationship(fork.id as number);
    expect(await api.Projects.show(fork.id as number)).not.toHaveProperty('forked_from_project');
    const asAdmin = new Gitlab({ host: server.url, token: admin.token });
    await asAdmin.Projects.createForkRelationship(fork.id as number, project.id);
    expect(await api.Projects.show(fork.id as number)).toMatchObject({
      forked_from_project: { id: project.id },
    });
    await expect(api.Projects.fork(project.id)).rejects.toMatchObject({
      cause: { response: { status: 409 } },
    });
  });

  it('uploads, lists, downloads and removes files', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const api = new Gitlab({ host: server.url, token: owner.token });
    const created = (await api.Projects.uploadForReference(project.id, {
      content: new Blob(['hello upload']),
      filename: 'notes.txt',
    })) as Json;
    expect(created).toMatchObject({ alt: 'notes', markdown: `[notes](${created.url})` });
    const again = (await api.ProjectMarkdownUploads.create(project.id, {
      content: new Blob(['\x89PNG']),
      filename: 'image.png',
    })) as Json;
    expect(again.markdown).toBe(`![image](${again.url})`);

    const listed = await api.ProjectMarkdownUploads.all(project.id);
    expect(listed.map((upload) => upload.filename)).toEqual(['image.png', 'notes.txt']);
    // Text comes back as a string (its type is text/plain), anything else as a Blob.
    const text = async (body: unknown) => (typeof body === 'string' ? body : (body as Blob).text());
    expect(await text(await api.ProjectMarkdownUploads.download(project.id, created.id as number))).toBe(
      'hello upload',
    );
    const [, secret, filename] = (created.url as string).split('/').slice(1);
    expect(await text(await api.ProjectMarkdownUploads.download(project.id, secret, filename))).toBe(
      'hello upload',
    );
    await api.ProjectMarkdownUploads.remove(project.id, created.id as number);
    await api.ProjectMarkdownUploads.remove(
      project.id,
      ...((again.url as string).split('/').slice(2) as [string, string]),
    );
    expect(await api.ProjectMarkdownUploads.all(project.id)).toEqual([]);
    const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
    await expect(
      new Gitlab({ host: server.url, token: reporter.token }).ProjectMarkdownUploads.all(project.id),
    ).rejects.toMatchObject({ cause: { response: { status: 403 } } });
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)('forks and uploads (needs Debian python3-gitlab)', async () => {
    const { project } = await server.factories.ownedProjectWithReadme({ visibility: 'internal' });
    const forker = await server.factories.user();
    const admin = await server.factories.user({ admin: true });
    const group = await server.factories.group({ visibility: 'internal' });
    await server.factories.member(group, forker.user, AccessLevel.Maintainer);
    const stdout = await runPythonClient('python_gitlab_forks.py', [
      server.url,
      forker.token,
      admin.token,
      String(project.id),
      group.fullPath,
    ]);
    expect(JSON.parse(stdout)).toEqual({
      mine: [project.id, 'finished', 'user'],
      named: [`${group.fullPath}/py-fork`, project.id],
      listed: true,
      paged: true,
      fork: [project.id, false],
      again: [409, { name: ['has already been taken'], path: ['has already been taken'] }],
      unlinked: false,
      relinked: project.id,
      forks_count: 2,
      uploaded: ['diagram', true, true],
      document: ['notes', true],
    });
  });
});

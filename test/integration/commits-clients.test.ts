/** The commits API through the real clients: @gitbeaker/rest and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { gitText } from '../../src/git/git.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

describe('@gitbeaker/rest', () => {
  it('creates, lists and shows commits', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const api = new Gitlab({ host: server.url, token: owner.token });
    const created = await api.Commits.create(project.id, 'main', 'From gitbeaker', [
      { action: 'create', filePath: 'beaker/one.txt', content: 'one\n' },
      { action: 'create', filePath: 'beaker/two.txt', content: 'dHdvCg==', encoding: 'base64' },
    ]);
    expect(created).toMatchObject({
      title: 'From gitbeaker',
      stats: { additions: 2, deletions: 0, total: 2 },
    });
    const dir = server.services.storage.diskPath('default', project.id);
    expect(await gitText(['show', 'main:beaker/two.txt'], { gitDir: dir })).toBe('two');

    await api.Commits.create(
      project.id,
      'side',
      'On a side branch',
      [{ action: 'delete', filePath: 'README.md' }],
      {
        startBranch: 'main',
      },
    );
    // Offset pagination followed through the Link header, one commit per page.
    const all = await api.Commits.all(project.id, { refName: 'side', perPage: 1 });
    expect(all.map((c) => c.title)).toEqual(['On a side branch', 'From gitbeaker', 'Initial commit']);
    const withStats = await api.Commits.all(project.id, { withStats: true, maxPages: 1 });
    expect(withStats[0]).toMatchObject({ id: created.id, stats: { total: 2 } });

    const shown = await api.Commits.show(project.id, created.id);
    expect(shown).toMatchObject({ id: created.id, project_id: project.id, last_pipeline: null });
    await expect(api.Commits.show(project.id, 'no-such-ref')).rejects.toMatchObject({
      cause: { response: { status: 404 } },
    });
    await expect(
      api.Commits.create(project.id, 'main', 'again', [
        { action: 'create', filePath: 'beaker/one.txt', content: 'x' },
      ]),
    ).rejects.toMatchObject({ cause: { description: 'A file with this name already exists' } });
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)('creates, lists and gets commits (needs Debian python3-gitlab)', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const stdout = await runPythonClient('python_gitlab_commits.py', [
      server.url,
      owner.token,
      String(project.id),
    ]);
    const result = JSON.parse(stdout.trim());
    const dir = server.services.storage.diskPath('default', project.id);
    const initial = await gitText(['rev-parse', 'main~1'], { gitDir: dir });
    expect(result).toEqual({
      created_title: 'From python-gitlab',
      created_parent_count: 1,
      // The binary file counts no lines.
      created_stats: { additions: 1, deletions: 0, total: 1 },
      second_parent: result.created_id,
      listed: [result.second_id, result.created_id, initial],
      total: null,
      next_page: 2,
      shown_id: result.created_id,
      shown_short_id: result.created_id.slice(0, 11),
      shown_project_id: project.id,
      duplicate: [400, 'A file with this name already exists'],
      missing: [404, '404 Commit Not Found'],
      created_id: await gitText(['rev-parse', 'main'], { gitDir: dir }),
      second_id: await gitText(['rev-parse', 'topic'], { gitDir: dir }),
    });
  });
});

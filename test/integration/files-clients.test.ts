/** The repository files API through the real clients: @gitbeaker/rest and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

describe('@gitbeaker/rest', () => {
  it('creates, shows, edits, reads raw and removes a file', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const api = new Gitlab({ host: server.url, token: owner.token });

    const created = await api.RepositoryFiles.create(
      project.id,
      'src/main.ts',
      'main',
      'export {};\n',
      'Add main',
    );
    expect(created).toEqual({ file_path: 'src/main.ts', branch: 'main' });
    const shown = await api.RepositoryFiles.show(project.id, 'src/main.ts', 'main');
    expect(shown).toMatchObject({ file_name: 'main.ts', file_path: 'src/main.ts', encoding: 'base64' });
    expect(Buffer.from(shown.content, 'base64').toString()).toBe('export {};\n');

    const edited = await api.RepositoryFiles.edit(
      project.id,
      'src/main.ts',
      'main',
      'export const x = 1;\n',
      'Edit',
      {
        lastCommitId: shown.last_commit_id,
      },
    );
    expect(edited).toEqual({ file_path: 'src/main.ts', branch: 'main' });
    const raw = await api.RepositoryFiles.showRaw(project.id, 'src/main.ts', 'main');
    expect(raw).toBe('export const x = 1;\n');
    const blame = await api.RepositoryFiles.allFileBlames(project.id, 'src/main.ts', 'main');
    expect(blame.map((range) => [range.commit.title, range.lines])).toEqual([
      ['Edit', ['export const x = 1;']],
    ]);

    await expect(
      api.RepositoryFiles.edit(project.id, 'src/main.ts', 'main', 'stale', 'Edit', {
        lastCommitId: shown.last_commit_id,
      }),
    ).rejects.toMatchObject({
      cause: {
        description: 'You are attempting to update a file that has changed since you started editing it.',
      },
    });

    await api.RepositoryFiles.remove(project.id, 'src/main.ts', 'main', 'Remove');
    await expect(api.RepositoryFiles.show(project.id, 'src/main.ts', 'main')).rejects.toMatchObject({
      cause: { response: { status: 404 } },
    });
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'creates, gets, saves, reads raw and deletes files (needs Debian python3-gitlab)',
    async () => {
      const { owner, project } = await server.factories.ownedProjectWithReadme();
      const stdout = await runPythonClient('python_gitlab_files.py', [
        server.url,
        owner.token,
        String(project.id),
      ]);
      expect(JSON.parse(stdout.trim())).toEqual({
        created: { file_path: 'docs/guide.md', branch: 'main' },
        first_content: '# Guide\n',
        fetched_file_name: 'guide.md',
        raw: '# Guide\n\nMore.\n',
        blame: [
          ['Add the guide', ['# Guide']],
          ['Expand the guide', ['', 'More.']],
        ],
        binary: Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1]).toString('base64'),
        updated: 'text now',
        after_delete: [404, '404 File Not Found'],
        duplicate: [400, 'A file with this name already exists'],
      });
    },
  );
});

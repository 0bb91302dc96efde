/** Snippets through the real clients: @gitbeaker/rest (ProjectSnippets, Snippets) and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

async function world() {
  const { project } = await server.factories.ownedProjectWithReadme();
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  const admin = await server.factories.user({ admin: true });
  return { project, maintainer, admin };
}

describe('@gitbeaker/rest', () => {
  it('creates, edits with every file action, reads raw and deletes a project snippet', async () => {
    const { project, maintainer, admin } = await world();
    const api = new Gitlab({ host: server.url, token: maintainer.token });
    const created = await api.ProjectSnippets.create(project.id, 'Beaker', {
      visibility: 'internal',
      description: 'two files',
      files: [
        { filePath: 'a.txt', content: 'a\n' },
        { filePath: 'dir/b.txt', content: 'b\n' },
      ],
    });
    expect(created).toMatchObject({ title: 'Beaker', visibility: 'internal', project_id: project.id });
    expect(created.files?.map((f) => f.path).sort()).toEqual(['a.txt', 'dir/b.txt']);
    const first = await api.ProjectSnippets.showRepositoryFileContent(
      project.id,
      created.id,
      'main',
      'dir/b.txt',
    );
    expect(String(first)).toBe('b\n');
    await api.ProjectSnippets.edit(project.id, created.id, {
      files: [
        { action: 'update', filePath: 'a.txt', content: 'A\n' },
        { action: 'move', previousPath: 'dir/b.txt', filePath: 'c.txt' },
        { action: 'create', filePath: 'd.txt', content: 'd\n' },
      ],
    });
    const edited = await api.ProjectSnippets.edit(project.id, created.id, {
      files: [{ action: 'delete', filePath: 'd.txt' }],
    });
    expect(edited.files?.map((f) => f.path).sort()).toEqual(['a.txt', 'c.txt']);
    expect(String(await api.ProjectSnippets.showContent(project.id, created.id))).toBe('A\n');
    const listed = await api.ProjectSnippets.all(project.id);
    expect(listed.map((s) => s.id)).toEqual([created.id]);
    expect((await api.ProjectSnippets.show(project.id, created.id)).title).toBe('Beaker');
    const adminApi = new Gitlab({ host: server.url, token: admin.token });
    const detail = await adminApi.ProjectSnippets.showUserAgentDetails(project.id, created.id);
    expect(detail.akismet_submitted).toBe(false);
    await api.ProjectSnippets.remove(project.id, created.id);
    await expect(api.ProjectSnippets.show(project.id, created.id)).rejects.toThrow();
  });

  it('drives personal snippets', async () => {
    const { maintainer, admin } = await world();
    const api = new Gitlab({ host: server.url, token: maintainer.token });
    const created = await api.Snippets.create('Personal', {
      visibility: 'public',
      files: [{ filePath: 'p.md', content: '# p\n' }],
    });
    expect(created).toMatchObject({ title: 'Personal', project_id: null, file_name: 'p.md' });
    expect((await api.Snippets.all()).map((s) => s.id)).toContain(created.id);
    expect((await api.Snippets.all({ public: true })).map((s) => s.id)).toContain(created.id);
    expect(String(await api.Snippets.showContent(created.id))).toBe('# p\n');
    expect(String(await api.Snippets.showRepositoryFileContent(created.id, 'main', 'p.md'))).toBe('# p\n');
    const edited = await api.Snippets.edit(created.id, { description: 'now described' });
    expect(edited.description).toBe('now described');
    const detail = await new Gitlab({ host: server.url, token: admin.token }).Snippets.showUserAgentDetails(
      created.id,
    );
    expect(typeof detail.user_agent).toBe('string');
    await api.Snippets.remove(created.id);
    await expect(api.Snippets.show(created.id)).rejects.toThrow();
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'drives project.snippets and gl.snippets (needs Debian python3-gitlab)',
    async () => {
      const { project, maintainer, admin } = await world();
      const stdout = await runPythonClient('python_gitlab_snippets.py', [
        server.url,
        maintainer.token,
        admin.token,
        String(project.id),
      ]);
      expect(JSON.parse(stdout.trim())).toEqual({
        created: ['py', 'hello.py', 'private', true],
        content: "print('hi')\n",
        changed: ['renamed', 'hello.py'],
        changed_content: "print('bye')\n",
        listed: ['renamed'],
        detail: [true, false],
        refused_detail: 403,
        after_delete: [404, '404 Snippet Not Found'],
        personal: [null, true],
        own: [true],
        public: true,
        all: true,
        personal_content: '# notes\n',
        personal_title: 'mine, renamed',
        personal_detail: true,
        personal_after_delete: false,
      });
    },
  );
});

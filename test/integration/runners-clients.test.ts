/** Runners through the real clients: python-gitlab 3.12 and @gitbeaker/rest. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

async function world() {
  const admin = await server.factories.user({ admin: true });
  const group = await server.factories.group();
  const project = await server.factories.project({ owner: admin, namespace: group });
  const other = await server.factories.project({ owner: admin, namespace: group });
  // The caller's own runners (`GET /runners`) come from memberships, administrators' too.
  await server.factories.member(group, admin.user, AccessLevel.Owner);
  return { admin, group, project, other, api: new Gitlab({ host: server.url, token: admin.token }) };
}

describe('@gitbeaker/rest', () => {
  it('drives Users.createCIRunner and Runners', async () => {
    const { group, project, other, api } = await world();
    const created = await api.Users.createCIRunner('project_type', {
      projectId: project.id,
      description: 'gb',
      tagList: ['a'],
    } as never);
    expect(created.token).toMatch(/^glrt-/);
    const id = created.id as number;
    await api.Runners.verify({ token: created.token } as never);
    const shown = await api.Runners.show(id);
    expect(shown).toMatchObject({ id, description: 'gb', tag_list: ['a'], runner_type: 'project_type' });
    expect(await api.Runners.edit(id, { paused: true } as never)).toMatchObject({ paused: true });
    expect((await api.Runners.all({ owned: true })).map((r) => r.id)).toContain(id);
    expect((await api.Runners.all()).map((r) => r.id)).toContain(id);
    expect((await api.Runners.all({ projectId: project.id })).map((r) => r.id)).toContain(id);
    expect(Array.isArray(await api.Runners.all({ groupId: group.id }))).toBe(true);
    expect(await api.Runners.enable(other.id, id)).toMatchObject({ id });
    await api.Runners.disable(other.id, id);
    expect(await api.Runners.allJobs(id)).toEqual([]);
    const legacy = await api.Runners.create(
      ((await api.Projects.show(project.id)) as { runners_token: string }).runners_token,
      { description: 'legacy' },
    );
    await api.Runners.remove({ token: legacy.token as string });
    await api.Runners.remove({ runnerId: id });
    await expect(api.Runners.show(id)).rejects.toThrow();
  });
});

describe('python-gitlab', () => {
  it.runIf(pythonGitlab)(
    'drives gl.runners, gl.runners_all, project.runners, group.runners (needs Debian python3-gitlab)',
    async () => {
      const { admin, group, project, other } = await world();
      const stdout = await runPythonClient('python_gitlab_runners.py', [
        server.url,
        admin.token,
        String(group.id),
        String(project.id),
        String(other.id),
      ]);
      expect(JSON.parse(stdout.trim())).toEqual({
        created: [true, null],
        verify_unknown: 403,
        registered: true,
        got: ['py', ['a', 'b'], 'project_type', 'never_contacted', false],
        saved: ['renamed', true],
        owned: [true, true],
        all: true,
        runners_all: true,
        paused_filter: true,
        enabled: true,
        project_list: true,
        disabled: true,
        group_list: true,
        jobs: [],
        deleted: 404,
      });
    },
  );
});

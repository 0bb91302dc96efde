/**
 * Writes racing a project's deletion (issue 9): a commit whose project is deleted while it runs answers
 * GitLab's 404 for the project, never a 500 about a missing git repository.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

const commit = (owner: TestUser, project: Project, n: number) =>
  server.request('POST', `/projects/${project.id}/repository/commits`, {
    token: owner.token,
    json: {
      branch: `race-${n}`,
      start_branch: 'main',
      commit_message: `race ${n}`,
      actions: [{ action: 'create', file_path: `race-${n}.txt`, content: `${n}\n` }],
    },
  });

const PROJECT_GONE = { message: '404 Project Not Found' };

describe('commits racing a project delete', () => {
  it('answer 201 before the delete and 404 after it, never 500', async () => {
    const statuses: number[] = [];
    // Several rounds, so that some commits are caught at each step of their own run.
    for (let round = 0; round < 4; round++) {
      const { owner, project } = await server.factories.ownedProjectWithReadme();
      const commits = Array.from({ length: 10 }, (_, n) => commit(owner, project, n));
      // The delete starts while the commits are at different steps of their run.
      await new Promise((resolve) => setTimeout(resolve, round * 15));
      const deleted = await server.request('DELETE', `/projects/${project.id}`, { token: owner.token });
      expect(deleted.status).toBe(202);
      for (const response of await Promise.all(commits)) {
        statuses.push(response.status);
        if (response.status !== 201) expect(response.body).toEqual(PROJECT_GONE);
      }
      const after = await commit(owner, project, 99);
      expect(after.status).toBe(404);
      expect(after.body).toEqual(PROJECT_GONE);
    }
    expect(statuses.filter((status) => status !== 201 && status !== 404)).toEqual([]);
    expect(statuses).toContain(404);
  });

  it('answers 404 when the repository vanishes under a commit already resolved', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const view = await server.services.projects.find(owner.caller, project.id);
    const dir = server.services.repositories.dir(view);
    fs.rmSync(dir, { recursive: true, force: true });
    await expect(
      server.services.commits.create(owner.caller, view, {
        branch: 'main',
        commit_message: 'into the void',
        actions: [{ action: 'create', file_path: 'void.txt', content: 'x' }],
      }),
    ).rejects.toMatchObject({ status: 404, body: PROJECT_GONE });
  });

  it('answers 404 when the row goes between the ref update and its record', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const view = await server.services.projects.find(owner.caller, project.id);
    // The row is gone but the repository is still in place: the window between a delete's commit and
    // the repository's move out of its path.
    await server.dataSource.query('DELETE FROM projects WHERE id = $1', [project.id]);
    await expect(
      server.services.commits.create(owner.caller, view, {
        branch: 'main',
        commit_message: 'too late',
        actions: [{ action: 'create', file_path: 'late.txt', content: 'x' }],
      }),
    ).rejects.toMatchObject({ status: 404, body: PROJECT_GONE });
    const pushes = (await server.dataSource.query(
      'SELECT count(*)::int AS n FROM push_events WHERE project_id = $1',
      [project.id],
    )) as Json[];
    expect(pushes[0].n).toBe(0);
  });
});

describe('deletions racing each other', () => {
  it('a group deletion beside deletions and archivals of its projects never deadlocks', async () => {
    const admin = await server.factories.user({ admin: true });
    const member = await server.factories.user();
    const as = { token: admin.token };
    const statuses: number[] = [];
    for (let round = 0; round < 6; round++) {
      const path = `race-group-${round}-${Date.now()}`;
      const group = (await server.request('POST', '/groups', { ...as, json: { name: path, path } }))
        .body as Json;
      const projects: Json[] = [];
      for (let n = 0; n < 4; n++) {
        const created = await server.request('POST', '/projects', {
          ...as,
          json: { name: `p${n}`, namespace_id: group.id },
        });
        projects.push(created.body as Json);
        // Members rows are what a project deletion and a group deletion both remove.
        await server.request('POST', `/projects/${projects[n].id}/members`, {
          ...as,
          json: { user_id: member.user.id, access_level: 30 },
        });
      }
      const answers = await Promise.all([
        server.request('DELETE', `/projects/${projects[0].id}`, as),
        server.request('POST', `/projects/${projects[1].id}/archive`, as),
        server.request('DELETE', `/groups/${group.id}`, as),
        server.request('DELETE', `/projects/${projects[2].id}`, as),
        server.request('POST', `/projects/${projects[3].id}/archive`, as),
      ]);
      statuses.push(...answers.map((answer) => answer.status));
      const left = await server.dataSource.query('SELECT count(*)::int AS n FROM namespaces WHERE id = $1', [
        group.id,
      ]);
      expect(left[0].n).toBe(0);
    }
    expect(statuses.filter((status) => ![201, 202, 404].includes(status))).toEqual([]);
  });
});

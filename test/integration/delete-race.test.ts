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

/**
 * The readable-project sets cached per user (src/core/readable-projects.ts) never outlive the data
 * they come from: each test lists first (filling the cache), changes what decides access, through the
 * API or straight in the database as another process would, and lists again.
 */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Namespace } from '../../src/namespaces/namespace.entity.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

/** A merge request written straight into the table (no repository needed to list it). */
async function mergeRequest(project: Project, author: TestUser): Promise<void> {
  await server.dataSource.query(
    `INSERT INTO merge_requests (iid, target_project_id, source_project_id, source_branch, target_branch,
       title, author_id)
     SELECT COALESCE(max(iid), 0) + 1, $1, $1, 'topic-' || (COALESCE(max(iid), 0) + 1), 'main', 'Change', $2
     FROM merge_requests WHERE target_project_id = $1`,
    [project.id, author.user.id],
  );
}

/** The projects (ids) of the merge requests `user` lists at `path`, among `projects`. */
async function listed(user: TestUser, path: string, projects: Project[]): Promise<number[]> {
  const res = await server.request('GET', path, { token: user.token });
  expect(res.status, res.text).toBe(200);
  const ids = new Set(projects.map((p) => p.id));
  const found = (res.body as Json[]).map((mr) => Number(mr.project_id ?? mr.id));
  return [...new Set(found.filter((id) => ids.has(id)))].sort((a, b) => a - b);
}

const mergeRequests = (user: TestUser, projects: Project[]) =>
  listed(user, '/merge_requests?scope=all&per_page=100', projects);
const groupMergeRequests = (user: TestUser, group: Namespace, projects: Project[]) =>
  listed(user, `/groups/${group.id}/merge_requests?per_page=100`, projects);
const memberProjects = (user: TestUser, projects: Project[]) =>
  listed(user, '/projects?membership=true&per_page=100', projects);
const visibleProjects = (user: TestUser, projects: Project[]) =>
  listed(user, '/projects?per_page=100', projects);

/** A private group with a private project holding a merge request, its owner, and a Developer of the group. */
async function world() {
  const owner = await server.factories.user();
  const group = await server.factories.group();
  await server.factories.member(group, owner.user, AccessLevel.Owner);
  const project = await server.factories.project({ owner, namespace: group });
  await mergeRequest(project, owner);
  const developer = await server.factories.memberOf(group, AccessLevel.Developer);
  return { owner, group, project, developer };
}

describe('readable projects stay true', () => {
  it('a removed project member no longer reads its merge requests', async () => {
    const owner = await server.factories.user();
    const project = await server.factories.project({ owner });
    await mergeRequest(project, owner);
    const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
    expect(await mergeRequests(reporter, [project])).toEqual([project.id]);
    expect(await memberProjects(reporter, [project])).toEqual([project.id]);
    const res = await server.request('DELETE', `/projects/${project.id}/members/${reporter.user.id}`, {
      token: owner.token,
    });
    expect(res.status, res.text).toBe(204);
    expect(await mergeRequests(reporter, [project])).toEqual([]);
    expect(await memberProjects(reporter, [project])).toEqual([]);
    expect(await visibleProjects(reporter, [project])).toEqual([]);
  });

  it('a removed group member, and a new one, are seen at once', async () => {
    const { owner, group, project, developer } = await world();
    expect(await mergeRequests(developer, [project])).toEqual([project.id]);
    expect(await groupMergeRequests(developer, group, [project])).toEqual([project.id]);
    const res = await server.request('DELETE', `/groups/${group.id}/members/${developer.user.id}`, {
      token: owner.token,
    });
    expect(res.status, res.text).toBe(204);
    expect(await mergeRequests(developer, [project])).toEqual([]);
    expect(await memberProjects(developer, [project])).toEqual([]);
    const added = await server.request('POST', `/groups/${group.id}/members`, {
      token: owner.token,
      json: { user_id: developer.user.id, access_level: AccessLevel.Reporter },
    });
    expect(added.status, added.text).toBe(201);
    expect(await mergeRequests(developer, [project])).toEqual([project.id]);
    expect(await memberProjects(developer, [project])).toEqual([project.id]);
  });

  it('a membership that expires, or drops below Reporter, stops reading', async () => {
    const { project, developer } = await world();
    expect(await mergeRequests(developer, [project])).toEqual([project.id]);
    expect(await memberProjects(developer, [project])).toEqual([project.id]);
    // Written as another process would: no service of this one hears of it.
    await server.dataSource.query(`UPDATE members SET expires_at = current_date WHERE user_id = $1`, [
      developer.user.id,
    ]);
    expect(await mergeRequests(developer, [project])).toEqual([]);
    expect(await memberProjects(developer, [project])).toEqual([]);
    await server.dataSource.query(
      `UPDATE members SET expires_at = NULL, access_level = $2 WHERE user_id = $1`,
      [developer.user.id, AccessLevel.Guest],
    );
    expect(await mergeRequests(developer, [project])).toEqual([]);
    expect(await memberProjects(developer, [project])).toEqual([project.id]);
  });

  it("a project's visibility and merge request setting are seen at once", async () => {
    const { owner, project } = await world();
    const outsider = await server.factories.user();
    expect(await mergeRequests(outsider, [project])).toEqual([]);
    expect(await visibleProjects(outsider, [project])).toEqual([]);
    const group = await server.request('PUT', `/groups/${project.namespaceId}`, {
      token: owner.token,
      json: { visibility: 'internal' },
    });
    expect(group.status, group.text).toBe(200);
    const res = await server.request('PUT', `/projects/${project.id}`, {
      token: owner.token,
      json: { visibility: 'internal' },
    });
    expect(res.status, res.text).toBe(200);
    expect(await mergeRequests(outsider, [project])).toEqual([project.id]);
    expect(await visibleProjects(outsider, [project])).toEqual([project.id]);
    const off = await server.request('PUT', `/projects/${project.id}`, {
      token: owner.token,
      json: { merge_requests_enabled: false },
    });
    expect(off.status, off.text).toBe(200);
    expect(await mergeRequests(outsider, [project])).toEqual([]);
  });

  it('a project moved to another group, or a group moved under another, changes who reads it', async () => {
    const { project, developer } = await world();
    const { group: elsewhere, developer: other } = await world();
    expect(await mergeRequests(developer, [project])).toEqual([project.id]);
    expect(await mergeRequests(other, [project])).toEqual([]);
    expect(await groupMergeRequests(other, elsewhere, [project])).toEqual([]);
    await server.dataSource.query(`UPDATE projects SET namespace_id = $2 WHERE id = $1`, [
      project.id,
      elsewhere.id,
    ]);
    expect(await mergeRequests(developer, [project])).toEqual([]);
    expect(await memberProjects(developer, [project])).toEqual([]);
    expect(await mergeRequests(other, [project])).toEqual([project.id]);
    expect(await groupMergeRequests(other, elsewhere, [project])).toEqual([project.id]);

    // A subgroup's projects follow the subgroup.
    const { group: parent, developer: parentDeveloper } = await world();
    const { group: child, project: inChild } = await world();
    expect(await mergeRequests(parentDeveloper, [inChild])).toEqual([]);
    await server.dataSource.query(
      `UPDATE namespaces SET parent_id = $2, traversal_ids = ARRAY[$2::int, $1::int] WHERE id = $1`,
      [child.id, parent.id],
    );
    expect(await mergeRequests(parentDeveloper, [inChild])).toEqual([inChild.id]);
    expect(await memberProjects(parentDeveloper, [inChild])).toEqual([inChild.id]);
  });

  it('a share with a group, and its expiry, are seen at once', async () => {
    const { project } = await world();
    const { group: team, developer } = await world();
    expect(await mergeRequests(developer, [project])).toEqual([]);
    await server.factories.share(project, team, AccessLevel.Reporter);
    expect(await mergeRequests(developer, [project])).toEqual([project.id]);
    expect(await memberProjects(developer, [project])).toEqual([project.id]);
    await server.dataSource.query(
      `UPDATE project_group_links SET expires_at = current_date WHERE project_id = $1`,
      [project.id],
    );
    expect(await mergeRequests(developer, [project])).toEqual([]);
    expect(await memberProjects(developer, [project])).toEqual([]);
  });

  it('a stored set is read under its own generation and day only', async () => {
    const { project, developer } = await world();
    expect(await mergeRequests(developer, [project])).toEqual([project.id]);
    const key = `merge_requests:${developer.user.id}::`;
    const stamp = `(SELECT generation::text FROM authorization_generation)`;
    // Emptied under the current stamp, the stored set is what the list reads...
    await server.dataSource.query(
      `UPDATE readable_project_sets SET ids = '{}' WHERE key = $1 AND stamp = ${stamp} || ' ' || current_date::text`,
      [key],
    );
    expect(await mergeRequests(developer, [project])).toEqual([]);
    // ...and under yesterday's date (a membership may have expired since), it is not.
    await server.dataSource.query(
      `UPDATE readable_project_sets SET stamp = ${stamp} || ' ' || (current_date - 1)::text WHERE key = $1`,
      [key],
    );
    expect(await mergeRequests(developer, [project])).toEqual([project.id]);
  });

  // The embedded database has one connection: a transaction left open would hold every request.
  it.skipIf(!process.env.FORGE_TEST_DATABASE_URL)(
    'an uncommitted change is not read, and its commit is',
    async () => {
      const { project, developer } = await world();
      expect(await mergeRequests(developer, [project])).toEqual([project.id]);
      const runner = server.dataSource.createQueryRunner();
      await runner.startTransaction();
      try {
        await runner.query(`DELETE FROM members WHERE user_id = $1`, [developer.user.id]);
        expect(await mergeRequests(developer, [project])).toEqual([project.id]);
        await runner.commitTransaction();
      } finally {
        if (runner.isTransactionActive) await runner.rollbackTransaction();
        await runner.release();
      }
      expect(await mergeRequests(developer, [project])).toEqual([]);
    },
  );
});

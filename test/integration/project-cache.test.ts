/**
 * A project's read for a caller is kept in memory (ProjectsService.find, src/db/change-cache.ts): whatever
 * changes the project, its namespace, its shares, its owner or anyone's access, by the API or by SQL, the
 * very next request is answered as if nothing were cached.
 */
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

const DEVELOPER = 30;

/** A private project in a group, and a Developer of the project: the read twice, so from memory. */
async function cached() {
  const group = await server.factories.group({ visibility: 'private' });
  const project = await server.factories.project({ namespace: group, visibility: 'private' });
  const member = await server.factories.memberOf(project, DEVELOPER);
  const read = (path: string | number = project.id) =>
    server.request('GET', `/projects/${encodeURIComponent(String(path))}`, { token: member.token });
  for (let i = 0; i < 2; i++) expect((await read()).status).toBe(200);
  return { group, project, member, read };
}

describe('a cached project read', () => {
  it('is served from memory: a change the triggers do not announce goes unseen until one is', async () => {
    const { project, read } = await cached();
    // Only possible behind the application's back: triggers off for one transaction.
    await server.dataSource.transaction(async (tx) => {
      await tx.query(`SET LOCAL session_replication_role = replica`);
      await tx.query(`UPDATE projects SET description = 'behind' WHERE id = $1`, [project.id]);
    });
    expect(((await read()).body as Json).description).not.toBe('behind');
    await server.dataSource.query(`UPDATE projects SET star_count = star_count WHERE id = $1`, [project.id]);
    expect(((await read()).body as Json).description).toBe('behind');
  });

  it('shows a change to the project row at once', async () => {
    const { project, read } = await cached();
    await server.dataSource.query(`UPDATE projects SET description = 'changed' WHERE id = $1`, [project.id]);
    expect(((await read()).body as Json).description).toBe('changed');
  });

  it.each([
    ['the membership is removed', `DELETE FROM members WHERE user_id = $1`],
    ['the membership is lowered to Guest', `UPDATE members SET access_level = 10 WHERE user_id = $1`],
  ])('answers as the new access says once %s', async (_case, sql) => {
    const { member, read } = await cached();
    await server.dataSource.query(sql, [member.user.id]);
    const after = await read();
    if (sql.startsWith('DELETE')) expect(after.status).toBe(404);
    else
      expect(((after.body as Json).permissions as Json).project_access).toMatchObject({ access_level: 10 });
  });

  it('follows a renamed group: the old path is gone, the new one answers', async () => {
    const { group, project, read } = await cached();
    const oldPath = `${group.fullPath}/${project.path}`;
    expect((await read(oldPath)).status).toBe(200);
    expect((await read(oldPath)).status).toBe(200);
    await server.dataSource.query(`UPDATE namespaces SET path = $2, full_path = $2 WHERE id = $1`, [
      group.id,
      `${group.path}-renamed`,
    ]);
    expect((await read(oldPath)).status).toBe(404);
    const renamed = await read(`${group.path}-renamed/${project.path}`);
    expect(renamed.status).toBe(200);
    expect((renamed.body as Json).path_with_namespace).toBe(`${group.path}-renamed/${project.path}`);
  });

  it('shows a new share with a group and its end', async () => {
    const { project, read } = await cached();
    const other = await server.factories.group();
    await server.factories.share(project, other, DEVELOPER);
    const shared = (await read()).body as Json;
    expect((shared.shared_with_groups as Json[]).map((link) => link.group_id)).toEqual([other.id]);
    await server.dataSource.query(`DELETE FROM project_group_links WHERE project_id = $1`, [project.id]);
    expect(((await read()).body as Json).shared_with_groups).toEqual([]);
  });

  it('answers 404 once the project is marked for deletion or deleted', async () => {
    const { project, read } = await cached();
    await server.dataSource.query(`UPDATE projects SET marked_for_deletion_at = now() WHERE id = $1`, [
      project.id,
    ]);
    expect((await read()).status).toBe(404);
    await server.dataSource.query(`UPDATE projects SET marked_for_deletion_at = NULL WHERE id = $1`, [
      project.id,
    ]);
    expect((await read()).status).toBe(200);
    await server.dataSource.query(`DELETE FROM projects WHERE id = $1`, [project.id]);
    expect((await read()).status).toBe(404);
  });

  it('shows an update through the API at once', async () => {
    const { project, read } = await cached();
    const root = await server.factories.user({ admin: true });
    const updated = await server.request('PUT', `/projects/${project.id}`, {
      token: root.token,
      json: { description: 'through the API' },
    });
    expect(updated.status).toBe(200);
    expect(((await read()).body as Json).description).toBe('through the API');
  });
});

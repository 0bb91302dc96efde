/**
 * A merge request list's count (X-Total) is kept in memory (src/merge_requests/list-counts.ts) until the
 * database announces a change to the merge requests it counted: whatever changes them, by the API or by
 * SQL, the very next list counts anew.
 */
import { describe, expect, it } from 'vitest';
import type { Project } from '../../src/projects/project.entity.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const DEVELOPER = 30;

/** Merge requests written straight into the table, as the benchmark seeds them. */
async function insertMergeRequests(project: Project, count: number, authorId: number, state = 'opened') {
  await server.dataSource.query(
    `INSERT INTO merge_requests (iid, target_project_id, source_project_id, source_branch, target_branch,
       title, state, author_id)
     SELECT coalesce((SELECT max(iid) FROM merge_requests WHERE target_project_id = $1), 0) + g, $1, $1,
       'topic-' || g || '-' || md5(random()::text), 'main', 'Merge request ' || g, $3, $4
     FROM generate_series(1, $2) g`,
    [project.id, count, state, authorId],
  );
}

/** A private project of a group with three open merge requests, and a Developer of it. */
async function world(groupVisibility: 'private' | 'internal' = 'private') {
  const group = await server.factories.group({ visibility: groupVisibility });
  const project = await server.factories.project({ namespace: group, visibility: 'private' });
  const member = await server.factories.memberOf(project, DEVELOPER);
  await insertMergeRequests(project, 3, member.user.id);
  const total = async (path: string) => {
    const res = await server.request('GET', path, { token: member.token });
    expect(res.status, res.text).toBe(200);
    return Number(res.headers.get('x-total'));
  };
  return { group, project, member, total };
}

const lists = (w: Awaited<ReturnType<typeof world>>) => ({
  project: `/projects/${w.project.id}/merge_requests?state=opened`,
  group: `/groups/${w.group.id}/merge_requests?state=opened`,
  instance: `/merge_requests?scope=all&state=opened`,
});

describe('a kept merge request count', () => {
  it.each(['project', 'group', 'instance'] as const)(
    'is kept for the %s list: a change the triggers do not announce goes uncounted until one is',
    async (list) => {
      const w = await world();
      const path = lists(w)[list];
      const before = await total(w, path);
      expect(await total(w, path)).toBe(before);
      // Only possible behind the application's back: triggers off for one transaction.
      await server.dataSource.transaction(async (tx) => {
        await tx.query(`SET LOCAL session_replication_role = replica`);
        await tx.query(`UPDATE merge_requests SET state = 'closed' WHERE target_project_id = $1`, [
          w.project.id,
        ]);
      });
      expect(await total(w, path)).toBe(before);
      await server.dataSource.query(`UPDATE merge_requests SET title = title WHERE target_project_id = $1`, [
        w.project.id,
      ]);
      expect(await total(w, path)).toBe(before - 3);
    },
  );

  it.each([
    ['a merge request is added', (p: Project, w: World) => insertMergeRequests(p, 1, w.member.user.id), 1],
    ['a merge request is closed', (p: Project) => closeOne(p), -1],
    ['a merge request is deleted', (p: Project) => deleteOne(p), -1],
  ])('counts anew in every list once %s', async (_case, change, delta) => {
    const w = await world();
    const paths = Object.values(lists(w));
    const before = await Promise.all(paths.map((path) => total(w, path)));
    await change(w.project, w);
    for (const [index, path] of paths.entries()) expect(await total(w, path)).toBe(before[index] + delta);
  });

  it('counts anew when the caller loses access', async () => {
    // A group they still see after it.
    const w = await world('internal');
    const { group, instance } = lists(w);
    expect(await total(w, group)).toBe(3);
    const before = await total(w, instance);
    await server.dataSource.query(`DELETE FROM members WHERE user_id = $1`, [w.member.user.id]);
    expect(await total(w, group)).toBe(0);
    expect(await total(w, instance)).toBe(before - 3);
  });

  it('counts anew when a label is put on, taken off or renamed', async () => {
    const w = await world();
    const [label] = (await server.dataSource.query(
      `INSERT INTO labels (title, color, project_id) VALUES ('Bug', '#d9534f', $1) RETURNING id`,
      [w.project.id],
    )) as Array<{ id: number }>;
    const path = `/projects/${w.project.id}/merge_requests?labels=bug`;
    expect(await total(w, path)).toBe(0);
    await server.dataSource.query(
      `INSERT INTO merge_request_labels (merge_request_id, label_id)
       SELECT id, $2 FROM merge_requests WHERE target_project_id = $1`,
      [w.project.id, label.id],
    );
    expect(await total(w, path)).toBe(3);
    await server.dataSource.query(`UPDATE labels SET title = 'Defect' WHERE id = $1`, [label.id]);
    expect(await total(w, path)).toBe(0);
    expect(await total(w, `/projects/${w.project.id}/merge_requests?labels=defect`)).toBe(3);
    await server.dataSource.query(`DELETE FROM labels WHERE id = $1`, [label.id]);
    expect(await total(w, `/projects/${w.project.id}/merge_requests?labels=defect`)).toBe(0);
  });

  it('counts a list filtered through other tables every time', async () => {
    const w = await world();
    // A page is kept whole until a change to it is announced (list-pages.ts): each request here is a
    // page of its own (`per_page` is not part of the count), so only the count could be kept.
    let pages = 0;
    const path = () =>
      `/projects/${w.project.id}/merge_requests?assignee_id=${w.member.user.id}&per_page=${20 + pages++}`;
    expect(await total(w, path())).toBe(0);
    expect(await total(w, path())).toBe(0);
    await server.dataSource.transaction(async (tx) => {
      await tx.query(`SET LOCAL session_replication_role = replica`);
      await tx.query(
        `INSERT INTO merge_request_assignees (merge_request_id, user_id)
         SELECT id, $2 FROM merge_requests WHERE target_project_id = $1`,
        [w.project.id, w.member.user.id],
      );
    });
    expect(await total(w, path())).toBe(3);
  });

  it('counts anew after a merge request is opened through the API', async () => {
    const owner = await server.factories.user();
    const project = await server.factories.projectWithReadme({ owner });
    const path = `/projects/${project.id}/merge_requests`;
    const count = async () =>
      Number((await server.request('GET', path, { token: owner.token })).headers.get('x-total'));
    expect(await count()).toBe(0);
    const branch = await server.request('POST', `/projects/${project.id}/repository/branches`, {
      token: owner.token,
      json: { branch: 'feature', ref: 'main' },
    });
    expect(branch.status).toBe(201);
    const created = await server.request('POST', path, {
      token: owner.token,
      json: { source_branch: 'feature', target_branch: 'main', title: 'Counted' },
    });
    expect(created.status, created.text).toBe(201);
    expect(await count()).toBe(1);
  });
});

type World = Awaited<ReturnType<typeof world>>;

const total = (w: World, path: string) => w.total(path);

const closeOne = (project: Project) =>
  server.dataSource.query(
    `UPDATE merge_requests SET state = 'closed'
     WHERE id = (SELECT min(id) FROM merge_requests WHERE target_project_id = $1)`,
    [project.id],
  );

const deleteOne = (project: Project) =>
  server.dataSource.query(
    `DELETE FROM merge_requests WHERE id = (SELECT min(id) FROM merge_requests WHERE target_project_id = $1)`,
    [project.id],
  );

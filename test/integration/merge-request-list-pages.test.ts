/**
 * A page of a project's merge request list is kept whole in memory (src/merge_requests/list-pages.ts)
 * until the database announces a change to anything it shows: whatever changes it, by the API or by
 * SQL, the very next request reads it anew.
 */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Namespace } from '../../src/namespaces/namespace.entity.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

const sql = (text: string, values: unknown[] = []) =>
  server.dataSource.query(text, values) as Promise<Array<Record<string, number>>>;

/** An open merge request that could be merged, written into the table as the benchmark seeds them. */
async function insertMergeRequest(project: Project, authorId: number, source: Project = project) {
  const [row] = await sql(
    `INSERT INTO merge_requests (iid, target_project_id, source_project_id, source_branch, target_branch,
       title, state, author_id, merge_status, allow_collaboration)
     VALUES (coalesce((SELECT max(iid) FROM merge_requests WHERE target_project_id = $1), 0) + 1, $1, $2,
       'topic-' || md5(random()::text), 'main', 'A change', 'opened', $3, 'can_be_merged', true)
     RETURNING id, iid`,
    [project.id, source.id, authorId],
  );
  return row;
}

interface World {
  group: Namespace;
  project: Project;
  member: TestUser;
  approver: TestUser;
  mr: Record<string, number>;
  first: (query?: string, caller?: TestUser) => Promise<Json>;
}

/** A private project of a group, a Developer of it, another Developer who approves, and one merge request. */
async function world(visibility: 'private' | 'public' = 'private'): Promise<World> {
  const group = await server.factories.group({ visibility });
  const project = await server.factories.project({ namespace: group, visibility });
  const member = await server.factories.memberOf(project, AccessLevel.Developer);
  const approver = await server.factories.memberOf(project, AccessLevel.Developer);
  const mr = await insertMergeRequest(project, member.user.id);
  const first = async (query = '', caller = member) => {
    const res = await server.request('GET', `/projects/${project.id}/merge_requests${query}`, {
      token: caller.token,
    });
    expect(res.status, res.text).toBe(200);
    return ((res.body as Json[])[0] ?? {}) as Json;
  };
  return { group, project, member, approver, mr, first };
}

/** A rule of the merge request itself, as the copy of a project rule made when it was opened. */
async function mergeRequestRule(w: World, attrs: { users?: number[]; groups?: number[]; required?: number }) {
  const [rule] = await sql(
    `INSERT INTO approval_rules (project_id, merge_request_id, name, rule_type, approvals_required, user_ids, group_ids)
     VALUES ($1, $2, 'Reviewers', 'regular', $3, $4, $5) RETURNING id`,
    [w.project.id, w.mr.id, attrs.required ?? 1, attrs.users ?? [], attrs.groups ?? []],
  );
  return rule;
}

/** Reads the page twice (the second time from memory), changes something, and reads it again. */
async function acrossChange(w: World, query: string, change: () => Promise<unknown>) {
  const before = await w.first(query);
  expect(await w.first(query)).toEqual(before);
  await change();
  return { before, after: await w.first(query) };
}

describe('a kept merge request list page', () => {
  it('is kept: a change the triggers do not announce is not shown until one is', async () => {
    const w = await world();
    expect((await w.first()).title).toBe('A change');
    // Only possible behind the application's back: triggers off for one transaction.
    await server.dataSource.transaction(async (tx) => {
      await tx.query(`SET LOCAL session_replication_role = replica`);
      await tx.query(`UPDATE merge_requests SET title = 'Renamed' WHERE id = $1`, [w.mr.id]);
    });
    expect((await w.first()).title).toBe('A change');
    await sql(`UPDATE merge_requests SET draft = draft WHERE id = $1`, [w.mr.id]);
    expect((await w.first()).title).toBe('Renamed');
  });

  it('shows a new approval at once', async () => {
    const w = await world();
    await mergeRequestRule(w, { users: [w.approver.user.id] });
    const { before, after } = await acrossChange(w, '', async () => {
      const res = await server.request(
        'POST',
        `/projects/${w.project.id}/merge_requests/${w.mr.iid}/approve`,
        { token: w.approver.token },
      );
      expect(res.status, res.text).toBe(201);
    });
    expect(before.detailed_merge_status).toBe('not_approved');
    expect(after.detailed_merge_status).toBe('mergeable');
  });

  it('shows a change of an approval rule at once', async () => {
    const w = await world();
    const rule = await mergeRequestRule(w, { users: [w.approver.user.id] });
    const { before, after } = await acrossChange(w, '', () =>
      sql(`UPDATE approval_rules SET approvals_required = 0 WHERE id = $1`, [rule.id]),
    );
    expect(before.detailed_merge_status).toBe('not_approved');
    expect(after.detailed_merge_status).toBe('mergeable');
  });

  it('shows a change of the members of an approving group at once', async () => {
    const w = await world();
    const approvers = await server.factories.group();
    await mergeRequestRule(w, { groups: [approvers.id] });
    await sql(`INSERT INTO merge_request_approvals (merge_request_id, user_id) VALUES ($1, $2)`, [
      w.mr.id,
      w.approver.user.id,
    ]);
    const { before, after } = await acrossChange(w, '', () =>
      server.factories.member(approvers, w.approver.user, AccessLevel.Developer),
    );
    expect(before.detailed_merge_status).toBe('not_approved');
    expect(after.detailed_merge_status).toBe('mergeable');
  });

  it('shows a change of the project approval settings at once, by SQL or the API', async () => {
    const w = await world();
    const { before, after } = await acrossChange(w, '', () =>
      sql(`INSERT INTO project_approval_settings (project_id, approvals_before_merge) VALUES ($1, 1)`, [
        w.project.id,
      ]),
    );
    expect(before.detailed_merge_status).toBe('mergeable');
    expect(after.detailed_merge_status).toBe('not_approved');
    const again = await acrossChange(w, '', async () => {
      const maintainer = await server.factories.memberOf(w.project, AccessLevel.Maintainer);
      const res = await server.request('POST', `/projects/${w.project.id}/approvals`, {
        token: maintainer.token,
        json: { approvals_before_merge: 0 },
      });
      expect(res.status, res.text).toBe(201);
    });
    expect(again.after.detailed_merge_status).toBe('mergeable');
  });

  it.each<[string, string, (w: World) => Promise<unknown>, (mr: Json) => unknown, unknown, unknown]>([
    [
      'an assignee',
      '',
      (w) => sql(`INSERT INTO merge_request_assignees VALUES ($1, $2)`, [w.mr.id, w.approver.user.id]),
      (mr) => (mr.assignees as Json[]).length,
      0,
      1,
    ],
    [
      'a reviewer',
      '',
      (w) => sql(`INSERT INTO merge_request_reviewers VALUES ($1, $2)`, [w.mr.id, w.approver.user.id]),
      (mr) => (mr.reviewers as Json[]).length,
      0,
      1,
    ],
    [
      'a note',
      '',
      (w) =>
        sql(
          `INSERT INTO notes (project_id, noteable_type, noteable_id, author_id, body, discussion_id)
           VALUES ($1, 'MergeRequest', $2, $3, 'Looks good', md5(random()::text) || '00000000')`,
          [w.project.id, w.mr.id, w.approver.user.id],
        ),
      (mr) => mr.user_notes_count,
      0,
      1,
    ],
    [
      'a reaction',
      '',
      (w) =>
        sql(`INSERT INTO award_emoji (name, user_id, merge_request_id) VALUES ('thumbsup', $1, $2)`, [
          w.approver.user.id,
          w.mr.id,
        ]),
      (mr) => mr.upvotes,
      0,
      1,
    ],
    [
      "a label's colour",
      '?with_labels_details=true',
      (w) => sql(`UPDATE labels SET color = '#000000' WHERE project_id = $1`, [w.project.id]),
      (mr) => (mr.labels as Json[])[0].color,
      '#d9534f',
      '#000000',
    ],
    [
      "a group label's colour",
      '?with_labels_details=true',
      (w) => sql(`UPDATE labels SET color = '#000000' WHERE group_id = $1`, [w.group.id]),
      (mr) => (mr.labels as Json[]).find((label) => label.name === 'Group')?.color,
      '#6699cc',
      '#000000',
    ],
    [
      "a milestone's title",
      '',
      (w) => sql(`UPDATE milestones SET title = 'v2' WHERE project_id = $1`, [w.project.id]),
      (mr) => (mr.milestone as Json).title,
      'v1',
      'v2',
    ],
    [
      "the author's name",
      '',
      (w) => sql(`UPDATE users SET name = 'Renamed' WHERE id = $1`, [w.member.user.id]),
      (mr) => (mr.author as Json).name === 'Renamed',
      false,
      true,
    ],
    [
      "the group's path",
      '',
      (w) => sql(`UPDATE namespaces SET full_path = full_path || '-moved' WHERE id = $1`, [w.group.id]),
      (mr) => String((mr.references as Json).full).includes('-moved/'),
      false,
      true,
    ],
  ])('shows %s at once', async (_what, query, change, read, before, after) => {
    const w = await world();
    await sql(
      `WITH l AS (INSERT INTO labels (title, color, project_id) VALUES ('Bug', '#d9534f', $1) RETURNING id),
         g AS (INSERT INTO labels (title, color, group_id) VALUES ('Group', '#6699cc', $3) RETURNING id)
       INSERT INTO merge_request_labels (merge_request_id, label_id)
       SELECT $2::int, id FROM l UNION ALL SELECT $2::int, id FROM g`,
      [w.project.id, w.mr.id, w.group.id],
    );
    await sql(
      `WITH m AS (INSERT INTO milestones (iid, project_id, title) VALUES (1, $1, 'v1') RETURNING id)
       UPDATE merge_requests SET milestone_id = (SELECT id FROM m) WHERE id = $2`,
      [w.project.id, w.mr.id],
    );
    const pages = await acrossChange(w, query, () => change(w));
    expect(read(pages.before)).toEqual(before);
    expect(read(pages.after)).toEqual(after);
  });

  it("shows a protected branch of a fork's source project at once", async () => {
    const w = await world('public');
    const fork = await server.factories.project({ visibility: 'public' });
    await sql(`DELETE FROM merge_requests WHERE id = $1`, [w.mr.id]);
    const mr = await insertMergeRequest(w.project, w.member.user.id, fork);
    const { before, after } = await acrossChange(w, '', () =>
      sql(
        `INSERT INTO protected_branches (project_id, name)
         SELECT source_project_id, source_branch FROM merge_requests WHERE id = $1`,
        [mr.id],
      ),
    );
    expect(before.allow_collaboration).toBe(true);
    expect(after.allow_collaboration).toBe(false);
  });

  it("keeps a page per caller: another's reactions are not theirs", async () => {
    const w = await world();
    await sql(`INSERT INTO award_emoji (name, user_id, merge_request_id) VALUES ('thumbsup', $1, $2)`, [
      w.member.user.id,
      w.mr.id,
    ]);
    const query = '?my_reaction_emoji=thumbsup';
    expect((await w.first(query)).id).toBe(w.mr.id);
    expect(await w.first(query, w.approver)).toEqual({});
  });

  it('still refuses a caller who has lost access', async () => {
    const w = await world();
    await w.first();
    await sql(`DELETE FROM members WHERE user_id = $1`, [w.member.user.id]);
    const res = await server.request('GET', `/projects/${w.project.id}/merge_requests`, {
      token: w.member.token,
    });
    expect(res.status).toBe(404);
  });

  it('reads the Started milestones anew every time', async () => {
    const w = await world();
    const [milestone] = await sql(
      `INSERT INTO milestones (iid, project_id, title, start_date) VALUES (1, $1, 'Now', CURRENT_DATE + 1)
       RETURNING id`,
      [w.project.id],
    );
    await sql(`UPDATE merge_requests SET milestone_id = $1 WHERE id = $2`, [milestone.id, w.mr.id]);
    expect(await w.first('?milestone=Started')).toEqual({});
    // Another milestone's dates decide too: a change behind the triggers' back is seen at once.
    await server.dataSource.transaction(async (tx) => {
      await tx.query(`SET LOCAL session_replication_role = replica`);
      await tx.query(`UPDATE milestones SET start_date = CURRENT_DATE WHERE id = $1`, [milestone.id]);
    });
    expect((await w.first('?milestone=Started')).id).toBe(w.mr.id);
  });
});

/**
 * Issue 12's review flow across families, through the real clients: a custom role whose
 * `admin_merge_request` lets a Guest approve, a two-approval rule, a merge, approvals reset by a push,
 * draft notes published at once, and a project token's bot resetting approvals.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { remoteUrl, useGitWorkDir } from '../helpers/git-cli.js';
import { useTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const server = useTestServer({ env: { FORGE_TIER: 'ultimate', FORGE_JOB_POLL: '0.5' } });
const { work, gitCli } = useGitWorkDir('forge-review-flow-');

/**
 * An administrator's project in a top-level group, with a Developer, a Guest, a user to become a Guest with
 * the custom role, and two open merge requests by the administrator (`first`, `second`).
 */
async function world() {
  const admin = await server.factories.user({ admin: true });
  const group = await server.factories.group();
  const project = await server.factories.projectWithReadme({ owner: admin, namespace: group });
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const guest = await server.factories.memberOf(project, AccessLevel.Guest);
  const reviewer = await server.factories.user();
  const api = new Gitlab({ host: server.url, token: admin.token });
  for (const branch of ['first', 'second']) {
    await api.Commits.create(
      project.id,
      branch,
      `Add ${branch}`,
      [{ action: 'create', filePath: `${branch}.txt`, content: `${branch}\none\ntwo\n` }],
      { startBranch: 'main' },
    );
    await api.MergeRequests.create(project.id, branch, 'main', `Add ${branch}`);
  }
  const token = await api.ProjectAccessTokens.create(
    project.id,
    'bot',
    ['api'],
    new Date(Date.now() + 864e5).toISOString().slice(0, 10),
    { accessLevel: 30 },
  );
  return { admin, group, project, developer, guest, reviewer, api, botToken: token.token as string };
}

describe('@gitbeaker/rest', () => {
  it('approves with a custom-role Guest, merges, resets on git push, publishes drafts, and lets a bot reset', async () => {
    const w = await world();
    const as = (token: string) => new Gitlab({ host: server.url, token });
    const status = async (method: string, route: string, token: string) =>
      (await server.request(method, `/projects/${w.project.id}${route}`, { token })).status;

    // a. An instance role: Guest, plus `admin_merge_request`.
    const created = await server.request('POST', '/member_roles', {
      token: w.admin.token,
      json: { name: 'Guest approver', base_access_level: AccessLevel.Guest, admin_merge_request: true },
    });
    expect(created.status).toBe(201);
    const role = created.body as { id: number; admin_merge_request: boolean };
    expect(role.admin_merge_request).toBe(true);
    const member = await w.api.ProjectMembers.add(w.project.id, AccessLevel.Guest, {
      userId: w.reviewer.user.id,
      memberRoleId: role.id,
    } as never);
    expect((member as unknown as { member_role: { id: number } }).member_role.id).toBe(role.id);

    // b. Approvals configured, and a project rule of two approvals from the Developer and the role's Guest.
    await w.api.MergeRequestApprovals.editConfiguration(w.project.id, {
      resetApprovalsOnPush: true,
      mergeRequestsAuthorApproval: false,
    } as never);
    const rule = await w.api.MergeRequestApprovals.createApprovalRule(w.project.id, 'Two reviewers', 2, {
      userIds: [w.developer.user.id, w.reviewer.user.id],
    });
    expect(rule.eligible_approvers!.map((u) => u.id).sort((a, b) => a - b)).toEqual(
      [w.developer.user.id, w.reviewer.user.id].sort((a, b) => a - b),
    );

    // c. 2 → 1 → 0, merge refused with 405 until then.
    const left = async (iid: number) =>
      (await w.api.MergeRequestApprovals.showConfiguration(w.project.id, { mergerequestIId: iid }))
        .approvals_left;
    // `checking` is transient (the status is worked out again after a push), so read past it, as clients poll.
    const mergeStatus = (iid: number) =>
      waitFor(
        async () => (await w.api.MergeRequests.show(w.project.id, iid)).detailed_merge_status,
        (value) => value !== 'checking' && value !== 'unchecked',
      );
    expect(await left(1)).toBe(2);
    expect(await mergeStatus(1)).toBe('not_approved');
    await as(w.developer.token).MergeRequestApprovals.approve(w.project.id, 1);
    expect(await left(1)).toBe(1);
    expect(await mergeStatus(1)).toBe('not_approved');
    expect(await status('PUT', '/merge_requests/1/merge', w.admin.token)).toBe(405);
    const approved = await as(w.reviewer.token).MergeRequestApprovals.approve(w.project.id, 1);
    expect(approved.approvals_left).toBe(0);
    expect(approved.approved_by!.map((a) => a.user.id)).toEqual([w.developer.user.id, w.reviewer.user.id]);
    expect(await mergeStatus(1)).toBe('mergeable');
    const state = await w.api.MergeRequestApprovals.showApprovalState(w.project.id, 1);
    expect(state.rules.map((r) => [r.name, r.approved])).toEqual([['Two reviewers', true]]);
    expect((await w.api.MergeRequests.merge(w.project.id, 1)).state).toBe('merged');

    // d. A plain Guest may not approve: 403, as GitLab's `approve_merge_request` check answers.
    expect(await status('POST', '/merge_requests/2/approve', w.guest.token)).toBe(403);

    // e. Both approve !2; a `git push` to its source branch resets them, with the system note.
    await as(w.developer.token).MergeRequestApprovals.approve(w.project.id, 2);
    await as(w.reviewer.token).MergeRequestApprovals.approve(w.project.id, 2);
    expect(await left(2)).toBe(0);
    const fullPath = (await w.api.Projects.show(w.project.id)).path_with_namespace;
    const dir = path.join(work, `clone-${w.project.id}`);
    expect((await gitCli(['clone', '--quiet', remoteUrl(server.url, fullPath, w.admin.token), dir])).ok).toBe(
      true,
    );
    await gitCli(['checkout', '-q', 'second'], dir);
    fs.writeFileSync(path.join(dir, 'more.txt'), 'more\n');
    await gitCli(['add', '.'], dir);
    await gitCli(['commit', '-q', '-m', 'More'], dir);
    expect((await gitCli(['push', '--quiet', 'origin', 'second'], dir)).ok).toBe(true);
    const reset = await waitFor(
      () => w.api.MergeRequestApprovals.showConfiguration(w.project.id, { mergerequestIId: 2 }),
      (s) => (s.approved_by as unknown[]).length === 0,
    );
    expect([reset.approved_by, reset.approvals_left]).toEqual([[], 2]);
    expect(await mergeStatus(2)).toBe('not_approved');
    const notes = await w.api.MergeRequestNotes.all(w.project.id, 2);
    expect(
      notes.filter((n) => n.system && n.body.startsWith('reset approvals from')).map((n) => n.body),
    ).toEqual([
      `reset approvals from @${w.developer.user.username} and @${w.reviewer.user.username} by pushing to the branch`,
    ]);

    // f. Three drafts by the custom-role Guest (on a diff line, into the Developer's thread, a comment),
    // published at once.
    const thread = await as(w.developer.token).MergeRequestDiscussions.create(w.project.id, 2, 'Why more?');
    const reviewer = as(w.reviewer.token);
    const mr = await reviewer.MergeRequests.show(w.project.id, 2);
    const refs = mr.diff_refs as { base_sha: string; start_sha: string; head_sha: string };
    const onLine = await reviewer.MergeRequestDraftNotes.create(w.project.id, 2, 'Say why.', {
      position: {
        baseSha: refs.base_sha,
        startSha: refs.start_sha,
        headSha: refs.head_sha,
        positionType: 'text',
        oldPath: 'more.txt',
        newPath: 'more.txt',
        newLine: 1,
      } as never,
    });
    expect(onLine.position).toMatchObject({ new_path: 'more.txt', new_line: 1 });
    // GitLab keeps one draft per thread and author: the third is a comment of its own.
    await reviewer.MergeRequestDraftNotes.create(w.project.id, 2, 'It is needed.', {
      inReplyToDiscussionId: thread.id as never,
    });
    await reviewer.MergeRequestDraftNotes.create(w.project.id, 2, 'Looks good otherwise.');
    expect(await reviewer.MergeRequestDraftNotes.all(w.project.id, 2)).toHaveLength(3);
    await reviewer.MergeRequestDraftNotes.publishBulk(w.project.id, 2);
    expect(await reviewer.MergeRequestDraftNotes.all(w.project.id, 2)).toEqual([]);
    const discussions = await w.api.MergeRequestDiscussions.all(w.project.id, 2);
    expect(discussions.find((d) => d.id === thread.id)!.notes!.map((n) => [n.body, n.author.id])).toEqual([
      ['Why more?', w.developer.user.id],
      ['It is needed.', w.reviewer.user.id],
    ]);
    const single = discussions.filter((d) => d.individual_note && !d.notes![0].system);
    expect(single.map((d) => d.notes!.map((n) => [n.body, n.author.id]))).toEqual([
      [['Looks good otherwise.', w.reviewer.user.id]],
    ]);
    const diffThreads = discussions.filter((d) => d.notes![0].type === 'DiffNote');
    expect(
      diffThreads.map((d) => d.notes!.map((n) => [n.body, (n.position as { new_line: number }).new_line])),
    ).toEqual([[['Say why.', 1]]]);

    // g. The project token's bot resets approvals; a human gets 401.
    await as(w.developer.token).MergeRequestApprovals.approve(w.project.id, 2);
    expect(await left(2)).toBe(1);
    expect(await status('PUT', '/merge_requests/2/reset_approvals', w.admin.token)).toBe(401);
    expect(await status('PUT', '/merge_requests/2/reset_approvals', w.botToken)).toBe(202);
    expect(await left(2)).toBe(2);
  }, 120_000);
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'drives the review flow with a group role (needs Debian python3-gitlab)',
    async () => {
      const w = await world();
      const stdout = await runPythonClient('python_gitlab_review_flow.py', [
        server.url,
        JSON.stringify({
          project_id: w.project.id,
          group_id: w.group.id,
          admin: w.admin.token,
          developer: w.developer.token,
          developer_id: w.developer.user.id,
          guest: w.guest.token,
          reviewer: w.reviewer.token,
          reviewer_id: w.reviewer.user.id,
          bot: w.botToken,
        }),
      ]);
      const ids = [w.developer.user.id, w.reviewer.user.id];
      expect(JSON.parse(stdout.trim())).toEqual({
        role: [w.group.id, 10, true],
        member_role: true,
        eligible: [...ids].sort((a, b) => a - b),
        left: [2, 1, 0],
        status: ['not_approved', 'not_approved', 'mergeable'],
        early_merge: 405,
        approved_by: ids,
        merged: 'merged',
        guest: 403,
        reset: [[], 2],
        reset_note: true,
        drafts: 3,
        published: [0, ['Why more?', 'It is needed.'], [[['Say why.', 1]]], ['Looks good otherwise.']],
        human_reset: 401,
        after_bot: [1, 2],
      });
    },
    120_000,
  );
});

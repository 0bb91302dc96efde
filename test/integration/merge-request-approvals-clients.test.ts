/** Merge request approvals through the real clients: @gitbeaker/rest and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });

/** A project, its members, and two open merge requests by the owner (so the Developers may approve). */
async function world() {
  const { owner, project } = await server.factories.ownedProjectWithReadme();
  const dev1 = await server.factories.memberOf(project, AccessLevel.Developer);
  const dev2 = await server.factories.memberOf(project, AccessLevel.Developer);
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  const api = new Gitlab({ host: server.url, token: owner.token });
  for (const branch of ['first', 'second']) {
    await api.Commits.create(
      project.id,
      branch,
      `Add ${branch}`,
      [{ action: 'create', filePath: `${branch}.txt`, content: `${branch}\n` }],
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
  return { owner, project, dev1, dev2, maintainer, api, botToken: token.token as string };
}

describe('@gitbeaker/rest', () => {
  it('configures approvals, approves to the rule, merges, and sees approvals reset by a push', async () => {
    const w = await world();
    const as = (token: string) => new Gitlab({ host: server.url, token });
    const config = await w.api.MergeRequestApprovals.editConfiguration(w.project.id, {
      resetApprovalsOnPush: true,
    });
    expect(config.reset_approvals_on_push).toBe(true);
    const rule = await w.api.MergeRequestApprovals.createApprovalRule(w.project.id, 'Two developers', 2, {
      userIds: [w.dev1.user.id, w.dev2.user.id],
    });
    expect(rule.approvals_required).toBe(2);
    expect(await w.api.MergeRequestApprovals.allApprovalRules(w.project.id)).toHaveLength(1);

    await as(w.dev1.token).MergeRequestApprovals.approve(w.project.id, 1);
    const half = await w.api.MergeRequestApprovals.showConfiguration(w.project.id, { mergerequestIId: 1 });
    expect(half.approvals_left).toBe(1);
    const approved = await as(w.dev2.token).MergeRequestApprovals.approve(w.project.id, 1);
    expect(approved.approvals_left).toBe(0);
    const state = await w.api.MergeRequestApprovals.showApprovalState(w.project.id, 1);
    expect(state.rules.map((r) => [r.name, r.approved])).toEqual([['Two developers', true]]);
    const merged = await as(w.maintainer.token).MergeRequests.merge(w.project.id, 1);
    expect(merged.state).toBe('merged');

    await as(w.dev1.token).MergeRequestApprovals.approve(w.project.id, 2);
    await as(w.dev1.token).MergeRequestApprovals.unapprove(w.project.id, 2);
    await as(w.dev1.token).MergeRequestApprovals.approve(w.project.id, 2);
    await as(w.dev1.token).Commits.create(w.project.id, 'second', 'More', [
      { action: 'create', filePath: 'more.txt', content: 'more\n' },
    ]);
    const reset = await waitFor(
      () => w.api.MergeRequestApprovals.showConfiguration(w.project.id, { mergerequestIId: 2 }),
      (s) => (s.approved_by as unknown[]).length === 0,
    );
    expect(reset.approved_by).toEqual([]);
    const notes = await w.api.MergeRequestNotes.all(w.project.id, 2);
    expect(notes.some((note) => note.system && note.body.startsWith('reset approvals from @'))).toBe(true);
  }, 90_000);

  it('lets a project token bot reset approvals and answers a human 401', async () => {
    const w = await world();
    const as = (token: string) => new Gitlab({ host: server.url, token });
    await as(w.dev1.token).MergeRequestApprovals.approve(w.project.id, 1);
    const path = `/projects/${w.project.id}/merge_requests/1/reset_approvals`;
    expect((await server.request('PUT', path, { token: w.maintainer.token })).status).toBe(401);
    expect((await server.request('PUT', path, { token: w.botToken })).status).toBe(202);
    const after = await w.api.MergeRequestApprovals.showConfiguration(w.project.id, { mergerequestIId: 1 });
    expect(after.approved_by).toEqual([]);
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'drives approvals end to end (needs Debian python3-gitlab)',
    async () => {
      const w = await world();
      const stdout = await runPythonClient('python_gitlab_merge_request_approvals.py', [
        server.url,
        JSON.stringify({
          project_id: w.project.id,
          first: 1,
          second: 2,
          second_branch: 'second',
          owner: w.owner.token,
          dev1: w.dev1.token,
          dev2: w.dev2.token,
          dev1_id: w.dev1.user.id,
          dev2_id: w.dev2.user.id,
          maintainer: w.maintainer.token,
          bot: w.botToken,
        }),
      ]);
      expect(JSON.parse(stdout.trim())).toEqual({
        configured: [true, false],
        rule: ['Two developers', 2, [w.dev1.user.id, w.dev2.user.id].sort((a, b) => a - b)],
        rules: [['Two developers', 2]],
        before: [2, 2],
        middle: 1,
        after: [0, true, 2],
        state: [['Two developers', true]],
        merged: 'merged',
        reset: 0,
        note: true,
        human_reset: 401,
        after_bot: 0,
      });
    },
    90_000,
  );
});

/** Merge request approvals: settings, rules, approving, resets on push, merge checks, filters, code owners. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import { hashPassword } from '../../src/users/passwords.js';
import type { TestUser } from '../helpers/factories.js';
import { remoteUrl, useGitWorkDir } from '../helpers/git-cli.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5', FORGE_FEATURES: 'mr_approved_filter' } });

type Json = Record<string, unknown>;

async function world() {
  const owner = await server.factories.user();
  const project = await server.factories.projectWithReadme({ owner });
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const developer2 = await server.factories.memberOf(project, AccessLevel.Developer);
  const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
  return { owner, project, maintainer, developer, developer2, reporter };
}

async function commitFile(user: TestUser, project: Project, branch: string, path: string, from?: string) {
  const res = await server.request('POST', `/projects/${project.id}/repository/commits`, {
    token: user.token,
    json: {
      branch,
      ...(from ? { start_branch: from } : {}),
      commit_message: `Change ${path}`,
      actions: [{ action: 'create', file_path: path, content: `${path}\n` }],
    },
  });
  expect(res.status, res.text).toBe(201);
  return (res.body as Json).id as string;
}

let branches = 0;
async function openMr(user: TestUser, project: Project, file = 'feature.txt'): Promise<Json> {
  const branch = `feature-${++branches}`;
  await commitFile(user, project, branch, file, 'main');
  const res = await server.request('POST', `/projects/${project.id}/merge_requests`, {
    token: user.token,
    json: { source_branch: branch, target_branch: 'main', title: 'Add a feature' },
  });
  expect(res.status, res.text).toBe(201);
  return { ...(res.body as Json), branch };
}

const api = (user: TestUser | undefined, method: string, path: string, json?: unknown) =>
  server.request(method, path, { token: user?.token, ...(json === undefined ? {} : { json }) });

const mrPath = (project: Project, mr: Json, suffix = '') =>
  `/projects/${project.id}/merge_requests/${mr.iid}${suffix}`;

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const approvalsOf = async (user: TestUser, project: Project, mr: Json) =>
  (await api(user, 'GET', mrPath(project, mr, '/approvals'))).body as Json;

async function rule(user: TestUser, project: Project, json: Json) {
  const res = await api(user, 'POST', `/projects/${project.id}/approval_rules`, json);
  expect(res.status, res.text).toBe(201);
  return res.body as Json;
}

describe('project approval configuration', () => {
  it('has GitLab defaults, deprecated fields included', async () => {
    const w = await world();
    const res = await api(w.developer, 'GET', `/projects/${w.project.id}/approvals`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      approvers: [],
      approver_groups: [],
      approvals_before_merge: 0,
      reset_approvals_on_push: true,
      selective_code_owner_removals: false,
      disable_overriding_approvers_per_merge_request: false,
      merge_requests_author_approval: false,
      merge_requests_disable_committers_approval: false,
      require_password_to_approve: false,
      require_reauthentication_to_approve: false,
    });
  });

  it.each([
    [{ approvals_before_merge: 2 }, 201, { approvals_before_merge: 2 }],
    [{ require_password_to_approve: true }, 201, { require_reauthentication_to_approve: true }],
    [{ require_reauthentication_to_approve: true }, 201, { require_password_to_approve: true }],
    [{ selective_code_owner_removals: true }, 400, null],
    [
      { reset_approvals_on_push: false, selective_code_owner_removals: true },
      201,
      { selective_code_owner_removals: true },
    ],
    [{}, 400, null],
  ])('POST %j answers %i', async (json, status, expected) => {
    const w = await world();
    const res = await api(w.maintainer, 'POST', `/projects/${w.project.id}/approvals`, json);
    expect(res.status, res.text).toBe(status);
    if (expected) expect(res.body).toMatchObject(expected);
    if (status === 400 && 'selective_code_owner_removals' in json)
      expect(res.body).toEqual({
        message: {
          base: [
            'selective_code_owner_removals can only be enabled when reset_approvals_on_push is disabled',
          ],
        },
      });
  });

  it('is changed by Maintainers only', async () => {
    const w = await world();
    const res = await api(w.developer, 'POST', `/projects/${w.project.id}/approvals`, {
      approvals_before_merge: 1,
    });
    expect(res.status).toBe(403);
  });
});

describe('project approval rules', () => {
  it('creates, lists, reads, updates and deletes rules', async () => {
    const w = await world();
    const created = await rule(w.maintainer, w.project, {
      name: 'Security',
      approvals_required: 2,
      user_ids: [w.developer.user.id],
      usernames: [w.developer2.user.username],
    });
    expect(created).toMatchObject({ name: 'Security', rule_type: 'regular', approvals_required: 2 });
    expect((created.users as Json[]).map((u) => u.id).sort()).toEqual(
      [w.developer.user.id, w.developer2.user.id].sort(),
    );
    const list = await api(w.reporter, 'GET', `/projects/${w.project.id}/approval_rules`);
    expect(list.status).toBe(200);
    expect(list.headers.get('x-total')).toBe('1');
    const updated = await api(w.maintainer, 'PUT', `/projects/${w.project.id}/approval_rules/${created.id}`, {
      approvals_required: 1,
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ approvals_required: 1, name: 'Security' });
    const one = await api(w.developer, 'GET', `/projects/${w.project.id}/approval_rules/${created.id}`);
    expect(one.body).toMatchObject({ approvals_required: 1 });
    expect(
      (await api(w.maintainer, 'DELETE', `/projects/${w.project.id}/approval_rules/${created.id}`)).status,
    ).toBe(204);
    expect(
      (await api(w.developer, 'GET', `/projects/${w.project.id}/approval_rules/${created.id}`)).status,
    ).toBe(404);
  });

  it.each([
    ['a name over 1024 characters', { name: 'x'.repeat(1025), approvals_required: 1 }],
    ['no name', { approvals_required: 1 }],
    ['no approvals_required', { name: 'A' }],
    ['an unknown rule_type', { name: 'A', approvals_required: 1, rule_type: 'code_owner' }],
    ['a report rule without report_type', { name: 'A', approvals_required: 1, rule_type: 'report_approver' }],
    [
      'a protected branch of no such id',
      { name: 'A', approvals_required: 1, protected_branch_ids: [999999] },
    ],
  ])('refuses %s with 400', async (_what, json) => {
    const w = await world();
    const res = await api(w.maintainer, 'POST', `/projects/${w.project.id}/approval_rules`, json);
    expect(res.status, res.text).toBe(400);
  });

  it('refuses a taken name and a second any-approver rule', async () => {
    const w = await world();
    await rule(w.maintainer, w.project, { name: 'A', approvals_required: 1 });
    const again = await api(w.maintainer, 'POST', `/projects/${w.project.id}/approval_rules`, {
      name: 'A',
      approvals_required: 1,
    });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ message: { name: ['has already been taken'] } });
    await rule(w.maintainer, w.project, { name: 'All', approvals_required: 0, rule_type: 'any_approver' });
    const second = await api(w.maintainer, 'POST', `/projects/${w.project.id}/approval_rules`, {
      name: 'All 2',
      approvals_required: 1,
      rule_type: 'any_approver',
    });
    expect(second.status).toBe(400);
  });

  it('copies to new merge requests only the rules whose protected branch scope takes their target', async () => {
    const w = await world();
    const protect = await api(w.owner, 'POST', `/projects/${w.project.id}/protected_branches`, {
      name: 'release/*',
    });
    expect(protect.status, protect.text).toBe(201);
    await rule(w.maintainer, w.project, { name: 'Everywhere', approvals_required: 1 });
    await rule(w.maintainer, w.project, {
      name: 'Releases',
      approvals_required: 1,
      protected_branch_ids: [(protect.body as Json).id],
    });
    await rule(w.maintainer, w.project, {
      name: 'Protected',
      approvals_required: 1,
      applies_to_all_protected_branches: true,
    });
    const mr = await openMr(w.developer, w.project);
    const rules = await api(w.developer, 'GET', mrPath(w.project, mr, '/approval_rules'));
    // main is protected (the project's default), release/* is not main.
    expect((rules.body as Json[]).map((r) => r.name).sort()).toEqual(['Everywhere', 'Protected']);
  });
});

describe('merge request rules', () => {
  it('are created, changed and deleted on the merge request, unless the project forbids overriding', async () => {
    const w = await world();
    const mr = await openMr(w.developer, w.project);
    const created = await api(w.developer, 'POST', mrPath(w.project, mr, '/approval_rules'), {
      name: 'Docs',
      approvals_required: 1,
      user_ids: [w.maintainer.user.id],
    });
    expect(created.status, created.text).toBe(201);
    const id = (created.body as Json).id;
    const state = await api(w.developer, 'GET', mrPath(w.project, mr, '/approval_state'));
    expect(state.body).toMatchObject({
      approval_rules_overwritten: true,
      rules: [{ name: 'Docs', approved: false }],
    });
    const put = await api(w.developer, 'PUT', mrPath(w.project, mr, `/approval_rules/${id}`), {
      approvals_required: 2,
    });
    expect(put.body).toMatchObject({ approvals_required: 2 });
    expect(
      (
        await api(w.reporter, 'POST', mrPath(w.project, mr, '/approval_rules'), {
          name: 'X',
          approvals_required: 1,
        })
      ).status,
    ).toBe(403);
    await api(w.maintainer, 'POST', `/projects/${w.project.id}/approvals`, {
      disable_overriding_approvers_per_merge_request: true,
    });
    expect((await api(w.developer, 'DELETE', mrPath(w.project, mr, `/approval_rules/${id}`))).status).toBe(
      403,
    );
    await api(w.maintainer, 'POST', `/projects/${w.project.id}/approvals`, {
      disable_overriding_approvers_per_merge_request: false,
    });
    expect((await api(w.developer, 'DELETE', mrPath(w.project, mr, `/approval_rules/${id}`))).status).toBe(
      204,
    );
  });
});

describe('the state table rows about approvals', () => {
  type Row = {
    row: string;
    run: (w: Awaited<ReturnType<typeof world>>, mr: Json) => Promise<void>;
  };
  const rows: Row[] = [
    {
      row: 'POST approve by a caller who may, with the head sha: caller added to approved_by',
      run: async (w, mr) => {
        const res = await api(w.developer, 'POST', mrPath(w.project, mr, '/approve'), { sha: mr.sha });
        expect(res.status, res.text).toBe(201);
        expect((res.body as Json).approved_by).toEqual([
          { user: expect.objectContaining({ id: w.developer.user.id }) },
        ]);
        expect(res.body).toMatchObject({ user_has_approved: true, user_can_approve: false });
      },
    },
    {
      row: 'POST approve with a sha that is not the head: 409',
      run: async (w, mr) => {
        const res = await api(w.developer, 'POST', mrPath(w.project, mr, '/approve'), {
          sha: '0'.repeat(40),
        });
        expect(res.status).toBe(409);
        expect(res.body).toEqual({ message: `SHA does not match HEAD of source branch: ${mr.sha}` });
        expect((await approvalsOf(w.developer, w.project, mr)).approved_by).toEqual([]);
      },
    },
    {
      row: 'POST unapprove by the caller who approved: approval removed',
      run: async (w, mr) => {
        await api(w.developer, 'POST', mrPath(w.project, mr, '/approve'));
        const res = await api(w.developer, 'POST', mrPath(w.project, mr, '/unapprove'));
        expect(res.status, res.text).toBe(201);
        expect((res.body as Json).approved_by).toEqual([]);
        expect((await api(w.developer, 'POST', mrPath(w.project, mr, '/unapprove'))).status).toBe(404);
      },
    },
    {
      row: 'PUT reset_approvals by a project token bot: all approvals cleared; a human gets 401',
      run: async (w, mr) => {
        await api(w.developer, 'POST', mrPath(w.project, mr, '/approve'));
        await api(w.developer2, 'POST', mrPath(w.project, mr, '/approve'));
        const human = await api(w.maintainer, 'PUT', mrPath(w.project, mr, '/reset_approvals'));
        expect(human.status).toBe(401);
        const token = await api(w.owner, 'POST', `/projects/${w.project.id}/access_tokens`, {
          name: 'bot',
          scopes: ['api'],
          access_level: 30,
        });
        expect(token.status, token.text).toBe(201);
        const res = await server.request('PUT', mrPath(w.project, mr, '/reset_approvals'), {
          token: (token.body as Json).token as string,
        });
        expect(res.status, res.text).toBe(202);
        expect((await approvalsOf(w.developer, w.project, mr)).approved_by).toEqual([]);
      },
    },
    {
      row: 'new commit pushed with the default setting: approvals reset, with a system note',
      run: async (w, mr) => {
        await api(w.developer, 'POST', mrPath(w.project, mr, '/approve'));
        await api(w.developer2, 'POST', mrPath(w.project, mr, '/approve'));
        await commitFile(w.developer, w.project, mr.branch as string, 'more.txt');
        await waitFor(
          () => approvalsOf(w.developer, w.project, mr),
          (s) => (s.approved_by as Json[]).length === 0,
          'reset',
        );
        const notes = await waitFor(
          async () => (await api(w.developer, 'GET', mrPath(w.project, mr, '/notes'))).body as Json[],
          (list) => list.some((note) => String(note.body).startsWith('reset approvals from')),
          'system note',
        );
        const note = notes.find((n) => String(n.body).startsWith('reset approvals from'))!;
        expect(note.system).toBe(true);
        expect(note.body).toBe(
          `reset approvals from @${w.developer.user.username} and @${w.developer2.user.username} by pushing to the branch`,
        );
      },
    },
  ];
  it.each(rows)('$row', async ({ run }) => {
    const w = await world();
    // Opened by the owner: the Developers who approve are neither its author nor its committers.
    const mr = await openMr(w.owner, w.project);
    await run(w, mr);
  });
});

describe('who may approve', () => {
  it.each([
    ['a Reporter', 'reporter', {}, 403],
    ['the author', 'developer', {}, 401],
    ['the author when authors may approve', 'developer', { merge_requests_author_approval: true }, 201],
    [
      'a committer when committers may not',
      'developer',
      { merge_requests_author_approval: true, merge_requests_disable_committers_approval: true },
      401,
    ],
    ['another Developer', 'developer2', { merge_requests_disable_committers_approval: true }, 201],
    ['a Maintainer', 'maintainer', {}, 201],
  ] as const)('%s answers as GitLab', async (_what, who, settings, status) => {
    const w = await world();
    if (Object.keys(settings).length > 0)
      expect((await api(w.maintainer, 'POST', `/projects/${w.project.id}/approvals`, settings)).status).toBe(
        201,
      );
    // The author commits with their own e-mail, so they are also the committer.
    const mr = await openMr(w.developer, w.project);
    const res = await api(w[who], 'POST', mrPath(w.project, mr, '/approve'));
    expect(res.status, res.text).toBe(status);
  });

  it('answers 401 to a second approval by the same user', async () => {
    const w = await world();
    const mr = await openMr(w.developer, w.project);
    expect((await api(w.maintainer, 'POST', mrPath(w.project, mr, '/approve'))).status).toBe(201);
    expect((await api(w.maintainer, 'POST', mrPath(w.project, mr, '/approve'))).status).toBe(401);
  });

  it('asks for the password when the project requires re-authentication', async () => {
    const w = await world();
    await server.dataSource.query('UPDATE users SET password_digest = $1 WHERE id = $2', [
      await hashPassword('correct horse battery'),
      w.maintainer.user.id,
    ]);
    await api(w.maintainer, 'POST', `/projects/${w.project.id}/approvals`, {
      require_reauthentication_to_approve: true,
    });
    const mr = await openMr(w.developer, w.project);
    expect((await api(w.maintainer, 'POST', mrPath(w.project, mr, '/approve'))).status).toBe(401);
    expect(
      (await api(w.maintainer, 'POST', mrPath(w.project, mr, '/approve'), { approval_password: 'wrong' }))
        .status,
    ).toBe(401);
    const ok = await api(w.maintainer, 'POST', mrPath(w.project, mr, '/approve'), {
      approval_password: 'correct horse battery',
    });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body).toMatchObject({ require_password_to_approve: true });
  });
});

describe('approvals hold merges back', () => {
  it('counts approvals by rule, shows not_approved and refuses the merge until the rule is met', async () => {
    const w = await world();
    await rule(w.maintainer, w.project, {
      name: 'Two reviewers',
      approvals_required: 2,
      user_ids: [w.developer2.user.id, w.maintainer.user.id, w.owner.user.id],
    });
    const mr = await openMr(w.developer, w.project);
    const before = await approvalsOf(w.developer, w.project, mr);
    expect(before).toMatchObject({ approvals_required: 2, approvals_left: 2, approved: false });
    const detail = await waitFor(
      async () => (await api(w.developer, 'GET', mrPath(w.project, mr))).body as Json,
      (body) => body.detailed_merge_status !== 'unchecked' && body.detailed_merge_status !== 'checking',
      'merge status',
    );
    expect(detail.detailed_merge_status).toBe('not_approved');
    expect((await api(w.maintainer, 'PUT', mrPath(w.project, mr, '/merge'))).status).toBe(405);
    // An approval from someone outside the rule is shown but does not count.
    await api(w.reporter, 'POST', mrPath(w.project, mr, '/approve'));
    await api(w.developer2, 'POST', mrPath(w.project, mr, '/approve'));
    expect(await approvalsOf(w.developer, w.project, mr)).toMatchObject({ approvals_left: 1 });
    const last = await api(w.owner, 'POST', mrPath(w.project, mr, '/approve'));
    expect(last.body).toMatchObject({ approvals_left: 0, approved: true });
    const list = await api(w.developer, 'GET', `/projects/${w.project.id}/merge_requests?iids[]=${mr.iid}`);
    expect((list.body as Json[])[0].detailed_merge_status).toBe('mergeable');
    const merged = await api(w.maintainer, 'PUT', mrPath(w.project, mr, '/merge'));
    expect(merged.status, merged.text).toBe(200);
    expect((merged.body as Json).state).toBe('merged');
  });

  it('needs approvals_before_merge approvals from anyone when the merge request has no rule', async () => {
    const w = await world();
    await api(w.maintainer, 'POST', `/projects/${w.project.id}/approvals`, { approvals_before_merge: 1 });
    const mr = await openMr(w.developer, w.project);
    expect(await approvalsOf(w.developer, w.project, mr)).toMatchObject({
      approvals_required: 1,
      approvals_left: 1,
    });
    await api(w.developer2, 'POST', mrPath(w.project, mr, '/approve'));
    expect(await approvalsOf(w.developer, w.project, mr)).toMatchObject({ approvals_left: 0 });
  });

  it('shows in a list page the approval state each merge request has (group, any-approver, no rule)', async () => {
    const w = await world();
    const group = await server.factories.group();
    await server.factories.member(group, w.developer2.user, AccessLevel.Developer);
    await api(w.maintainer, 'POST', `/projects/${w.project.id}/approvals`, { approvals_before_merge: 1 });
    const fallback = await openMr(w.developer, w.project);
    const byGroup = await openMr(w.developer, w.project);
    const anyone = await openMr(w.developer, w.project);
    const regular = await openMr(w.developer, w.project);
    const rules: Array<[Json, Json]> = [
      [byGroup, { name: 'Group', approvals_required: 1, group_ids: [group.id] }],
      [anyone, { name: 'Anyone', approvals_required: 2, rule_type: 'any_approver' }],
      [regular, { name: 'Maintainer', approvals_required: 1, user_ids: [w.maintainer.user.id] }],
      [regular, { name: 'Owner', approvals_required: 1, user_ids: [w.owner.user.id] }],
    ];
    for (const [mr, json] of rules) {
      const res = await api(w.maintainer, 'POST', mrPath(w.project, mr, '/approval_rules'), json);
      expect(res.status, res.text).toBe(201);
    }
    const mrs = [fallback, byGroup, anyone, regular];
    /** Each merge request's status in the list page, beside what its approvals endpoint says it lacks. */
    const compare = async () => {
      const list = await waitFor(
        async () =>
          (await api(w.developer, 'GET', `/projects/${w.project.id}/merge_requests?state=opened`))
            .body as Json[],
        (body) => body.every((mr) => !['unchecked', 'checking'].includes(mr.detailed_merge_status as string)),
        'merge statuses',
      );
      const shown = new Map(list.map((mr) => [mr.iid, mr.detailed_merge_status]));
      for (const mr of mrs) {
        const { approvals_left: left } = await approvalsOf(w.developer, w.project, mr);
        expect(shown.get(mr.iid), `!${mr.iid as number}`).toBe(
          (left as number) > 0 ? 'not_approved' : 'mergeable',
        );
      }
      return mrs.map((mr) => shown.get(mr.iid));
    };
    expect(await compare()).toEqual(Array(4).fill('not_approved'));
    // A group member counts for the group rule; one approval of two for anyone; one rule of two met.
    for (const mr of [fallback, byGroup, anyone])
      await api(w.developer2, 'POST', mrPath(w.project, mr, '/approve'));
    await api(w.maintainer, 'POST', mrPath(w.project, regular, '/approve'));
    expect(await compare()).toEqual(['mergeable', 'mergeable', 'not_approved', 'not_approved']);
    await api(w.maintainer, 'POST', mrPath(w.project, anyone, '/approve'));
    await api(w.owner, 'POST', mrPath(w.project, regular, '/approve'));
    expect(await compare()).toEqual(Array(4).fill('mergeable'));
  });
});

describe('list filters', () => {
  it('filters by approvers, approvals and approval state in SQL', async () => {
    const w = await world();
    const a = await openMr(w.developer, w.project);
    const b = await openMr(w.developer, w.project);
    await api(w.maintainer, 'POST', mrPath(w.project, b, '/approval_rules'), {
      name: 'Maintainer',
      approvals_required: 1,
      user_ids: [w.maintainer.user.id],
    });
    await api(w.maintainer, 'POST', mrPath(w.project, a, '/approve'));
    await api(w.developer2, 'POST', mrPath(w.project, a, '/approve'));
    const iids = async (query: string) =>
      ((await api(w.developer, 'GET', `/projects/${w.project.id}/merge_requests?${query}`)).body as Json[])
        .map((mr) => mr.iid)
        .sort();
    expect(
      await iids(`approved_by_ids[]=${w.maintainer.user.id}&approved_by_ids[]=${w.developer2.user.id}`),
    ).toEqual([a.iid]);
    expect(
      await iids(`approved_by_ids[]=${w.maintainer.user.id}&approved_by_ids[]=${w.reporter.user.id}`),
    ).toEqual([]);
    expect(await iids('approved_by_ids=None')).toEqual([b.iid]);
    expect(await iids('approved_by_ids=Any')).toEqual([a.iid]);
    expect(await iids(`approved_by_usernames[]=${w.developer2.user.username}`)).toEqual([a.iid]);
    expect(await iids(`approver_ids[]=${w.maintainer.user.id}`)).toEqual([b.iid]);
    expect(await iids('approver_ids=None')).toEqual([a.iid]);
    expect(await iids('approved=yes')).toEqual([a.iid]);
    expect(await iids('approved=no')).toEqual([b.iid]);
    const six = [1, 2, 3, 4, 5, 6].map((id) => `approved_by_ids[]=${id}`).join('&');
    expect((await api(w.developer, 'GET', `/projects/${w.project.id}/merge_requests?${six}`)).status).toBe(
      400,
    );
  });
});

describe('code owners', () => {
  it('gives each merge request code owner rules from the target branch, required on a protected branch', async () => {
    const w = await world();
    const res = await api(w.owner, 'POST', `/projects/${w.project.id}/repository/commits`, {
      branch: 'main',
      commit_message: 'Add CODEOWNERS',
      actions: [
        {
          action: 'create',
          file_path: '.gitlab/CODEOWNERS',
          content: `* @${w.owner.user.username}\n\n[Docs][2]\ndocs/ @${w.maintainer.user.username} ${w.developer2.user.email}\n\n^[Optional]\n*.md @${w.reporter.user.username}\n`,
        },
      ],
    });
    expect(res.status, res.text).toBe(201);
    const protect = await api(w.owner, 'PATCH', `/projects/${w.project.id}/protected_branches/main`, {
      code_owner_approval_required: true,
    });
    expect([200, 201], protect.text).toContain(protect.status);
    const mr = await openMr(w.developer, w.project, 'docs/guide.md');
    const state = await waitFor(
      async () => (await api(w.developer, 'GET', mrPath(w.project, mr, '/approval_state'))).body as Json,
      (body) => (body.rules as Json[]).length === 3,
      'code owner rules',
    );
    const rules = (state.rules as Json[]).map((r) => [r.section, r.name, r.rule_type, r.approvals_required]);
    expect(rules).toEqual(
      expect.arrayContaining([
        ['codeowners', '*', 'code_owner', 1],
        ['Docs', 'docs/', 'code_owner', 2],
        ['Optional', '*.md', 'code_owner', 0],
      ]),
    );
    expect(await approvalsOf(w.developer, w.project, mr)).toMatchObject({ approvals_left: 3 });
    await api(w.owner, 'POST', mrPath(w.project, mr, '/approve'));
    await api(w.maintainer, 'POST', mrPath(w.project, mr, '/approve'));
    await api(w.developer2, 'POST', mrPath(w.project, mr, '/approve'));
    expect(await approvalsOf(w.developer, w.project, mr)).toMatchObject({ approvals_left: 0 });
  });
});

describe('code owner approval on a protected branch', () => {
  const { work, gitCli } = useGitWorkDir('forge-codeowners-');

  async function guarded() {
    const w = await world();
    const added = await api(w.owner, 'POST', `/projects/${w.project.id}/repository/commits`, {
      branch: 'main',
      commit_message: 'Add CODEOWNERS',
      actions: [
        {
          action: 'create',
          file_path: 'CODEOWNERS',
          content: `/src/ @${w.maintainer.user.username}\n^[Docs]\n*.md @${w.reporter.user.username}\n`,
        },
      ],
    });
    expect(added.status, added.text).toBe(201);
    const protect = await api(w.owner, 'PATCH', `/projects/${w.project.id}/protected_branches/main`, {
      code_owner_approval_required: true,
    });
    expect(protect.status, protect.text).toBe(200);
    return w;
  }

  const commitTo = (w: Awaited<ReturnType<typeof world>>, path: string) =>
    api(w.owner, 'POST', `/projects/${w.project.id}/repository/commits`, {
      branch: 'main',
      commit_message: `Change ${path}`,
      actions: [{ action: 'create', file_path: path, content: 'x\n' }],
    });

  it.each([
    ['a file with a required code owner', 'src/app.ts', false],
    ['a file of an optional section only', 'notes.md', true],
    ['a file nobody owns', 'other.txt', true],
  ])('a direct API commit changing %s (%s): allowed %s', async (_what, path, allowed) => {
    const w = await guarded();
    const res = await commitTo(w, path);
    if (allowed) expect(res.status, res.text).toBe(201);
    else {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(JSON.stringify(res.body)).toContain(
        'Push to protected branches that contain changes to files matching CODEOWNERS is not allowed',
      );
    }
  });

  it('refuses a git push changing code-owned files, and lets merges through', async () => {
    const w = await guarded();
    const dir = path.join(work, `codeowners-${w.project.id}`);
    const fullPath = ((await api(w.owner, 'GET', `/projects/${w.project.id}`)).body as Json)
      .path_with_namespace as string;
    const url = remoteUrl(server.url, fullPath, w.owner.token);
    expect((await gitCli(['clone', '-q', url, dir])).ok).toBe(true);
    fs.mkdirSync(path.join(dir, 'src'));
    fs.writeFileSync(path.join(dir, 'src', 'x.ts'), 'x\n');
    await gitCli(['add', '.'], dir);
    await gitCli(['commit', '-q', '-m', 'owned'], dir);
    const refused = await gitCli(['push', 'origin', 'main'], dir);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain(
      'GitLab: Push to protected branches that contain changes to files matching CODEOWNERS is not allowed',
    );
    // Through a merge request, approved by the code owner, the same change merges.
    const pushed = await gitCli(['push', '-q', 'origin', 'HEAD:owned'], dir);
    expect(pushed.ok, pushed.stderr).toBe(true);
    const mr = await api(w.developer, 'POST', `/projects/${w.project.id}/merge_requests`, {
      source_branch: 'owned',
      target_branch: 'main',
      title: 'Owned change',
    });
    expect(mr.status, mr.text).toBe(201);
    const iid = (mr.body as Json).iid;
    await waitFor(
      async () => (await approvalsOf(w.developer, w.project, mr.body as Json)).approvals_left as number,
      (left) => left === 1,
      'code owner rule',
    );
    expect(
      (await api(w.maintainer, 'PUT', `/projects/${w.project.id}/merge_requests/${iid}/merge`)).status,
    ).toBe(405);
    await api(w.maintainer, 'POST', `/projects/${w.project.id}/merge_requests/${iid}/approve`);
    const merged = await api(w.maintainer, 'PUT', `/projects/${w.project.id}/merge_requests/${iid}/merge`);
    expect(merged.status, merged.text).toBe(200);
  });
});

describe('selective code owner removals', () => {
  it('removes on a push only the approvals of code owners whose files changed', async () => {
    const w = await world();
    const added = await api(w.owner, 'POST', `/projects/${w.project.id}/repository/commits`, {
      branch: 'main',
      commit_message: 'Add CODEOWNERS',
      actions: [
        {
          action: 'create',
          file_path: 'docs/CODEOWNERS',
          content: `/api/ @${w.maintainer.user.username}\n/web/ @${w.developer2.user.username}\n`,
        },
      ],
    });
    expect(added.status, added.text).toBe(201);
    const set = await api(w.maintainer, 'POST', `/projects/${w.project.id}/approvals`, {
      reset_approvals_on_push: false,
      selective_code_owner_removals: true,
    });
    expect(set.status, set.text).toBe(201);
    const mr = await openMr(w.owner, w.project, 'api/a.txt');
    await commitFile(w.owner, w.project, mr.branch as string, 'web/b.txt');
    await waitFor(
      async () => (await api(w.developer, 'GET', mrPath(w.project, mr, '/approval_rules'))).body as Json[],
      (rules) => rules.length === 2,
      'code owner rules',
    );
    for (const user of [w.maintainer, w.developer2, w.developer])
      expect((await api(user, 'POST', mrPath(w.project, mr, '/approve'))).status).toBe(201);
    // The push changes a file under /api/ only: the maintainer's approval goes, the others stay.
    await commitFile(w.owner, w.project, mr.branch as string, 'api/c.txt');
    const after = await waitFor(
      () => approvalsOf(w.developer, w.project, mr),
      (state) => (state.approved_by as Json[]).length === 2,
      'selective removal',
    );
    expect((after.approved_by as Array<{ user: Json }>).map((a) => a.user.id).sort()).toEqual(
      [w.developer.user.id, w.developer2.user.id].sort(),
    );
  });
});

describe('a Free instance', () => {
  const free = useTestServer({ env: { FORGE_TIER: 'free' } });

  it('has no approval routes', async () => {
    const owner = await free.factories.user();
    const project = await free.factories.projectWithReadme({ owner });
    const res = await free.request('GET', `/projects/${project.id}/approvals`, { token: owner.token });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: '404 Not Found' });
  });
});

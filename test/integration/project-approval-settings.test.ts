/**
 * The approval settings through the project's edit (`PUT /projects/:id`): stored where
 * `/projects/:id/approvals` keeps them, in the edit's transaction, and `approvals_before_merge` shown in
 * the project as GitLab shows it.
 */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

async function ownedProject() {
  return server.factories.ownedProjectWithReadme();
}

async function approvalSettings(projectId: number, token: string): Promise<Json> {
  const response = await server.request('GET', `/projects/${projectId}/approvals`, { token });
  expect(response.status).toBe(200);
  return response.body as Json;
}

/** A merge request by `token`'s user, from a new branch with one commit. */
async function mergeRequestBy(projectId: number, token: string): Promise<number> {
  const branch = `change-${Date.now()}`;
  const commit = await server.request('POST', `/projects/${projectId}/repository/commits`, {
    token,
    json: {
      branch,
      start_branch: 'main',
      commit_message: 'Change',
      actions: [{ action: 'create', file_path: `${branch}.txt`, content: 'change\n' }],
    },
  });
  expect(commit.status).toBe(201);
  const created = await server.request('POST', `/projects/${projectId}/merge_requests`, {
    token,
    json: { source_branch: branch, target_branch: 'main', title: 'Change' },
  });
  expect(created.status).toBe(201);
  return (created.body as Json).iid as number;
}

describe('PUT /projects/:id with approval settings', () => {
  // [what is sent, what GET /projects/:id/approvals then shows]
  const cases: Array<[Json, Json]> = [
    [{ approvals_before_merge: 2 }, { approvals_before_merge: 2 }],
    [{ fallback_approvals_required: 3 }, { approvals_before_merge: 3 }],
    [{ approvals_before_merge: 1, fallback_approvals_required: 4 }, { approvals_before_merge: 1 }],
    [{ reset_approvals_on_push: false }, { reset_approvals_on_push: false }],
    [
      { reset_approvals_on_push: false, selective_code_owner_removals: true },
      { reset_approvals_on_push: false, selective_code_owner_removals: true },
    ],
    [
      { disable_overriding_approvers_per_merge_request: true },
      { disable_overriding_approvers_per_merge_request: true },
    ],
    [{ merge_requests_author_approval: true }, { merge_requests_author_approval: true }],
    [
      { merge_requests_disable_committers_approval: true },
      { merge_requests_disable_committers_approval: true },
    ],
    [
      { require_password_to_approve: true },
      { require_password_to_approve: true, require_reauthentication_to_approve: true },
    ],
    [
      { require_reauthentication_to_approve: true },
      { require_password_to_approve: true, require_reauthentication_to_approve: true },
    ],
  ];

  it.each(cases)('%j is stored where the approvals API reads it', async (sent, shown) => {
    const { owner, project } = await ownedProject();
    const before = await approvalSettings(project.id, owner.token);
    const response = await server.request('PUT', `/projects/${project.id}`, {
      token: owner.token,
      json: { description: 'with approvals', ...sent },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ description: 'with approvals' });
    const after = await approvalSettings(project.id, owner.token);
    expect(after).toEqual({ ...before, ...shown });
    const read = await server.request('GET', `/projects/${project.id}`, { token: owner.token });
    expect((read.body as Json).approvals_before_merge).toBe(after.approvals_before_merge);
    expect((response.body as Json).approvals_before_merge).toBe(after.approvals_before_merge);
  });

  it('takes form fields as GitLab clients send them', async () => {
    const { owner, project } = await ownedProject();
    const response = await server.request('PUT', `/projects/${project.id}`, {
      token: owner.token,
      form: { merge_requests_author_approval: 'true', approvals_before_merge: '2' },
    });
    expect(response.status).toBe(200);
    expect(await approvalSettings(project.id, owner.token)).toMatchObject({
      merge_requests_author_approval: true,
      approvals_before_merge: 2,
    });
  });

  it('shows approvals_before_merge in project lists', async () => {
    const { owner, project } = await ownedProject();
    await server.request('PUT', `/projects/${project.id}`, {
      token: owner.token,
      json: { approvals_before_merge: 2 },
    });
    const list = await server.request('GET', `/projects?owned=true&search=${project.path}`, {
      token: owner.token,
    });
    expect((list.body as Json[]).map((item) => [item.id, item.approvals_before_merge])).toEqual([
      [project.id, 2],
    ]);
  });

  it('refuses a setting the approvals API refuses, and then changes nothing at all', async () => {
    const { owner, project } = await ownedProject();
    const before = await approvalSettings(project.id, owner.token);
    const response = await server.request('PUT', `/projects/${project.id}`, {
      token: owner.token,
      json: { description: 'not stored', approvals_before_merge: 5, selective_code_owner_removals: true },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: {
        base: ['selective_code_owner_removals can only be enabled when reset_approvals_on_push is disabled'],
      },
    });
    const read = await server.request('GET', `/projects/${project.id}`, { token: owner.token });
    expect((read.body as Json).description).not.toBe('not stored');
    expect(await approvalSettings(project.id, owner.token)).toEqual(before);
  });

  it('needs the role a project edit needs', async () => {
    const { owner, project } = await ownedProject();
    const developer = await server.factories.memberOf(project, AccessLevel.Developer);
    const before = await approvalSettings(project.id, owner.token);
    const response = await server.request('PUT', `/projects/${project.id}`, {
      token: developer.token,
      json: { merge_requests_author_approval: true },
    });
    expect(response.status).toBe(403);
    expect(await approvalSettings(project.id, owner.token)).toEqual(before);
  });

  it('lets the author approve their own merge request once merge_requests_author_approval is on', async () => {
    const { owner, project } = await ownedProject();
    const iid = await mergeRequestBy(project.id, owner.token);
    const approve = () =>
      server.request('POST', `/projects/${project.id}/merge_requests/${iid}/approve`, { token: owner.token });
    expect((await approve()).status).toBe(401);
    const edit = await server.request('PUT', `/projects/${project.id}`, {
      token: owner.token,
      json: { merge_requests_author_approval: true },
    });
    expect(edit.status).toBe(200);
    const approved = await approve();
    expect(approved.status).toBe(201);
    expect((approved.body as Json).approved_by).toEqual([
      expect.objectContaining({ user: expect.objectContaining({ id: owner.user.id }) }),
    ]);
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'sets merge_requests_author_approval with project.save(), then the author approves (needs Debian python3-gitlab)',
    async () => {
      const { owner, project } = await ownedProject();
      const iid = await mergeRequestBy(project.id, owner.token);
      const stdout = await runPythonClient('python_gitlab_project_approval_settings.py', [
        server.url,
        owner.token,
        String(project.id),
        String(iid),
      ]);
      expect(JSON.parse(stdout.trim())).toEqual({
        before: 401,
        saved: 2,
        settings: [true, 2],
        approved_by: [owner.user.username],
      });
    },
    60_000,
  );
});

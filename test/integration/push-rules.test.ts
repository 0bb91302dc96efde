/** Project push rules: the API (Premium), and their enforcement on `git push` and on API writes. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { remoteUrl, useGitWorkDir } from '../helpers/git-cli.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const free = useTestServer({ env: { FORGE_TIER: 'free' } });
const { work, gitCli } = useGitWorkDir('forge-push-rules-');

type Json = Record<string, unknown>;
const { Developer, Maintainer } = AccessLevel;
let counter = 0;

async function setup(rule?: Json) {
  const owner = await server.factories.user({ admin: true, name: 'Tester' });
  const project = await server.factories.project({ owner, initialize_with_readme: true });
  const maintainer = await server.factories.memberOf(project, Maintainer);
  if (rule) {
    const created = await server.request('POST', `/projects/${project.id}/push_rule`, {
      token: maintainer.token,
      json: rule,
    });
    expect(created.status, created.text).toBe(201);
  }
  return { owner, project, maintainer };
}

const rulePath = (project: Project) => `/projects/${project.id}/push_rule`;

describe('the push rule API', () => {
  it('creates, reads, edits and deletes the rule for Maintainers', async () => {
    const { project, maintainer } = await setup();
    const token = maintainer.token;
    const none = await server.request('GET', rulePath(project), { token });
    expect(none.status).toBe(200);
    expect(none.body).toBeNull();

    const created = await server.request('POST', rulePath(project), {
      token,
      json: { commit_message_regex: 'JIRA-\\d+', deny_delete_tag: true },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      project_id: project.id,
      commit_message_regex: 'JIRA-\\d+',
      deny_delete_tag: true,
      member_check: false,
      max_file_size: 0,
      branch_name_regex: null,
    });
    const again = await server.request('POST', rulePath(project), { token, json: { member_check: true } });
    expect(again.status).toBe(422);
    expect(again.body).toEqual({ message: 'Project push rule exists' });

    const edited = await server.request('PUT', rulePath(project), {
      token,
      json: { max_file_size: 2, commit_message_regex: '' },
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({
      max_file_size: 2,
      commit_message_regex: null,
      deny_delete_tag: true,
    });
    expect((await server.request('GET', rulePath(project), { token })).body).toMatchObject({
      max_file_size: 2,
    });

    const removed = await server.request('DELETE', rulePath(project), { token });
    expect(removed.status).toBe(204);
    for (const method of ['PUT', 'DELETE']) {
      const missing = await server.request(method, rulePath(project), {
        token,
        json: method === 'PUT' ? { member_check: true } : undefined,
      });
      expect(missing.status, method).toBe(404);
      expect(missing.body).toEqual({ message: '404 Push Rule Not Found' });
    }
  });

  it.each([
    [{}, 'error', /^commit_message_regex, .* are missing, at least one parameter must be provided$/],
    [{ commit_message_regex: '(unclosed' }, 'message', /commit_message_regex/],
    [{ file_name_regex: 'a**' }, 'message', /file_name_regex/],
  ])('validates %j', async (body, key, pattern) => {
    const { project, maintainer } = await setup();
    const response = await server.request('POST', rulePath(project), { token: maintainer.token, json: body });
    expect(response.status).toBe(400);
    const detail = (response.body as Json)[key];
    expect(typeof detail === 'string' ? detail : JSON.stringify(detail)).toMatch(pattern);
    if (key === 'message')
      expect(Object.values(detail as Record<string, string[]>)[0][0]).toMatch(/^not valid RE2 syntax: /);
  });

  it('refuses Developers (403) and is absent on the Free tier', async () => {
    const { project } = await setup();
    const developer = await server.factories.memberOf(project, Developer);
    expect((await server.request('GET', rulePath(project), { token: developer.token })).status).toBe(403);
    const owner = await free.factories.user({ admin: true });
    const freeProject = await free.factories.project({ owner });
    expect((await free.request('GET', rulePath(freeProject as Project), { token: owner.token })).status).toBe(
      404,
    );
  });
});

/** Writes one file through the files API on a new branch (or `main`). */
async function writeFile(project: Project, user: TestUser, file: string, body: Json) {
  return server.request('POST', `/projects/${project.id}/repository/files/${encodeURIComponent(file)}`, {
    token: user.token,
    json: { branch: 'main', content: 'text\n', commit_message: 'JIRA-1 add', ...body },
  });
}

describe('enforcement through the API', () => {
  it.each([
    [
      { commit_message_regex: 'JIRA-\\d+' },
      { commit_message: 'no ticket' },
      "Commit message does not follow the pattern 'JIRA-\\d+'",
    ],
    [
      { commit_message_negative_regex: 'secret' },
      { commit_message: 'JIRA-1 secret' },
      "Commit message contains the forbidden pattern 'secret'",
    ],
    [
      { branch_name_regex: '^feature/' },
      { branch: 'wip', start_branch: 'main' },
      "Branch name does not follow the pattern '^feature/'",
    ],
    [
      { author_email_regex: '@corp\\.example$' },
      { author_email: 'x@else.example', author_name: 'X' },
      "Author's commit email 'x@else.example' does not follow the pattern '@corp\\.example$'",
    ],
    [{ reject_non_dco_commits: true }, {}, 'Commit message must contain a DCO signoff'],
    [
      { file_name_regex: '\\.exe$' },
      { file: 'tool.exe' },
      'File name tool.exe was prohibited by the pattern "\\.exe$".',
    ],
    [
      { max_file_size: 1 },
      { file: 'big.txt', big: true },
      'File "big.txt" is larger than the allowed size of 1 MiB. Use Git LFS to manage this file.',
    ],
  ])('%j refuses %j', async (rule, write, message) => {
    const { project, maintainer } = await setup(rule);
    const { file = 'new.txt', big, ...body } = write as Json & { file?: string; big?: boolean };
    // Just over 1 MiB.
    if (big) body.content = 'x'.repeat(1024 * 1024 + 1);
    const refused = await writeFile(project, maintainer, file, body);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ message });
    // Nothing landed.
    const tree = await server.request('GET', `/projects/${project.id}/repository/tree`, {
      token: maintainer.token,
    });
    expect((tree.body as Json[]).map((e) => e.name)).toEqual(['README.md']);
  });

  it('lets conforming writes through', async () => {
    const { project, maintainer } = await setup({
      commit_message_regex: 'JIRA-\\d+',
      branch_name_regex: '^feature/',
      file_name_regex: '\\.exe$',
      max_file_size: 1,
      reject_non_dco_commits: true,
    });
    const ok = await writeFile(project, maintainer, 'ok.txt', {
      branch: 'feature/x',
      start_branch: 'main',
      commit_message: 'JIRA-2 fine\n\nSigned-off-by: Tester <t@example.com>',
    });
    expect(ok.status, ok.text).toBe(201);
  });

  it('checks branch creation through the branches API', async () => {
    const { project, maintainer } = await setup({ branch_name_regex: '^feature/' });
    const refused = await server.request('POST', `/projects/${project.id}/repository/branches`, {
      token: maintainer.token,
      json: { branch: 'wip', ref: 'main' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ message: "Branch name does not follow the pattern '^feature/'" });
  });
});

describe('enforcement on git push', () => {
  async function clone(rule: Json) {
    const ctx = await setup(rule);
    const view = await server.request('GET', `/projects/${ctx.project.id}`, { token: ctx.maintainer.token });
    const dir = path.join(work, `clone-${++counter}`);
    const cloned = await gitCli([
      'clone',
      '-q',
      remoteUrl(server.url, (view.body as Json).path_with_namespace as string, ctx.maintainer.token),
      dir,
    ]);
    expect(cloned.ok, cloned.stderr).toBe(true);
    return { ...ctx, dir };
  }

  async function commit(dir: string, message: string, file = `f${++counter}.txt`, content = 'x\n') {
    fs.writeFileSync(path.join(dir, file), content);
    await gitCli(['add', file], dir);
    await gitCli(['commit', '-q', '-m', message], dir);
  }

  it('refuses a commit whose message breaks the rule, with the remote message, and moves nothing', async () => {
    const { dir, project, maintainer } = await clone({ commit_message_regex: '^JIRA-\\d+' });
    const before = await server.request('GET', `/projects/${project.id}/repository/branches/main`, {
      token: maintainer.token,
    });
    await commit(dir, 'no ticket');
    const refused = await gitCli(['push', 'origin', 'main'], dir);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain(
      "remote: GitLab: Commit message does not follow the pattern '^JIRA-\\d+'",
    );
    const after = await server.request('GET', `/projects/${project.id}/repository/branches/main`, {
      token: maintainer.token,
    });
    expect((after.body as Json).commit).toEqual((before.body as Json).commit);

    await gitCli(['commit', '-q', '--amend', '-m', 'JIRA-7 fixed'], dir);
    const pushed = await gitCli(['push', '-q', 'origin', 'main'], dir);
    expect(pushed.ok, pushed.stderr).toBe(true);
  });

  it.each([
    [
      { file_name_regex: '\\.key$' },
      'id.key',
      'x\n',
      'remote: GitLab: File name id.key was prohibited by the pattern "\\.key$".',
    ],
    [
      { max_file_size: 1 },
      'big.bin',
      'y'.repeat(1024 * 1024 + 10),
      'remote: GitLab: File "big.bin" is larger than the allowed size of 1 MiB.',
    ],
    [
      { commit_committer_check: true },
      'c.txt',
      'x\n',
      "remote: GitLab: You cannot push commits for 't@example.com'.",
    ],
    [
      { member_check: true },
      'm.txt',
      'x\n',
      "remote: GitLab: Author 't@example.com' is not a member of team",
    ],
  ])('%j refuses the pushed commit', async (rule, file, content, message) => {
    const { dir } = await clone(rule);
    await commit(dir, 'change', file, content);
    const refused = await gitCli(['push', 'origin', 'main'], dir);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain(message);
  });

  it('refuses branch names and tag deletion by push, while the API still deletes tags', async () => {
    const { dir, project, maintainer } = await clone({
      branch_name_regex: '^feature/',
      deny_delete_tag: true,
    });
    await gitCli(['checkout', '-q', '-b', 'wip'], dir);
    const branch = await gitCli(['push', 'origin', 'wip'], dir);
    expect(branch.stderr).toContain("remote: GitLab: Branch name does not follow the pattern '^feature/'");
    await gitCli(['tag', 'v1'], dir);
    expect((await gitCli(['push', '-q', 'origin', 'v1'], dir)).ok).toBe(true);
    const deleted = await gitCli(['push', 'origin', ':refs/tags/v1'], dir);
    expect(deleted.ok).toBe(false);
    expect(deleted.stderr).toContain('remote: GitLab: You cannot delete a tag');
    const api = await server.request('DELETE', `/projects/${project.id}/repository/tags/v1`, {
      token: maintainer.token,
    });
    expect(api.status).toBe(204);
  });
});

/** Commits: history, single commits and commits made through the API, on real repositories. */
import { beforeAll, describe, expect, it } from 'vitest';
import { gitText } from '../../src/git/git.js';
import { AccessLevel } from '../../src/core/access-level.js';
import { ProtectedBranch } from '../../src/protected_branches/protected-branch.entity.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { ADA, setBranch, writeCommit } from '../helpers/git-plumbing.js';
import { useTestServer, type TestResponse } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;
let counter = 0;

/** A project with a README on the protected default branch `main`, owned by `owner`. */
const projectWithReadme = (owner: TestUser, attrs: Json = {}): Promise<Project> =>
  server.factories.projectWithReadme({
    owner,
    name: `commits-${++counter}`,
    path: `commits-${counter}`,
    ...attrs,
  });

/** One project shared by the tests whose requests are refused and change nothing. */
let refusals: Promise<{ owner: TestUser; project: Project }> | undefined;
const refusalProject = () =>
  (refusals ??= (async () => {
    const owner = await server.factories.user();
    return { owner, project: await projectWithReadme(owner) };
  })());

const gitDir = (project: Project) => server.services.storage.diskPath('default', project.id);
const revParse = (project: Project, rev: string) => gitText(['rev-parse', rev], { gitDir: gitDir(project) });

/** Fixed commit times, a minute apart, so that the order of a history never depends on timing. */
const HISTORY_START = 1_767_225_600;

/** A commit made with plumbing at a given time: `files` are written on top of the first parent's tree. */
const plumbCommit = (
  dir: string,
  parents: string[],
  files: Record<string, string>,
  message: string,
  time: number,
  author = ADA,
  treeOf?: string,
) => writeCommit(dir, { parents, files, message, author, date: `@${time} +0000`, base: treeOf });

const commit = (token: string | undefined, projectId: number | string, json: Json): Promise<TestResponse> =>
  server.request('POST', `/projects/${projectId}/repository/commits`, { token, json });

const create = (path: string, content: string) => ({ action: 'create', file_path: path, content });

describe('POST /projects/:id/repository/commits', () => {
  it('applies every kind of action in one commit, authored and committed by the caller', async () => {
    const owner = await server.factories.user();
    const project = await projectWithReadme(owner);
    await gitText(['update-ref', 'refs/heads/keep', 'main'], { gitDir: gitDir(project) });
    const setup = await commit(owner.token, project.id, {
      branch: 'main',
      commit_message: 'Set up',
      actions: [create('lib/a.rb', 'a\n'), create('lib/b.rb', 'b\n'), create('bin/run', '#!/bin/sh\n')],
    });
    expect(setup.status).toBe(201);
    const parent = await revParse(project, 'main');

    const response = await commit(owner.token, project.id, {
      branch: 'main',
      commit_message: 'Everything at once\n\nSigned-off-by: Ada <ada@example.com>',
      actions: [
        { action: 'update', file_path: 'lib/a.rb', content: 'a2\nmore\n' },
        { action: 'delete', file_path: 'lib/b.rb' },
        { action: 'move', previous_path: 'README.md', file_path: 'docs/README.md' },
        { action: 'chmod', file_path: 'bin/run', execute_filemode: true },
        { action: 'create', file_path: '/leading/slash.txt', content: 'x' },
      ],
    });
    expect(response.status).toBe(201);
    const body = response.body as Json;
    const head = await revParse(project, 'main');
    expect(body).toMatchObject({
      id: head,
      short_id: head.slice(0, 11),
      parent_ids: [parent],
      title: 'Everything at once',
      message: 'Everything at once\n\nSigned-off-by: Ada <ada@example.com>',
      author_name: owner.user.name,
      author_email: owner.user.email,
      committer_name: owner.user.name,
      committer_email: owner.user.email,
      trailers: { 'Signed-off-by': 'Ada <ada@example.com>' },
      extended_trailers: { 'Signed-off-by': ['Ada <ada@example.com>'] },
      web_url: `${server.url}/${owner.user.username}/${project.path}/-/commit/${head}`,
      stats: { additions: 3, deletions: 2, total: 5 },
      status: null,
      project_id: project.id,
      last_pipeline: null,
    });
    expect(body.created_at).toBe(body.committed_date);

    const tree = await gitText(['ls-tree', '-r', 'main'], { gitDir: gitDir(project) });
    const entries = Object.fromEntries(
      tree.split('\n').map((line) => {
        const [info, path] = line.split('\t');
        return [path, info.split(' ')[0]];
      }),
    );
    expect(entries).toEqual({
      'bin/run': '100755',
      'docs/README.md': '100644',
      'leading/slash.txt': '100644',
      'lib/a.rb': '100644',
    });
    expect(await gitText(['show', 'main:docs/README.md'], { gitDir: gitDir(project) })).toBe(
      `# ${project.name}`,
    );
    // The other branch did not move, and the commit is recorded as a push through the API.
    expect(await revParse(project, 'keep')).not.toBe(head);
    const events = await server.dataSource.query(
      `SELECT before_sha, after_sha, via, user_id FROM push_events WHERE project_id = $1 ORDER BY id DESC LIMIT 1`,
      [project.id],
    );
    expect(events).toEqual([{ before_sha: parent, after_sha: head, via: 'api', user_id: owner.user.id }]);
  });

  it('takes the author from author_name and author_email, base64 content byte for byte, and stats=false', async () => {
    const owner = await server.factories.user();
    const project = await projectWithReadme(owner);
    const bytes = Buffer.from([0, 1, 2, 255, 254, 10, 0]);
    const response = await commit(owner.token, project.id, {
      branch: 'main',
      commit_message: 'Binary',
      author_name: 'Grace Hopper',
      author_email: 'grace@example.com',
      stats: false,
      actions: [
        { action: 'create', file_path: 'blob.bin', content: bytes.toString('base64'), encoding: 'base64' },
      ],
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      author_name: 'Grace Hopper',
      author_email: 'grace@example.com',
      committer_name: owner.user.name,
    });
    expect(response.body).not.toHaveProperty('stats');
    const stored = await gitText(['rev-parse', 'main:blob.bin'], { gitDir: gitDir(project) });
    const hashed = await gitText(['hash-object', '--stdin'], { input: bytes });
    expect(stored).toBe(hashed);
  });

  it('makes the first commit of an empty repository, with no parent', async () => {
    const owner = await server.factories.user();
    const project = await server.factories.project({ owner, path: `empty-${++counter}` });
    const listed = await server.request('GET', `/projects/${project.id}/repository/commits`, {
      token: owner.token,
    });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([]);

    const response = await commit(owner.token, project.id, {
      branch: 'main',
      commit_message: 'First',
      actions: [create('hello.txt', 'hello\n')],
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      parent_ids: [],
      title: 'First',
      stats: { additions: 1, total: 1 },
    });
    const shown = await server.request('GET', `/projects/${project.id}`, { token: owner.token });
    expect((shown.body as Json).empty_repo).toBe(false);
  });

  it('accepts the actions as bracket-notation form fields', async () => {
    const owner = await server.factories.user();
    const project = await projectWithReadme(owner);
    const body = new URLSearchParams([
      ['branch', 'main'],
      ['commit_message', 'From a form'],
      ['actions[][action]', 'create'],
      ['actions[][file_path]', 'one.txt'],
      ['actions[][content]', '1'],
      ['actions[][action]', 'chmod'],
      ['actions[][file_path]', 'README.md'],
      ['actions[][execute_filemode]', 'true'],
    ]);
    const response = await server.request('POST', `/projects/${project.id}/repository/commits`, {
      token: owner.token,
      body: body.toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).toBe(201);
    expect(await gitText(['ls-tree', 'main', 'README.md', 'one.txt'], { gitDir: gitDir(project) })).toMatch(
      /^100755 blob \w+\tREADME\.md\n100644 blob \w+\tone\.txt$/,
    );
  });

  describe('branches', () => {
    it('starts a new branch from start_branch or start_sha, and refuses one without a start', async () => {
      const owner = await server.factories.user();
      const project = await projectWithReadme(owner);
      const main = await revParse(project, 'main');

      const orphan = await commit(owner.token, project.id, {
        branch: 'feature',
        commit_message: 'x',
        actions: [create('f.txt', 'f')],
      });
      expect(orphan.status).toBe(400);
      expect(orphan.body).toEqual({ message: 'You can only create or edit files when you are on a branch' });

      const fromBranch = await commit(owner.token, project.id, {
        branch: 'feature',
        start_branch: 'main',
        commit_message: 'On a new branch',
        actions: [create('f.txt', 'f')],
      });
      expect(fromBranch.status).toBe(201);
      expect((fromBranch.body as Json).parent_ids).toEqual([main]);
      expect(await revParse(project, 'main')).toBe(main);

      const fromSha = await commit(owner.token, project.id, {
        branch: 'from-sha',
        start_sha: main,
        commit_message: 'From a SHA',
        actions: [create('g.txt', 'g')],
      });
      expect(fromSha.status).toBe(201);
      expect((fromSha.body as Json).parent_ids).toEqual([main]);

      const existing = await commit(owner.token, project.id, {
        branch: 'feature',
        start_branch: 'main',
        commit_message: 'again',
        actions: [create('h.txt', 'h')],
      });
      expect(existing.status).toBe(400);
      expect(existing.body).toEqual({
        message: "A branch called 'feature' already exists. Switch to that branch in order to make changes",
      });

      // force replaces the branch with a commit on the start branch.
      const forced = await commit(owner.token, project.id, {
        branch: 'feature',
        start_branch: 'main',
        force: true,
        commit_message: 'Start over',
        actions: [create('h.txt', 'h')],
      });
      expect(forced.status).toBe(201);
      expect((forced.body as Json).parent_ids).toEqual([main]);
      expect(await revParse(project, 'feature')).toBe((forced.body as Json).id);
    });

    it.each([
      [{ start_sha: 'nothex' }, { message: "Invalid start_sha 'nothex'" }],
      [{ start_sha: 'a'.repeat(40) }, { message: `Cannot find start_sha '${'a'.repeat(40)}'` }],
      [
        { start_sha: 'a'.repeat(40), start_branch: 'main' },
        { error: 'start_branch, start_sha are mutually exclusive' },
      ],
      [
        { branch: 'a'.repeat(40), start_branch: 'main' },
        {
          message: `Something went wrong when we tried to create '${'a'.repeat(40)}' for you: Branch name is invalid`,
        },
      ],
      [
        { branch: 'bad..name', start_branch: 'main' },
        {
          message: "Something went wrong when we tried to create 'bad..name' for you: Branch name is invalid",
        },
      ],
    ])('refuses %j with 400 %j', async (attrs, expected) => {
      const { owner, project } = await refusalProject();
      const response = await commit(owner.token, project.id, {
        branch: 'other',
        commit_message: 'x',
        actions: [create('x.txt', 'x')],
        ...attrs,
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(expected);
    });

    it('refuses a force push to a protected branch that does not allow it', async () => {
      const owner = await server.factories.user();
      const project = await projectWithReadme(owner);
      await commit(owner.token, project.id, {
        branch: 'side',
        start_branch: 'main',
        commit_message: 'side',
        actions: [create('side.txt', 's')],
      });
      // main moves on, so putting it on `side` would drop that commit.
      await commit(owner.token, project.id, {
        branch: 'main',
        commit_message: 'main moves on',
        actions: [create('main.txt', 'm')],
      });
      const response = await commit(owner.token, project.id, {
        branch: 'main',
        start_branch: 'side',
        force: true,
        commit_message: 'rewrite main',
        actions: [create('other.txt', 'o')],
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        message: 'You are not allowed to force push code to a protected branch on this project.',
      });
      await server.dataSource
        .getRepository(ProtectedBranch)
        .update({ projectId: project.id }, { allowForcePush: true });
      const allowed = await commit(owner.token, project.id, {
        branch: 'main',
        start_branch: 'side',
        force: true,
        commit_message: 'rewrite main',
        actions: [create('other.txt', 'o')],
      });
      expect(allowed.status).toBe(201);
    });

    it('accepts start_project naming the project itself, and no other project', async () => {
      const owner = await server.factories.user();
      const project = await projectWithReadme(owner);
      const itself = await commit(owner.token, project.id, {
        branch: 'main',
        start_project: `${owner.user.username}/${project.path}`,
        commit_message: 'same project',
        actions: [create('s.txt', 's')],
      });
      expect(itself.status).toBe(201);
      const other = await projectWithReadme(owner, { name: 'Upstream Thing', path: `upstream-${++counter}` });
      const response = await commit(owner.token, project.id, {
        branch: 'main',
        start_project: other.id,
        commit_message: 'other project',
        actions: [create('t.txt', 't')],
      });
      expect(response.status).toBe(403);
      expect(response.body).toEqual({
        message: `403 Forbidden - Project is not included in the fork network for ${owner.user.name} / Upstream Thing`,
      });
    });
  });

  describe('file errors, in GitLab words', () => {
    let owner: TestUser;
    let project: Project;
    beforeAll(async () => {
      owner = await server.factories.user();
      project = await projectWithReadme(owner);
      const setup = await commit(owner.token, project.id, {
        branch: 'main',
        commit_message: 'dir',
        actions: [create('dir/file.txt', 'x')],
      });
      expect(setup.status).toBe(201);
    });

    it.each([
      [create('README.md', 'again'), 'A file with this name already exists'],
      [create('dir', 'x'), 'A directory with this name already exists'],
      [create('README.md/inside', 'x'), 'A file with this name already exists'],
      [{ action: 'update', file_path: 'missing.txt', content: 'x' }, "A file with this name doesn't exist"],
      [{ action: 'delete', file_path: 'missing.txt' }, "A file with this name doesn't exist"],
      [{ action: 'delete', file_path: 'dir' }, "A file with this name doesn't exist"],
      [
        { action: 'chmod', file_path: 'missing.txt', execute_filemode: true },
        "A file with this name doesn't exist",
      ],
      [
        { action: 'move', previous_path: 'missing.txt', file_path: 'b.txt' },
        "A file with this name doesn't exist",
      ],
      [
        { action: 'move', previous_path: 'README.md', file_path: 'dir/file.txt' },
        'A file with this name already exists',
      ],
      [create('../outside.txt', 'x'), 'Path cannot include directory traversal'],
      [create('a//b.txt', 'x'), "invalid path: 'a//b.txt'"],
      [create('.git/config', 'x'), "invalid path: '.git/config'"],
      [create('docs/.Git./hooks', 'x'), "invalid path: 'docs/.Git./hooks'"],
      [create('/', 'x'), 'You must provide a file path'],
      [
        { action: 'update', file_path: 'README.md', content: 'x', last_commit_id: 'f'.repeat(40) },
        'The file has changed since you started editing it: README.md',
      ],
    ])('%j answers 400 %j and moves nothing', async (action, message) => {
      const before = await revParse(project, 'main');
      const response = await commit(owner.token, project.id, {
        branch: 'main',
        commit_message: 'refused',
        actions: [create('fine.txt', 'ok'), action],
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ message });
      expect(await revParse(project, 'main')).toBe(before);
    });

    it('accepts the current last_commit_id, and sees changes made by earlier actions of the same commit', async () => {
      const last = await gitText(['log', '-1', '--format=%H', 'main', '--', 'README.md'], {
        gitDir: gitDir(project),
      });
      const response = await commit(owner.token, project.id, {
        branch: 'main',
        commit_message: 'sequential',
        actions: [
          { action: 'update', file_path: 'README.md', content: 'new\n', last_commit_id: last },
          create('seq.txt', '1'),
          { action: 'update', file_path: 'seq.txt', content: '2' },
          { action: 'move', previous_path: 'seq.txt', file_path: 'seq2.txt', content: '3' },
        ],
      });
      expect(response.status).toBe(201);
      expect(await gitText(['show', 'main:seq2.txt'], { gitDir: gitDir(project) })).toBe('3');
    });
  });

  describe('parameters', () => {
    it.each([
      [{ commit_message: 'x', actions: [] }, { error: 'branch is missing' }],
      [{ branch: 'main', actions: [create('a', 'b')] }, { error: 'commit_message is missing' }],
      [
        { branch: 'main', commit_message: ' ', actions: [create('a', 'b')] },
        { error: 'commit_message is empty' },
      ],
      [
        { branch: 'main', commit_message: 'x' },
        { error: 'Provide at least one action, or set allow_empty to true' },
      ],
      [
        { branch: 'main', commit_message: 'x', actions: [] },
        { error: 'Provide at least one action, or set allow_empty to true' },
      ],
      [
        { branch: 'main', commit_message: 'x', actions: [{ action: 'rename', file_path: 'a' }] },
        { error: 'actions[0][action] does not have a valid value' },
      ],
      [
        { branch: 'main', commit_message: 'x', actions: [{ action: 'create' }] },
        { error: 'actions[0][file_path] is missing' },
      ],
      [
        { branch: 'main', commit_message: 'x', actions: [{ action: 'update', file_path: 'a' }] },
        { error: 'actions[0][content] is required for update action' },
      ],
      [
        { branch: 'main', commit_message: 'x', actions: [{ action: 'move', file_path: 'a' }] },
        { error: 'actions[0][previous_path] is required for move action' },
      ],
      [
        { branch: 'main', commit_message: 'x', actions: [{ action: 'chmod', file_path: 'a' }] },
        { error: 'actions[0][execute_filemode] is required for chmod action' },
      ],
      [
        {
          branch: 'main',
          commit_message: 'x',
          actions: [{ action: 'create', file_path: 'a', encoding: 'hex' }],
        },
        { error: 'actions[0][encoding] does not have a valid value' },
      ],
    ])('%j answers 400 %j', async (json, expected) => {
      const { owner, project } = await refusalProject();
      const response = await commit(owner.token, project.id, json);
      expect(response.status).toBe(400);
      expect(response.body).toEqual(expected);
    });

    it('makes an empty commit with allow_empty', async () => {
      const owner = await server.factories.user();
      const project = await projectWithReadme(owner);
      const before = await revParse(project, 'main');
      const response = await commit(owner.token, project.id, {
        branch: 'main',
        commit_message: 'Nothing changes',
        allow_empty: true,
      });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        parent_ids: [before],
        stats: { additions: 0, deletions: 0, total: 0 },
      });
    });
  });

  describe('permissions', () => {
    const pushRefused = { message: '403 Forbidden - You are not allowed to push into this branch' };
    it.each([
      ['Maintainer', AccessLevel.Maintainer, 'main', 201, undefined],
      ['Developer', AccessLevel.Developer, 'main', 403, pushRefused],
      ['Developer', AccessLevel.Developer, 'topic', 201, undefined],
      ['Reporter', AccessLevel.Reporter, 'topic', 403, pushRefused],
      ['Guest', AccessLevel.Guest, 'topic', 403, { message: '403 Forbidden' }],
      ['a non-member', null, 'topic', 404, { message: '404 Project Not Found' }],
    ])(
      'a %s (%s) committing to %s of a private project answers %i',
      async (_role, level, branch, status, body) => {
        const owner = await server.factories.user();
        const project = await projectWithReadme(owner);
        const user = await server.factories.user();
        if (level !== null) await server.factories.member(project, user.user, level);
        const response = await commit(user.token, project.id, {
          branch,
          start_branch: 'main',
          commit_message: 'by a member',
          actions: [create(`by-${counter}.txt`, 'x')],
        });
        expect(response.status).toBe(status);
        if (body) expect(response.body).toEqual(body);
      },
    );

    it('needs a token, with the api scope, and refuses archived projects', async () => {
      const owner = await server.factories.user();
      const project = await projectWithReadme(owner, { visibility: 'public' });
      const json = { branch: 'main', commit_message: 'x', actions: [create('a.txt', 'a')] };
      expect((await commit(undefined, project.id, json)).status).toBe(401);
      const readApi = await server.factories.token(owner.user, ['read_api']);
      expect((await commit(readApi, project.id, json)).status).toBe(403);
      await server.request('POST', `/projects/${project.id}/archive`, { token: owner.token });
      const archived = await commit(owner.token, project.id, json);
      expect(archived.status).toBe(403);
      expect(archived.body).toEqual(pushRefused);
    });
  });
});

describe('GET /projects/:id/repository/commits', () => {
  let owner: TestUser;
  let project: Project;
  /** Commit ids, oldest first: initial, a, b (docs), c (by Grace, with a trailer), merge. */
  const ids: string[] = [];
  let featureCommit: string;

  beforeAll(async () => {
    owner = await server.factories.user();
    project = await server.factories.project({ owner, path: `history-${++counter}`, visibility: 'public' });
    const dir = gitDir(project);
    const at = (minute: number) => HISTORY_START + minute * 60;
    ids.push(await plumbCommit(dir, [], { 'README.md': '# history\n' }, 'Initial commit\n', at(0)));
    ids.push(await plumbCommit(dir, [ids[0]], { 'a.txt': 'a\n' }, 'a', at(1)));
    ids.push(await plumbCommit(dir, [ids[1]], { 'docs/b.md': 'b\n' }, 'b', at(2)));
    ids.push(
      await plumbCommit(
        dir,
        [ids[2]],
        { 'a.txt': 'a\nc\nc\n' },
        'c\n\nReviewed-by: Ada\nReviewed-by: Bob',
        at(3),
        {
          name: 'Grace Hopper',
          email: 'grace@example.com',
        },
      ),
    );
    featureCommit = await plumbCommit(dir, [ids[3]], { 'feature.txt': 'f\n' }, 'feature work', at(4));
    // The merge takes the feature's tree: main's first parent, the feature as second.
    ids.push(
      await plumbCommit(dir, [ids[3], featureCommit], {}, 'Merge feature', at(5), undefined, featureCommit),
    );
    const lonely = await plumbCommit(dir, [ids[1]], {}, 'lonely', at(6));
    for (const [branch, sha] of [
      ['main', ids[4]],
      ['feature', featureCommit],
      ['lonely', lonely],
    ])
      await setBranch(dir, branch, sha);
  });

  const list = async (query = '', token?: string) =>
    server.request('GET', `/projects/${project.id}/repository/commits${query}`, {
      token: token ?? owner.token,
    });
  const titles = (response: TestResponse) => (response.body as Json[]).map((c) => c.title);

  it('lists the default branch newest first, without totals, anonymously for a public project', async () => {
    const response = await list('', '');
    expect(response.status).toBe(200);
    expect(titles(response)).toEqual(['Merge feature', 'feature work', 'c', 'b', 'a', 'Initial commit']);
    expect(response.headers.get('x-total')).toBeNull();
    expect(response.headers.get('x-total-pages')).toBeNull();
    expect(response.headers.get('x-page')).toBe('1');
    expect(response.headers.get('x-per-page')).toBe('20');
    expect(response.headers.get('x-next-page')).toBe('');
    expect(response.headers.get('link')).not.toContain('rel="last"');
    const first = (response.body as Json[])[0];
    expect(first).toMatchObject({
      id: ids[4],
      parent_ids: [ids[3], featureCommit],
      trailers: {},
      extended_trailers: {},
    });
    expect(first).not.toHaveProperty('stats');
  });

  it('paginates with page links and no last link', async () => {
    const second = await list('?per_page=2&page=2');
    expect(titles(second)).toEqual(['c', 'b']);
    expect(second.headers.get('x-prev-page')).toBe('1');
    expect(second.headers.get('x-next-page')).toBe('3');
    const base = `${server.api}/projects/${project.id}/repository/commits`;
    expect(second.headers.get('link')).toBe(
      [
        `<${base}?page=1&per_page=2>; rel="prev"`,
        `<${base}?page=3&per_page=2>; rel="next"`,
        `<${base}?page=1&per_page=2>; rel="first"`,
      ].join(', '),
    );
    const last = await list('?per_page=2&page=3');
    expect(titles(last)).toEqual(['a', 'Initial commit']);
    expect(last.headers.get('x-next-page')).toBe('');
    expect(last.headers.get('link')).not.toContain('rel="next"');
    const beyond = await list('?per_page=2&page=9');
    expect(beyond.body).toEqual([]);
  });

  it.each([
    ['?ref_name=feature', ['feature work', 'c', 'b', 'a', 'Initial commit']],
    ['?ref_name=feature~1', ['c', 'b', 'a', 'Initial commit']],
    [`?ref_name=${'main..lonely'}`, ['lonely']],
    ['?ref_name=nope', []],
    ['?path=docs', ['b']],
    ['?path=%2Fdocs%2Fb.md', ['b']],
    ['?path=a.txt', ['c', 'a']],
    ['?path=missing', []],
    ['?author=Grace', ['c']],
    ['?author=grace%40example.com', ['c']],
    ['?first_parent=true', ['Merge feature', 'c', 'b', 'a', 'Initial commit']],
    ['?order=topo&first_parent=true', ['Merge feature', 'c', 'b', 'a', 'Initial commit']],
    [
      '?since=2000-01-01T00:00:00Z&until=2999-01-01T00:00:00Z',
      ['Merge feature', 'feature work', 'c', 'b', 'a', 'Initial commit'],
    ],
    [
      `?since=${new Date((HISTORY_START + 180) * 1000).toISOString()}`,
      ['Merge feature', 'feature work', 'c'],
    ],
    [`?until=${new Date((HISTORY_START + 60) * 1000).toISOString()}`, ['a', 'Initial commit']],
    ['?since=2026-01-01T00:02:00&until=2026-01-01T00:03:00.000Z', ['c', 'b']],
    ['?since=2999-01-01T00:00:00Z', []],
    ['?until=2000-01-01', []],
  ])('filters %s', async (query, expected) => {
    const response = await list(query);
    expect(response.status).toBe(200);
    expect(titles(response)).toEqual(expected);
  });

  it('lists the commits of every ref with all=true', async () => {
    const response = await list('?all=true&ref_name=nope');
    expect(titles(response).sort()).toEqual(
      ['Initial commit', 'Merge feature', 'a', 'b', 'c', 'feature work', 'lonely'].sort(),
    );
  });

  it('adds stats and trailers on request', async () => {
    const response = await list('?with_stats=true&trailers=true&per_page=3');
    const byTitle: Record<string, Json> = Object.fromEntries(
      (response.body as Json[]).map((c) => [c.title, c]),
    );
    expect(byTitle.c).toMatchObject({
      author_name: 'Grace Hopper',
      stats: { additions: 2, deletions: 0, total: 2 },
      trailers: { 'Reviewed-by': 'Bob' },
      extended_trailers: { 'Reviewed-by': ['Ada', 'Bob'] },
    });
    // A merge counts its changes against the first parent.
    expect(byTitle['Merge feature'].stats).toEqual({ additions: 1, deletions: 0, total: 1 });
  });

  it('answers 400 for bad parameters', async () => {
    const dash = await list('?ref_name=-all');
    expect(dash.status).toBe(400);
    expect(dash.body).toEqual({ message: 'ref_name is invalid' });
    const since = await list('?since=yesterday-ish');
    expect(since.status).toBe(400);
    expect(since.body).toEqual({ error: 'since is invalid' });
    const order = await list('?order=random');
    expect(order.status).toBe(400);
    expect(order.body).toEqual({ error: 'order does not have a valid value' });
  });

  it('hides private repositories from outsiders and Guests', async () => {
    const privateProject = await projectWithReadme(owner);
    const outsider = await server.factories.user();
    const hidden = await server.request('GET', `/projects/${privateProject.id}/repository/commits`, {
      token: outsider.token,
    });
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ message: '404 Project Not Found' });
    await server.factories.member(privateProject, outsider.user, AccessLevel.Guest);
    const guest = await server.request('GET', `/projects/${privateProject.id}/repository/commits`, {
      token: outsider.token,
    });
    expect(guest.status).toBe(403);
  });

  describe('walks kept by their resolved heads', () => {
    /** A project of its own: these tests move its refs. */
    let moving: Project;
    let dir: string;
    const at = (minute: number) => HISTORY_START + minute * 60;
    const listOf = (query: string) =>
      server.request('GET', `/projects/${moving.id}/repository/commits${query}`, { token: owner.token });

    beforeAll(async () => {
      moving = await server.factories.project({ owner, path: `moving-${++counter}` });
      dir = gitDir(moving);
      const root = await plumbCommit(dir, [], { 'README.md': 'one\n' }, 'one', at(0));
      await setBranch(dir, 'main', await plumbCommit(dir, [root], { 'a.txt': 'two\n' }, 'two', at(1)));
    });

    it('never serves the walk of a branch head that has moved since, nor of a ref set that changed', async () => {
      expect(titles(await listOf('?ref_name=main'))).toEqual(['two', 'one']);
      expect(titles(await listOf('?ref_name=main&per_page=1&page=2'))).toEqual(['one']);
      expect(titles(await listOf('?all=true'))).toEqual(['two', 'one']);
      const head = await revParse(moving, 'main');
      const three = await plumbCommit(dir, [head], { 'a.txt': 'three\n' }, 'three', at(2));
      await setBranch(dir, 'main', three);
      expect(titles(await listOf('?ref_name=main'))).toEqual(['three', 'two', 'one']);
      expect(titles(await listOf('?ref_name=main&per_page=1&page=2'))).toEqual(['two']);
      expect(titles(await listOf('?ref_name=main&path=a.txt'))).toEqual(['three', 'two']);
      // A ref that is not a branch's head still counts for all=true.
      const side = await plumbCommit(dir, [head], { 'b.txt': 'side\n' }, 'side', at(3));
      await gitText(['update-ref', 'refs/keep/side', side], { gitDir: dir });
      expect(titles(await listOf('?all=true'))).toEqual(['side', 'three', 'two', 'one']);
      // Moved backwards (a force push): the shorter history, not the longer one walked before.
      await setBranch(dir, 'main', head);
      expect(titles(await listOf('?ref_name=main'))).toEqual(['two', 'one']);
      expect(titles(await listOf(`?ref_name=${encodeURIComponent(`${head}..${side}`)}`))).toEqual(['side']);
    });

    it('pages a long history as git log does, past the first stretch of the walk', async () => {
      const long = await server.factories.project({ owner, path: `long-${++counter}` });
      const longDir = gitDir(long);
      // 1,250 commits in one fast-import stream, a minute apart.
      const stream: string[] = [];
      for (let i = 1; i <= 1250; i++) {
        const content = `${i}\n`;
        stream.push(
          `commit refs/heads/main\nmark :${i}\ncommitter Ada <ada@example.com> ${at(i)} +0000\ndata ${String(i).length}\n${i}\n`,
          ...(i > 1 ? [`from :${i - 1}\n`] : []),
          `M 100644 inline n${i % 7}.txt\ndata ${content.length}\n${content}\n`,
        );
      }
      await gitText(['fast-import', '--quiet'], { gitDir: longDir, input: stream.join('') });
      const ids = (args: string[]) =>
        gitText(['log', '--format=%H', ...args], { gitDir: longDir }).then((out) => out.split('\n'));
      const page = async (query: string) =>
        (
          (
            await server.request('GET', `/projects/${long.id}/repository/commits${query}`, {
              token: owner.token,
            })
          ).body as Json[]
        ).map((c) => c.id);
      expect(await page('?per_page=100&page=1')).toEqual(await ids(['-n', '100', 'main']));
      expect(await page('?per_page=100&page=10')).toEqual(await ids(['--skip', '900', '-n', '100', 'main']));
      expect(await page('?per_page=100&page=11')).toEqual(await ids(['--skip', '1000', '-n', '100', 'main']));
      expect(await page('?per_page=100&page=13')).toEqual(await ids(['--skip', '1200', '-n', '100', 'main']));
      expect(await page('?per_page=100&page=14')).toEqual([]);
      expect(await page('?per_page=20&page=8&path=n3.txt')).toEqual(
        await ids(['--skip', '140', '-n', '20', 'main', '--', 'n3.txt']),
      );
    });
  });

  describe('GET /projects/:id/repository/commits/:sha', () => {
    it.each([
      ['a full SHA', () => ids[3]],
      ['a short SHA', () => ids[3].slice(0, 8)],
      ['a branch name', () => 'feature~1'],
    ])('finds a commit by %s, with stats', async (_how, sha) => {
      const response = await server.request(
        'GET',
        `/projects/${project.id}/repository/commits/${encodeURIComponent(sha())}`,
        { token: owner.token },
      );
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id: ids[3],
        title: 'c',
        message: 'c\n\nReviewed-by: Ada\nReviewed-by: Bob',
        trailers: { 'Reviewed-by': 'Bob' },
        stats: { additions: 2, deletions: 0, total: 2 },
        status: null,
        last_pipeline: null,
        project_id: project.id,
      });
    });

    it('finds a branch with a slash, leaves out stats on request, and answers 404 for unknown commits', async () => {
      await gitText(['update-ref', 'refs/heads/topic/nested', ids[1]], { gitDir: gitDir(project) });
      const nested = await server.request(
        'GET',
        `/projects/${project.id}/repository/commits/topic%2Fnested?stats=false`,
        { token: '' },
      );
      expect(nested.status).toBe(200);
      expect(nested.body).toMatchObject({ id: ids[1], parent_ids: [ids[0]] });
      expect(nested.body).not.toHaveProperty('stats');
      for (const sha of ['f'.repeat(40), 'nope', '--all']) {
        const missing = await server.request('GET', `/projects/${project.id}/repository/commits/${sha}`, {
          token: owner.token,
        });
        expect(missing.status).toBe(404);
        expect(missing.body).toEqual({ message: '404 Commit Not Found' });
      }
    });

    it('gives a root commit the stats of its whole tree', async () => {
      const response = await server.request('GET', `/projects/${project.id}/repository/commits/${ids[0]}`, {
        token: owner.token,
      });
      expect(response.body).toMatchObject({
        parent_ids: [],
        stats: { additions: 1, deletions: 0, total: 1 },
      });
    });
  });
});

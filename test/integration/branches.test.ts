/** Branches: listing with filters and per-caller fields, creating and deleting through the push rules. */
import { beforeAll, describe, expect, it } from 'vitest';
import { gitText } from '../../src/git/git.js';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import {
  ProtectedBranch,
  ProtectedBranchAccessLevel,
} from '../../src/protected_branches/protected-branch.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { setBranch, writeOneFileCommit } from '../helpers/git-plumbing.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const { Guest, Reporter, Developer, Maintainer } = AccessLevel;

type Json = Record<string, unknown>;
const ZERO = '0'.repeat(40);

const repositoryOf = (project: Project) => server.services.storage.diskPath('default', project.id);

/** A commit on top of `parent` adding one file, written with plumbing (no clone needed). */
const commitOn = (project: Project, parent: string | null, file: string, date = '2026-01-01T00:00:00Z') =>
  writeOneFileCommit(repositoryOf(project), parent, file, date);

const setRef = (project: Project, branch: string, sha: string) =>
  setBranch(repositoryOf(project), branch, sha);

const headOf = (project: Project, branch: string) =>
  gitText(['rev-parse', `refs/heads/${branch}`], { gitDir: repositoryOf(project) });

async function branchNames(project: Project): Promise<string[]> {
  const out = await gitText(['for-each-ref', '--format=%(refname:strip=2)', 'refs/heads/'], {
    gitDir: repositoryOf(project),
  });
  return out ? out.split('\n') : [];
}

async function protect(project: Project, name: string, levels: { push: number; merge: number }) {
  const rule = await server.dataSource.getRepository(ProtectedBranch).save({ projectId: project.id, name });
  await server.dataSource.getRepository(ProtectedBranchAccessLevel).insert([
    { protectedBranchId: rule.id, action: 'push', accessLevel: levels.push },
    { protectedBranchId: rule.id, action: 'merge', accessLevel: levels.merge },
  ]);
}

/** A project with a README on main (protected for Maintainers), and users in each role. */
async function setup(visibility: 'public' | 'private' = 'private') {
  const { owner, project } = await server.factories.ownedProjectWithReadme({ visibility });
  const role = (level: number) => server.factories.memberOf(project, level);
  return {
    owner,
    project,
    main: await headOf(project, 'main'),
    guest: await role(Guest),
    reporter: await role(Reporter),
    developer: await role(Developer),
    maintainer: await role(Maintainer),
  };
}

const branchesPath = (project: Project) => `/projects/${project.id}/repository/branches`;
const names = (body: unknown) => (body as Json[]).map((b) => b.name);

describe('listing and reading branches', () => {
  let s: Awaited<ReturnType<typeof setup>>;
  let feature: string;
  let old: string;

  beforeAll(async () => {
    s = await setup('public');
    feature = await commitOn(s.project, s.main, 'feature.txt', '2026-02-01T00:00:00Z');
    old = await commitOn(s.project, null, 'old.txt', '2020-01-01T00:00:00Z');
    await setRef(s.project, 'feature/login', feature);
    await setRef(s.project, 'Fix', s.main);
    await setRef(s.project, 'fix-merged', old);
    await setRef(s.project, 'prefix', old);
    // An ancestor of main's head: `merged`. main's own commit has no parent, so merge one in.
    const merge = await gitText(
      ['commit-tree', `${s.main}^{tree}`, '-p', s.main, '-p', old, '-m', 'merge old history'],
      {
        gitDir: repositoryOf(s.project),
        env: {
          GIT_AUTHOR_NAME: 'Ada',
          GIT_AUTHOR_EMAIL: 'ada@example.com',
          GIT_COMMITTER_NAME: 'Ada',
          GIT_COMMITTER_EMAIL: 'ada@example.com',
        },
      },
    );
    await setRef(s.project, 'main', merge);
    await protect(s.project, 'feature/*', { push: Developer, merge: Maintainer });
  });

  it('lists by name with the commit and the caller-dependent fields, even without a token', async () => {
    const anonymous = await server.request('GET', branchesPath(s.project));
    expect(anonymous.status).toBe(200);
    expect(names(anonymous.body)).toEqual(['Fix', 'feature/login', 'fix-merged', 'main', 'prefix']);
    const byName = Object.fromEntries((anonymous.body as Json[]).map((b) => [b.name, b]));
    expect(byName.main).toMatchObject({
      merged: false,
      protected: true,
      default: true,
      developers_can_push: false,
      developers_can_merge: false,
      can_push: false,
      web_url: `${server.url}/${s.owner.user.username}/${s.project.path}/-/tree/main`,
    });
    expect(byName['feature/login']).toMatchObject({
      protected: true,
      developers_can_push: true,
      developers_can_merge: false,
      merged: false,
      web_url: `${server.url}/${s.owner.user.username}/${s.project.path}/-/tree/feature/login`,
      commit: { id: feature, short_id: feature.slice(0, 11), title: 'add feature.txt', parent_ids: [s.main] },
    });
    // `Fix` is main's old head, now an ancestor; `fix-merged` sits on merged-in history.
    expect(byName.Fix).toMatchObject({ merged: true, protected: false });
    expect(byName['fix-merged']).toMatchObject({ merged: true });

    const developer = await server.request('GET', branchesPath(s.project), { token: s.developer.token });
    const forDeveloper = Object.fromEntries((developer.body as Json[]).map((b) => [b.name, b.can_push]));
    expect(forDeveloper).toEqual({
      Fix: true,
      'feature/login': true,
      'fix-merged': true,
      main: false,
      prefix: true,
    });
    const maintainer = await server.request('GET', branchesPath(s.project), { token: s.maintainer.token });
    expect((maintainer.body as Json[]).every((b) => b.can_push === true)).toBe(true);
    const reporter = await server.request('GET', branchesPath(s.project), { token: s.reporter.token });
    expect((reporter.body as Json[]).some((b) => b.can_push === true)).toBe(false);
  });

  it('paginates with the headers and links', async () => {
    const page = await server.request('GET', `${branchesPath(s.project)}?per_page=2&page=2`, {
      token: s.reporter.token,
    });
    expect(names(page.body)).toEqual(['fix-merged', 'main']);
    expect(page.headers.get('x-total')).toBe('5');
    expect(page.headers.get('x-total-pages')).toBe('3');
    expect(page.headers.get('x-page')).toBe('2');
    expect(page.headers.get('x-next-page')).toBe('3');
    expect(page.headers.get('x-prev-page')).toBe('1');
    expect(page.headers.get('link')).toContain(
      `<${server.api}${branchesPath(s.project)}?page=3&per_page=2>; rel="next"`,
    );
  });

  it.each([
    ['fix', ['Fix', 'fix-merged', 'prefix']],
    ['FIX', ['Fix', 'fix-merged', 'prefix']],
    ['fix-merged', ['fix-merged']],
    ['^fix', ['Fix', 'fix-merged']],
    ['fix$', ['Fix', 'prefix']],
    ['^f*n$', ['feature/login']],
    ['^main$', ['main']],
    ['nothing', []],
  ])('search=%s', async (search, expected) => {
    const result = await server.request(
      'GET',
      `${branchesPath(s.project)}?search=${encodeURIComponent(search)}`,
    );
    expect(names(result.body)).toEqual(expected);
  });

  it('puts an exact match first', async () => {
    await setRef(s.project, 'a-prefix', old);
    await setRef(s.project, 'pre', old);
    try {
      const result = await server.request('GET', `${branchesPath(s.project)}?search=pre`);
      expect(names(result.body)).toEqual(['pre', 'a-prefix', 'prefix']);
    } finally {
      await gitText(['update-ref', '-d', 'refs/heads/a-prefix'], { gitDir: repositoryOf(s.project) });
      await gitText(['update-ref', '-d', 'refs/heads/pre'], { gitDir: repositoryOf(s.project) });
    }
  });

  it('sorts by the head commit date', async () => {
    // fix-merged and prefix share the oldest commit: the name breaks the tie.
    const asc = await server.request('GET', `${branchesPath(s.project)}?sort=updated_asc`);
    expect(names(asc.body).slice(0, 3)).toEqual(['fix-merged', 'prefix', 'feature/login']);
    const desc = await server.request('GET', `${branchesPath(s.project)}?sort=updated_desc`);
    expect(names(desc.body).slice(-3)).toEqual(['feature/login', 'fix-merged', 'prefix']);
  });

  it.each([
    ['^fix', ['fix-merged']],
    ['^[A-Z]', ['Fix']],
    ['(login|main)$', ['feature/login', 'main']],
    ['^feature/\\w+$', ['feature/login']],
  ])('regex=%s', async (regex, expected) => {
    const result = await server.request(
      'GET',
      `${branchesPath(s.project)}?regex=${encodeURIComponent(regex)}`,
    );
    expect(result.status).toBe(200);
    expect(names(result.body)).toEqual(expected);
  });

  it.each(['(', 'a(?=b)', '(a)\\1', '^(a+)+$[', '[z-a]'])('regex=%s is invalid', async (regex) => {
    const result = await server.request(
      'GET',
      `${branchesPath(s.project)}?regex=${encodeURIComponent(regex)}`,
    );
    expect(result.status).toBe(400);
    expect(result.body).toEqual({ message: 'Regex is invalid' });
  });

  it('survives an expression that backtracks forever', async () => {
    await setRef(s.project, `${'a'.repeat(60)}!`, old);
    try {
      const result = await server.request(
        'GET',
        `${branchesPath(s.project)}?regex=${encodeURIComponent('^(a|a)+$')}`,
      );
      expect([200, 400]).toContain(result.status);
    } finally {
      await gitText(['update-ref', '-d', `refs/heads/${'a'.repeat(60)}!`], {
        gitDir: repositoryOf(s.project),
      });
    }
  });

  it('combines search and regex', async () => {
    const result = await server.request(
      'GET',
      `${branchesPath(s.project)}?search=fix&regex=${encodeURIComponent('^p')}`,
    );
    expect(names(result.body)).toEqual(['prefix']);
  });

  it('gets one branch by its encoded name, and answers HEAD', async () => {
    const one = await server.request('GET', `${branchesPath(s.project)}/feature%2Flogin`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ name: 'feature/login', protected: true, commit: { id: feature } });
    const byPath = await server.request(
      'GET',
      `/projects/${encodeURIComponent(`${s.owner.user.username}/${s.project.path}`)}/repository/branches/main`,
      { token: s.maintainer.token },
    );
    expect(byPath.body).toMatchObject({ name: 'main', default: true, can_push: true, merged: false });
    const head = await fetch(`${server.api}${branchesPath(s.project)}/main`, { method: 'HEAD' });
    expect(head.status).toBe(204);
    expect(await head.text()).toBe('');
    const missingHead = await fetch(`${server.api}${branchesPath(s.project)}/nope`, { method: 'HEAD' });
    expect(missingHead.status).toBe(404);
  });

  it.each(['nope', 'feature', 'main^', 'main~1', 'HEAD', '*', 'feature%2F*'])(
    'answers 404 for the branch %s',
    async (name) => {
      const result = await server.request(
        'GET',
        `${branchesPath(s.project)}/${name.includes('%') ? name : encodeURIComponent(name)}`,
      );
      expect(result.status).toBe(404);
      expect(result.body).toEqual({ message: '404 Branch Not Found' });
    },
  );
});

describe('who may read branches', () => {
  it.each([
    ['anonymous', 404, null, { message: '404 Project Not Found' }],
    ['an outsider', 404, 'outsider', { message: '404 Project Not Found' }],
    ['a Guest', 403, 'guest', { message: '403 Forbidden' }],
    ['a Reporter', 200, 'reporter', null],
  ] as const)('a private project, %s: %i', async (_who, status, key, body) => {
    const s = await setup('private');
    const token =
      key === null
        ? undefined
        : key === 'outsider'
          ? (await server.factories.user()).token
          : (s[key] as TestUser).token;
    const result = await server.request('GET', branchesPath(s.project), { token });
    expect(result.status).toBe(status);
    if (body) expect(result.body).toEqual(body);
    const one = await server.request('GET', `${branchesPath(s.project)}/main`, { token });
    expect(one.status).toBe(status);
  });
});

describe('creating branches', () => {
  // Refusals change nothing, so they share one project.
  let refusals: Awaited<ReturnType<typeof setup>>;
  beforeAll(async () => {
    refusals = await setup();
  });

  it('creates a branch from a branch, a tag or a SHA, recording a push event', async () => {
    const s = await setup();
    const created = await server.request('POST', branchesPath(s.project), {
      token: s.developer.token,
      json: { branch: 'feature/new', ref: 'main' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'feature/new',
      commit: { id: s.main },
      merged: false,
      protected: false,
      default: false,
      can_push: true,
    });
    expect(await headOf(s.project, 'feature/new')).toBe(s.main);
    const events = await server.dataSource.query(
      'SELECT ref, before_sha, after_sha, user_id, via FROM push_events WHERE project_id = $1',
      [s.project.id],
    );
    expect(events).toEqual([
      {
        ref: 'refs/heads/feature/new',
        before_sha: ZERO,
        after_sha: s.main,
        user_id: s.developer.user.id,
        via: 'api',
      },
    ]);

    await gitText(['tag', 'v1', s.main], { gitDir: repositoryOf(s.project) });
    const fromTag = await server.request('POST', branchesPath(s.project), {
      token: s.developer.token,
      form: { branch: 'from-tag', ref: 'v1' },
    });
    expect(fromTag.status).toBe(201);
    const fromSha = await server.request(
      'POST',
      `${branchesPath(s.project)}?branch=from-sha&ref=${s.main.slice(0, 10)}`,
      { token: s.developer.token, json: {} },
    );
    expect(fromSha.status).toBe(201);
    expect(fromSha.body).toMatchObject({ name: 'from-sha', commit: { id: s.main } });
  });

  it.each([
    ['a name git refuses', { branch: 'bad..name', ref: 'main' }, 'Branch name is invalid'],
    ['a space', { branch: 'with space', ref: 'main' }, 'Branch name is invalid'],
    ['HEAD', { branch: 'HEAD', ref: 'main' }, 'Branch name is invalid'],
    ['a leading dash', { branch: '-x', ref: 'main' }, 'Branch name is invalid'],
    ['a full ref name', { branch: 'refs/heads/x', ref: 'main' }, 'Branch name is invalid'],
    ['an existing branch', { branch: 'main', ref: 'main' }, 'Branch already exists'],
    [
      'a missing ref',
      { branch: 'x', ref: 'nope' },
      "Failed to create branch 'x': invalid reference name 'nope'",
    ],
    [
      'an option as ref',
      { branch: 'x', ref: '--all' },
      "Failed to create branch 'x': invalid reference name '--all'",
    ],
    [
      'a clash with a branch path',
      { branch: 'main/sub', ref: 'main' },
      "Failed to create branch 'main/sub': Branch name conflicts with existing branch hierarchy.",
    ],
    [
      'a hexadecimal name',
      { branch: 'a'.repeat(40), ref: 'main' },
      'You cannot create a branch with a 40-character hexadecimal branch name.',
    ],
  ])('refuses %s with 400', async (_what, json, message) => {
    const s = refusals;
    const result = await server.request('POST', branchesPath(s.project), { token: s.developer.token, json });
    expect(result.status).toBe(400);
    expect(result.body).toEqual({ message });
    expect(await branchNames(s.project)).toEqual(['main']);
  });

  it.each([
    [{}, 'branch is missing, ref is missing'],
    [{ branch: 'x' }, 'ref is missing'],
    [{ branch: '', ref: 'main' }, 'branch is empty'],
    [{ branch: ' ', ref: '' }, 'branch is empty, ref is empty'],
  ])('answers 400 for the parameters %j', async (json, error) => {
    const s = refusals;
    const result = await server.request('POST', branchesPath(s.project), { token: s.developer.token, json });
    expect(result.status).toBe(400);
    expect(result.body).toEqual({ error });
  });

  it('applies protected branch rules to the new name', async () => {
    const s = await setup();
    await protect(s.project, 'release/*', { push: Maintainer, merge: Maintainer });
    const refused = await server.request('POST', branchesPath(s.project), {
      token: s.developer.token,
      json: { branch: 'release/1.0', ref: 'main' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      message: 'You are not allowed to create protected branches on this project.',
    });
    const allowed = await server.request('POST', branchesPath(s.project), {
      token: s.maintainer.token,
      json: { branch: 'release/1.0', ref: 'main' },
    });
    expect(allowed.status).toBe(201);
    expect(allowed.body).toMatchObject({ protected: true, can_push: true });
  });

  it.each([
    ['a Reporter', 'reporter', 403],
    ['a Guest', 'guest', 403],
  ] as const)('refuses %s', async (_who, key, status) => {
    const s = refusals;
    const result = await server.request('POST', branchesPath(s.project), {
      token: s[key].token,
      json: { branch: 'x', ref: 'main' },
    });
    expect(result.status).toBe(status);
    expect(result.body).toEqual({ message: '403 Forbidden' });
  });

  it('refuses writes to an archived project', async () => {
    const s = await setup();
    await server.request('POST', `/projects/${s.project.id}/archive`, { token: s.owner.token });
    const result = await server.request('POST', branchesPath(s.project), {
      token: s.maintainer.token,
      json: { branch: 'x', ref: 'main' },
    });
    expect(result.status).toBe(403);
  });

  it('first gives an empty repository its default branch with an empty README', async () => {
    const owner = await server.factories.user();
    const project = await server.factories.project({ owner });
    const created = await server.request('POST', branchesPath(project), {
      token: owner.token,
      json: { branch: 'topic', ref: 'main' },
    });
    expect(created.status).toBe(201);
    expect(await branchNames(project)).toEqual(['main', 'topic']);
    const readme = await gitText(['cat-file', '-p', 'main:README.md'], { gitDir: repositoryOf(project) });
    expect(readme).toBe('');
    expect(created.body).toMatchObject({ commit: { title: 'Add README.md', author_name: owner.user.name } });
    const shown = await server.request('GET', `/projects/${project.id}`, { token: owner.token });
    expect(shown.body).toMatchObject({ empty_repo: false });
  });
});

describe('deleting branches', () => {
  it('lets a Developer delete an unprotected branch, recording the push', async () => {
    const s = await setup();
    await setRef(s.project, 'topic/one', s.main);
    const deleted = await server.request('DELETE', `${branchesPath(s.project)}/topic%2Fone`, {
      token: s.developer.token,
    });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(await branchNames(s.project)).toEqual(['main']);
    const events = await server.dataSource.query(
      'SELECT ref, before_sha, after_sha FROM push_events WHERE project_id = $1',
      [s.project.id],
    );
    expect(events).toEqual([{ ref: 'refs/heads/topic/one', before_sha: s.main, after_sha: ZERO }]);
    const again = await server.request('DELETE', `${branchesPath(s.project)}/topic%2Fone`, {
      token: s.developer.token,
    });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: '404 Branch Not Found' });
  });

  it('never deletes the default branch', async () => {
    const s = await setup();
    const result = await server.request('DELETE', `${branchesPath(s.project)}/main`, {
      token: s.owner.token,
    });
    expect(result.status).toBe(400);
    expect(result.body).toEqual({ message: 'The default branch of a project cannot be deleted.' });
  });

  it('lets Maintainers, not Developers, delete a protected branch', async () => {
    const s = await setup();
    await setRef(s.project, 'stable', s.main);
    await protect(s.project, 'stable', { push: Developer, merge: Developer });
    const refused = await server.request('DELETE', `${branchesPath(s.project)}/stable`, {
      token: s.developer.token,
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      message:
        'You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.',
    });
    const deleted = await server.request('DELETE', `${branchesPath(s.project)}/stable`, {
      token: s.maintainer.token,
    });
    expect(deleted.status).toBe(204);
  });

  it.each([
    ['a Reporter', 'reporter', 403],
    ['an outsider', 'outsider', 404],
  ] as const)('refuses %s', async (_who, key, status) => {
    const s = await setup();
    await setRef(s.project, 'topic', s.main);
    const token = key === 'outsider' ? (await server.factories.user()).token : s[key].token;
    const result = await server.request('DELETE', `${branchesPath(s.project)}/topic`, { token });
    expect(result.status).toBe(status);
    expect(await branchNames(s.project)).toEqual(['main', 'topic']);
  });
});

describe('deleting merged branches', () => {
  it('deletes what main contains, keeping main, its twins, protected and unmerged branches', async () => {
    const s = await setup();
    const ahead = await commitOn(s.project, s.main, 'ahead.txt');
    const next = await commitOn(s.project, s.main, 'next.txt');
    await setRef(s.project, 'main', next);
    await setRef(s.project, 'old-topic', s.main);
    await setRef(s.project, 'twin', next);
    await setRef(s.project, 'unmerged', ahead);
    await setRef(s.project, 'keep/old', s.main);
    await protect(s.project, 'keep/*', { push: Maintainer, merge: Maintainer });

    const reporter = await server.request('DELETE', `/projects/${s.project.id}/repository/merged_branches`, {
      token: s.reporter.token,
    });
    expect(reporter.status).toBe(403);
    const result = await server.request('DELETE', `/projects/${s.project.id}/repository/merged_branches`, {
      token: s.developer.token,
    });
    expect(result.status).toBe(202);
    expect(result.body).toEqual({ message: '202 Accepted' });
    expect(await branchNames(s.project)).toEqual(['keep/old', 'main', 'twin', 'unmerged']);
  });

  it('deletes nothing in an empty repository', async () => {
    const owner = await server.factories.user();
    const project = await server.factories.project({ owner });
    const result = await server.request('DELETE', `/projects/${project.id}/repository/merged_branches`, {
      token: owner.token,
    });
    expect(result.status).toBe(202);
  });
});

/** The git layer's guarantees seen from the API: user input never reaches git as an option, and fixes found by use. */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { git, gitText } from '../../src/git/git.js';
import { ZERO_SHA } from '../../src/git/ref-changes.js';
import { GitRepository, openGitRepository } from '../../src/git/repository.js';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { writeCommit } from '../helpers/git-plumbing.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

describe('a branch created right after the repository was initialised', () => {
  it.each([
    ['with a README', { initialize_with_readme: 'true' }],
    ['empty (the branch request writes the first commit)', {}],
  ])('%s: leaves the default branch and its protection, and the branch can be deleted', async (_, init) => {
    const owner = await server.factories.user();
    const created = await server.request('POST', '/projects', {
      token: owner.token,
      form: { name: 'fresh', ...init },
    });
    expect(created.status).toBe(201);
    const id = (created.body as Json).id as number;
    const branch = await server.request('POST', `/projects/${id}/repository/branches`, {
      token: owner.token,
      form: { branch: 'my.branch.name', ref: 'main' },
    });
    expect(branch.status).toBe(201);
    expect(branch.body).toMatchObject({ name: 'my.branch.name', default: false, protected: false });
    const project = await server.request('GET', `/projects/${id}`, { token: owner.token });
    expect(project.body).toMatchObject({ default_branch: 'main', empty_repo: false });
    const protectedBranches = await server.request('GET', `/projects/${id}/protected_branches`, {
      token: owner.token,
    });
    expect((protectedBranches.body as Json[]).map((rule) => rule.name)).toEqual(['main']);
    const deleted = await server.request('DELETE', `/projects/${id}/repository/branches/my.branch.name`, {
      token: owner.token,
    });
    expect(deleted.status).toBe(204);
    const main = await server.request('GET', `/projects/${id}/repository/branches/main`, {
      token: owner.token,
    });
    expect(main.body).toMatchObject({ name: 'main', default: true, protected: true });
  });
});

/**
 * Revisions and paths that git would read as options if they reached its command line in front of
 * `--end-of-options` or `--`. Each endpoint answers as for any name it cannot find, and git never
 * acts on them (`--output=` would write a file).
 */
describe('user input that looks like a git option', () => {
  const trap = path.join(os.tmpdir(), `forge-option-${crypto.randomBytes(6).toString('hex')}`);
  const inputs = [`--output=${trap}`, '-h', '--all'];
  let owner: TestUser;
  let project: Project;
  let base: string;

  beforeAll(async () => {
    owner = await server.factories.user();
    project = await server.factories.project({ owner, initialize_with_readme: true });
    base = `/projects/${project.id}/repository`;
  });

  afterAll(() => {
    expect(fs.existsSync(trap)).toBe(false);
  });

  const get = (url: string) => server.request('GET', `${base}${url}`, { token: owner.token });
  /** Archives count against a small per-user rate limit: each gets a new member. */
  const archive = async (url: string) => {
    const member = await server.factories.user();
    await server.factories.member(project, member.user, AccessLevel.Developer);
    return server.request('GET', `${base}${url}`, { token: member.token });
  };
  const q = encodeURIComponent;

  describe.each(inputs)('%s', (input) => {
    it.each([
      ['tree ref', () => get(`/tree?ref=${q(input)}`), 404, { message: '404 Tree Not Found' }],
      ['tree path', () => get(`/tree?path=${q(input)}`), 404, { message: '404 Tree Not Found' }],
      [
        'commits ref_name',
        () => get(`/commits?ref_name=${q(input)}`),
        400,
        { message: 'ref_name is invalid' },
      ],
      ['commits path', () => get(`/commits?path=${q(input)}`), 200, []],
      ['commit', () => get(`/commits/${q(input)}`), 404, { message: '404 Commit Not Found' }],
      ['file path', () => get(`/files/${q(input)}?ref=main`), 404, { message: '404 File Not Found' }],
      ['file ref', () => get(`/files/README.md?ref=${q(input)}`), 404, { message: '404 Commit Not Found' }],
      [
        'raw file ref',
        () => get(`/files/README.md/raw?ref=${q(input)}`),
        404,
        { message: '404 Commit Not Found' },
      ],
      [
        'blame ref',
        () => get(`/files/README.md/blame?ref=${q(input)}`),
        404,
        { message: '404 Commit Not Found' },
      ],
      ['blob', () => get(`/blobs/${q(input)}`), 404, { message: '404 Blob Not Found' }],
      ['raw blob', () => get(`/blobs/${q(input)}/raw`), 404, { message: '404 Blob Not Found' }],
      ['compare from', () => get(`/compare?from=${q(input)}&to=main`), 404, { message: '404 Ref Not Found' }],
      ['compare to', () => get(`/compare?from=main&to=${q(input)}`), 404, { message: '404 Ref Not Found' }],
      ['archive sha', () => archive(`/archive?sha=${q(input)}`), 404, { message: '404 File Not Found' }],
      ['archive path', () => archive(`/archive?path=${q(input)}`), 404, { message: '404 File Not Found' }],
      ['contributors ref', () => get(`/contributors?ref=${q(input)}`), 404, { message: '404 Not Found' }],
      [
        'merge base',
        () => get(`/merge_base?refs[]=main&refs[]=${q(input)}`),
        400,
        { message: `Could not find ref: ${input}` },
      ],
      [
        'branch create ref',
        () =>
          server.request('POST', `${base}/branches`, {
            token: owner.token,
            json: { branch: 'b', ref: input },
          }),
        400,
        { message: `Failed to create branch 'b': invalid reference name '${input}'` },
      ],
      [
        'tag create ref',
        () =>
          server.request('POST', `${base}/tags`, { token: owner.token, json: { tag_name: 't', ref: input } }),
        405,
        { message: `Target ${input} is invalid` },
      ],
    ] as const)('%s', async (_, call, status, body) => {
      const response = await call();
      expect(response.status).toBe(status);
      expect(response.body).toEqual(body);
    });
  });
});

/** The layer itself refuses or fences option-like input, whatever a service checked before. */
describe('GitRepository with option-like revisions and paths', () => {
  const trap = path.join(os.tmpdir(), `forge-option-${crypto.randomBytes(6).toString('hex')}`);
  let repository: GitRepository;

  beforeAll(async () => {
    const project = await server.factories.project({ initialize_with_readme: true });
    repository = openGitRepository(server.services.storage.diskPath('default', project.id));
  });

  it.each([`--output=${trap}`, '-h', '--all'])('%s', async (input) => {
    expect(await repository.resolveCommit(input)).toBeNull();
    expect(await repository.object(input)).toBeNull();
    expect(await repository.lastCommitForPath(input, 'README.md')).toBeNull();
    expect(await repository.log({ revisions: ['main'], paths: [input] })).toEqual([]);
    await expect(repository.log({ revisions: [input] })).rejects.toThrow(/bad revision/);
    expect(await repository.branch(input)).toBeNull();
    expect((await repository.tags([input])).size).toBe(0);
    const main = (await repository.resolveCommit('main'))!;
    expect(await repository.treeEntry(main, '', input)).toBeNull();
    expect(await repository.treeEntry(main, input, 'README.md')).toBeNull();
    expect(fs.existsSync(trap)).toBe(false);
  });
});

describe('repository state after a push', () => {
  it('is read again when a concurrent push moved refs after it was read', async () => {
    const owner = await server.factories.user();
    const project = await server.factories.project({ owner, initialize_with_readme: true });
    const gitDir = server.services.storage.diskPath('default', project.id);
    const main = await gitText(['rev-parse', 'refs/heads/main'], { gitDir });
    const tree = await gitText(['rev-parse', 'main^{tree}'], { gitDir });
    const next = await gitText(['commit-tree', tree, '-p', main, '-m', 'next'], {
      gitDir,
      env: {
        GIT_AUTHOR_NAME: 'A',
        GIT_AUTHOR_EMAIL: 'a@x',
        GIT_COMMITTER_NAME: 'A',
        GIT_COMMITTER_EMAIL: 'a@x',
      },
    });
    await gitText(['update-ref', 'refs/heads/topic', main], { gitDir });
    // Another push lands on main right after this one read the repository.
    const original = GitRepository.prototype.state;
    const spy = vi.spyOn(GitRepository.prototype, 'state').mockImplementationOnce(async function (
      this: GitRepository,
      branch,
    ) {
      const reading = await original.call(this, branch);
      await gitText(['update-ref', 'refs/heads/main', next, main], { gitDir });
      return reading;
    });
    try {
      await server.services.repositories.recordPush(
        { id: project.id, defaultBranch: 'main', repositoryStorage: 'default', repositoryEmpty: false },
        owner.user.id,
        [{ ref: 'refs/heads/topic', oldSha: ZERO_SHA, newSha: main }],
        'api',
      );
    } finally {
      spy.mockRestore();
    }
    const [stats] = await server.dataSource.query(
      'SELECT commit_count FROM project_statistics WHERE project_id = $1',
      [project.id],
    );
    expect(Number(stats.commit_count)).toBe(2);
  });
});

describe('GitRepository.fetchCommit', () => {
  it('brings a commit that no ref names any more from another repository, by its id only', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-fetch-commit-'));
    try {
      const [sourceDir, targetDir] = [path.join(dir, 'source.git'), path.join(dir, 'target.git')];
      await gitText(['init', '-q', '--bare', sourceDir]);
      await gitText(['init', '-q', '--bare', targetDir]);
      const env = {
        GIT_AUTHOR_NAME: 'A',
        GIT_AUTHOR_EMAIL: 'a@example.com',
        GIT_COMMITTER_NAME: 'A',
        GIT_COMMITTER_EMAIL: 'a@example.com',
      };
      const tree = await gitText(['mktree'], { gitDir: sourceDir, input: '' });
      const first = await gitText(['commit-tree', '-m', 'first', tree], { gitDir: sourceDir, env });
      const second = await gitText(['commit-tree', '-p', first, '-m', 'second', tree], {
        gitDir: sourceDir,
        env,
      });
      // The branch moved on: only `first` is named by a ref, `second` by nothing.
      await gitText(['update-ref', 'refs/heads/feature', first], { gitDir: sourceDir });
      const target = openGitRepository(targetDir);
      expect(await target.resolveCommit(second)).toBeNull();
      await target.fetchCommit(sourceDir, second);
      expect(await target.resolveCommit(second)).toBe(second);
      expect(await target.isAncestor(first, second)).toBe(true);
      // Fetched objects name no ref of the target.
      expect(await target.refs()).toEqual([]);
      await expect(target.fetchCommit(sourceDir, 'e'.repeat(40))).rejects.toThrow(/git fetch failed/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('GitRepository.isAncestor', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-ancestry-'));
  const commits: Record<string, string> = {};
  beforeAll(async () => {
    await gitText(['init', '-q', '--bare', dir]);
    const commit = (name: string, parents: string[]) =>
      writeCommit(dir, {
        parents,
        base: null,
        files: { [name]: name },
        message: `${name}\n`,
        date: '2026-01-01T00:00:00Z',
      });
    // a ← b ← c ← m (merge of c and d), a ← d; x is a root of its own.
    commits.a = await commit('a', []);
    commits.b = await commit('b', [commits.a]);
    commits.c = await commit('c', [commits.b]);
    commits.d = await commit('d', [commits.a]);
    commits.m = await commit('m', [commits.c, commits.d]);
    commits.x = await commit('x', []);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['a', 'a'],
    ['b', 'c'],
    ['a', 'c'],
    ['c', 'b'],
    ['d', 'm'],
    ['c', 'm'],
    ['a', 'm'],
    ['d', 'c'],
    ['m', 'd'],
    ['x', 'a'],
    ['a', 'x'],
  ])('answers for %s and %s as merge-base --is-ancestor does', async (ancestor, descendant) => {
    const expected = await git(['merge-base', '--is-ancestor', commits[ancestor], commits[descendant]], {
      gitDir: dir,
      okCodes: [1],
    });
    expect(await openGitRepository(dir).isAncestor(commits[ancestor], commits[descendant])).toBe(
      expected.code === 0,
    );
  });
});

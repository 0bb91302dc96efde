/** Repository files: reading one file at a ref, its raw bytes, and one-file commits, on real repositories. */
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { gitText } from '../../src/git/git.js';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;
let counter = 0;

const projectWithReadme = (owner: TestUser, attrs: Json = {}): Promise<Project> =>
  server.factories.projectWithReadme({ owner, path: `files-${++counter}`, ...attrs });

const gitDir = (project: Project) => server.services.storage.diskPath('default', project.id);
const revParse = (project: Project, rev: string) => gitText(['rev-parse', rev], { gitDir: gitDir(project) });
const filesUrl = (project: Project | number, file: string) =>
  `/projects/${typeof project === 'number' ? project : project.id}/repository/files/${encodeURIComponent(file)}`;
const sha256 = (data: Buffer | string) => crypto.createHash('sha256').update(data).digest('hex');

/** One project, with `lib/x.rb`, shared by the tests whose requests are refused and change nothing. */
let refusals: Promise<{ owner: TestUser; project: Project }> | undefined;
const refusalProject = () =>
  (refusals ??= (async () => {
    const owner = await server.factories.user();
    const project = await projectWithReadme(owner);
    const setup = await server.request('POST', filesUrl(project, 'lib/x.rb'), {
      token: owner.token,
      json: { branch: 'main', commit_message: 'x', content: 'x' },
    });
    expect(setup.status).toBe(201);
    return { owner, project };
  })());

const commit = (token: string, project: Project, json: Json) =>
  server.request('POST', `/projects/${project.id}/repository/commits`, { token, json });

describe('reading files', () => {
  let owner: TestUser;
  let project: Project;
  let privateProject: Project;
  const binary = Buffer.concat([Buffer.from('GIF89a'), Buffer.from([0, 1, 2, 255]), crypto.randomBytes(64)]);
  const big = crypto.randomBytes(3 * 1024 * 1024);
  let changedAt: string;
  let head: string;

  beforeAll(async () => {
    owner = await server.factories.user();
    project = await projectWithReadme(owner, { visibility: 'public' });
    privateProject = await projectWithReadme(owner);
    const first = await commit(owner.token, project, {
      branch: 'main',
      commit_message: 'files',
      actions: [
        { action: 'create', file_path: 'lib/parser.rb', content: 'class Parser; end\n' },
        { action: 'create', file_path: 'bin/run', content: '#!/bin/sh\n', execute_filemode: true },
        {
          action: 'create',
          file_path: 'img/logo.gif',
          content: binary.toString('base64'),
          encoding: 'base64',
        },
        { action: 'create', file_path: 'big.bin', content: big.toString('base64'), encoding: 'base64' },
        { action: 'create', file_path: 'docs/naïve café.md', content: 'unicode\n' },
      ],
    });
    expect(first.status).toBe(201);
    changedAt = (first.body as { id: string }).id;
    const second = await commit(owner.token, project, {
      branch: 'main',
      commit_message: 'unrelated',
      actions: [{ action: 'create', file_path: 'other.txt', content: 'x' }],
    });
    head = (second.body as { id: string }).id;
  });

  it('returns a file with its content and metadata, also in X-Gitlab-* headers', async () => {
    const response = await server.request('GET', `${filesUrl(project, 'lib/parser.rb')}?ref=main`, {
      token: owner.token,
    });
    expect(response.status).toBe(200);
    const blobId = await revParse(project, 'main:lib/parser.rb');
    const expected = {
      file_name: 'parser.rb',
      file_path: 'lib/parser.rb',
      size: 18,
      encoding: 'base64',
      content: Buffer.from('class Parser; end\n').toString('base64'),
      content_sha256: sha256('class Parser; end\n'),
      ref: 'main',
      blob_id: blobId,
      commit_id: head,
      last_commit_id: changedAt,
      execute_filemode: false,
    };
    expect(response.body).toEqual(expected);
    expect(
      Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('x-gitlab-'))),
    ).toEqual({
      'x-gitlab-file-name': 'parser.rb',
      'x-gitlab-file-path': 'lib/parser.rb',
      'x-gitlab-size': '18',
      'x-gitlab-encoding': 'base64',
      'x-gitlab-content-sha256': expected.content_sha256,
      'x-gitlab-ref': 'main',
      'x-gitlab-blob-id': blobId,
      'x-gitlab-commit-id': head,
      'x-gitlab-last-commit-id': changedAt,
      'x-gitlab-execute-filemode': 'false',
    });
  });

  it('answers HEAD with the headers and no body, anonymously on a public project', async () => {
    const response = await server.request('HEAD', `${filesUrl(project, 'bin/run')}?ref=${changedAt}`);
    expect(response.status).toBe(200);
    expect(response.text).toBe('');
    expect(response.headers.get('x-gitlab-execute-filemode')).toBe('true');
    expect(response.headers.get('x-gitlab-commit-id')).toBe(changedAt);
    const missing = await server.request('HEAD', `${filesUrl(project, 'nope.txt')}?ref=main`);
    expect(missing.status).toBe(404);
  });

  it('reads binary content, names with spaces and accents, and any ref', async () => {
    const gif = await server.request('GET', `${filesUrl(project, 'img/logo.gif')}?ref=${head.slice(0, 10)}`);
    expect(Buffer.from((gif.body as { content: string }).content, 'base64').equals(binary)).toBe(true);
    const unicode = await server.request('GET', `${filesUrl(project, 'docs/naïve café.md')}?ref=main`);
    expect(unicode.status).toBe(200);
    expect(unicode.body).toMatchObject({ file_name: 'naïve café.md', file_path: 'docs/naïve café.md' });
    expect(unicode.headers.get('x-gitlab-file-name')).toBe('na%C3%AFve caf%C3%A9.md');
    expect(decodeURIComponent(unicode.headers.get('x-gitlab-file-path')!)).toBe('docs/naïve café.md');
  });

  it.each([
    ['lib/parser.rb', '', 400, { error: 'ref is missing' }],
    ['lib/parser.rb', '?ref=', 400, { error: 'ref is empty' }],
    ['lib/parser.rb', '?ref=nope', 404, { message: '404 Commit Not Found' }],
    ['lib/missing.rb', '?ref=main', 404, { message: '404 File Not Found' }],
    ['lib', '?ref=main', 404, { message: '404 File Not Found' }],
    ['lib/parser.rb/x', '?ref=main', 404, { message: '404 File Not Found' }],
    ['../etc/passwd', '?ref=main', 400, { error: 'file_path should be a valid file path' }],
    ['/etc/passwd', '?ref=main', 400, { error: 'file_path should be a valid file path' }],
  ])('GET %s%s answers %i', async (file, query, status, body) => {
    const response = await server.request('GET', `${filesUrl(project, file)}${query}`, {
      token: owner.token,
    });
    expect(response.status).toBe(status);
    expect(response.body).toEqual(body);
  });

  it('serves raw bytes with the type, disposition and no-cache headers', async () => {
    const text = await fetch(`${server.api}${filesUrl(project, 'lib/parser.rb')}/raw?ref=main`);
    expect(text.status).toBe(200);
    expect(text.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(text.headers.get('content-disposition')).toBe(
      `inline; filename="parser.rb"; filename*=UTF-8''parser.rb`,
    );
    expect(text.headers.get('cache-control')).toBe('max-age=0, private, must-revalidate, no-store, no-cache');
    expect(text.headers.get('x-gitlab-last-commit-id')).toBe(changedAt);
    expect(await text.text()).toBe('class Parser; end\n');

    // Without ref: the default branch.
    const gif = await fetch(`${server.api}${filesUrl(project, 'img/logo.gif')}/raw`);
    expect(gif.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await gif.arrayBuffer()).equals(binary)).toBe(true);

    const unicode = await fetch(`${server.api}${filesUrl(project, 'docs/naïve café.md')}/raw`);
    expect(unicode.headers.get('content-disposition')).toBe(
      `inline; filename="na?ve caf?.md"; filename*=UTF-8''na%C3%AFve%20caf%C3%A9.md`,
    );
  });

  it('streams a large raw file exactly', async () => {
    const response = await fetch(`${server.api}${filesUrl(project, 'big.bin')}/raw?ref=main`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String(big.length));
    expect(response.headers.get('x-gitlab-content-sha256')).toBe(sha256(big));
    const received = Buffer.from(await response.arrayBuffer());
    expect(received.length).toBe(big.length);
    expect(received.equals(big)).toBe(true);
  });

  it('answers raw errors as JSON', async () => {
    const missing = await server.request('GET', `${filesUrl(project, 'nope')}/raw`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/json');
    expect(missing.body).toEqual({ message: '404 File Not Found' });
    const badRef = await server.request('GET', `${filesUrl(project, 'lib/parser.rb')}/raw?ref=nope`);
    expect(badRef.body).toEqual({ message: '404 Commit Not Found' });
    const empty = await server.factories.project({ owner, path: `empty-${++counter}`, visibility: 'public' });
    const noBranch = await server.request('GET', `${filesUrl(empty, 'README.md')}/raw`);
    expect(noBranch.status).toBe(404);
    expect(noBranch.body).toEqual({ message: '404 Commit Not Found' });
  });

  it.each([
    ['an outsider', null, 404],
    ['a Guest', AccessLevel.Guest, 403],
    ['a Reporter', AccessLevel.Reporter, 200],
  ])('lets %s of a private project read files: %i', async (_who, level, status) => {
    const user = await server.factories.user();
    if (level !== null) await server.factories.member(privateProject, user.user, level);
    const json = await server.request('GET', `${filesUrl(privateProject, 'README.md')}?ref=main`, {
      token: user.token,
    });
    expect(json.status).toBe(status);
    const raw = await server.request('GET', `${filesUrl(privateProject, 'README.md')}/raw`, {
      token: user.token,
    });
    expect(raw.status).toBe(status);
    const anonymous = await server.request('GET', `${filesUrl(privateProject, 'README.md')}?ref=main`);
    expect(anonymous.status).toBe(404);
  });
});

describe('blame', () => {
  let owner: TestUser;
  let project: Project;
  let first: string;
  let second: string;
  const url = () => `${filesUrl(project, 'poem.txt')}/blame`;

  beforeAll(async () => {
    owner = await server.factories.user();
    project = await projectWithReadme(owner, { visibility: 'public' });
    const one = await commit(owner.token, project, {
      branch: 'main',
      commit_message: 'Write the poem',
      actions: [{ action: 'create', file_path: 'poem.txt', content: 'one\ntwo\nthree\n' }],
    });
    first = (one.body as { id: string }).id;
    const two = await commit(owner.token, project, {
      branch: 'main',
      commit_message: 'Revise the poem',
      author_name: 'Grace Hopper',
      author_email: 'grace@example.com',
      actions: [{ action: 'update', file_path: 'poem.txt', content: 'one\nTWO\nthree\nfour' }],
    });
    second = (two.body as { id: string }).id;
  });

  it('groups lines into ranges by the commit that last changed them', async () => {
    const response = await server.request('GET', `${url()}?ref=main`);
    expect(response.status).toBe(200);
    const ranges = response.body as Array<{ commit: Json; lines: string[] }>;
    expect(ranges.map((r) => [r.commit.id, r.lines])).toEqual([
      [first, ['one']],
      [second, ['TWO']],
      [first, ['three']],
      [second, ['four']],
    ]);
    expect(ranges[1].commit).toMatchObject({ title: 'Revise the poem', author_name: 'Grace Hopper' });
    expect(response.headers.get('x-gitlab-last-commit-id')).toBe(second);
    const older = await server.request('GET', `${url()}?ref=${first}`);
    expect((older.body as Array<{ lines: string[] }>).map((r) => r.lines)).toEqual([['one', 'two', 'three']]);
  });

  it('limits the answer to a range of lines', async () => {
    const response = await server.request('GET', `${url()}?ref=main&range[start]=2&range[end]=3`);
    expect(response.status).toBe(200);
    expect(
      (response.body as Array<{ commit: Json; lines: string[] }>).map((r) => [r.commit.id, r.lines]),
    ).toEqual([
      [second, ['TWO']],
      [first, ['three']],
    ]);
    // An end past the last line stops at the last line.
    const past = await server.request('GET', `${url()}?ref=main&range[start]=3&range[end]=99`);
    expect((past.body as Array<{ lines: string[] }>).map((r) => r.lines)).toEqual([['three'], ['four']]);
  });

  it.each([
    [
      '?ref=main&range[start]=3&range[end]=2',
      400,
      { message: 'range[start] must be less than or equal to range[end]' },
    ],
    ['?ref=main&range[start]=9&range[end]=12', 400, { message: 'range is outside of the file length' }],
    ['?ref=main&range[start]=2', 400, { error: 'range[end] is missing' }],
    ['?ref=main&range[start]=0&range[end]=2', 400, { error: 'range[start] is invalid' }],
    ['', 400, { error: 'ref is missing' }],
    ['?ref=nope', 404, { message: '404 Commit Not Found' }],
  ])('answers %s with %i', async (query, status, body) => {
    const response = await server.request('GET', `${url()}${query}`);
    expect(response.status).toBe(status);
    expect(response.body).toEqual(body);
  });

  it('answers HEAD with the file headers', async () => {
    const response = await server.request('HEAD', `${url()}?ref=main`);
    expect(response.status).toBe(200);
    expect(response.text).toBe('');
    expect(response.headers.get('x-gitlab-file-name')).toBe('poem.txt');
  });
});

describe('writing files', () => {
  it('creates, updates and deletes a file, each as one commit on the branch', async () => {
    const owner = await server.factories.user();
    const project = await projectWithReadme(owner);
    const url = filesUrl(project, 'src/app.py');

    const created = await server.request('POST', url, {
      token: owner.token,
      json: { branch: 'main', commit_message: 'Add app', content: 'print(1)\n' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ file_path: 'src/app.py', branch: 'main' });
    const afterCreate = await revParse(project, 'main');
    expect(await gitText(['log', '-1', '--format=%s|%an|%cn', 'main'], { gitDir: gitDir(project) })).toBe(
      `Add app|${owner.user.name}|${owner.user.name}`,
    );

    const again = await server.request('POST', url, {
      token: owner.token,
      json: { branch: 'main', commit_message: 'Add app', content: 'x' },
    });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ message: 'A file with this name already exists' });

    const stale = await server.request('PUT', url, {
      token: owner.token,
      json: { branch: 'main', commit_message: 'Edit', content: 'print(2)\n', last_commit_id: 'f'.repeat(40) },
    });
    expect(stale.status).toBe(400);
    expect(stale.body).toEqual({
      message: 'You are attempting to update a file that has changed since you started editing it.',
    });

    const updated = await server.request('PUT', url, {
      token: owner.token,
      json: {
        branch: 'main',
        commit_message: 'Edit',
        content: Buffer.from('print(2)\n').toString('base64'),
        encoding: 'base64',
        last_commit_id: afterCreate,
        execute_filemode: true,
        author_name: 'Grace Hopper',
        author_email: 'grace@example.com',
      },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ file_path: 'src/app.py', branch: 'main' });
    const read = await server.request('GET', `${url}?ref=main`, { token: owner.token });
    expect(read.body).toMatchObject({
      execute_filemode: true,
      content: Buffer.from('print(2)\n').toString('base64'),
    });
    expect(await gitText(['log', '-1', '--format=%an <%ae>|%cn', 'main'], { gitDir: gitDir(project) })).toBe(
      `Grace Hopper <grace@example.com>|${owner.user.name}`,
    );

    const staleDelete = await server.request('DELETE', url, {
      token: owner.token,
      json: { branch: 'main', commit_message: 'Remove', last_commit_id: afterCreate },
    });
    expect(staleDelete.status).toBe(400);
    expect(staleDelete.body).toEqual({
      message: 'You are attempting to delete a file that has been previously updated.',
    });

    // python-gitlab sends the parameters of a DELETE in the query string.
    const deleted = await server.request('DELETE', `${url}?branch=main&commit_message=Remove`, {
      token: owner.token,
    });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    const gone = await server.request('GET', `${url}?ref=main`, { token: owner.token });
    expect(gone.status).toBe(404);

    const deletedAgain = await server.request('DELETE', `${url}?branch=main&commit_message=Remove`, {
      token: owner.token,
    });
    expect(deletedAgain.status).toBe(400);
    expect(deletedAgain.body).toEqual({ message: "A file with this name doesn't exist" });
    const updateMissing = await server.request('PUT', url, {
      token: owner.token,
      json: { branch: 'main', commit_message: 'Edit', content: 'x' },
    });
    expect(updateMissing.body).toEqual({ message: "A file with this name doesn't exist" });
  });

  it('takes form fields and creates the first file of an empty repository', async () => {
    const owner = await server.factories.user();
    const project = await server.factories.project({ owner, path: `empty-${++counter}` });
    const response = await server.request('POST', filesUrl(project, 'README.md'), {
      token: owner.token,
      form: { branch: 'main', commit_message: 'First', content: '# hello\n' },
    });
    expect(response.status).toBe(201);
    const raw = await server.request('GET', `${filesUrl(project, 'README.md')}/raw`, { token: owner.token });
    expect(raw.text).toBe('# hello\n');
  });

  it('puts a file on a new branch with start_branch, and needs a branch to start from', async () => {
    const owner = await server.factories.user();
    const project = await projectWithReadme(owner);
    const orphan = await server.request('POST', filesUrl(project, 'a.txt'), {
      token: owner.token,
      json: { branch: 'topic', commit_message: 'x', content: 'a' },
    });
    expect(orphan.status).toBe(400);
    expect(orphan.body).toEqual({ message: 'You can only create or edit files when you are on a branch' });
    const created = await server.request('POST', filesUrl(project, 'a.txt'), {
      token: owner.token,
      json: { branch: 'topic', start_branch: 'main', commit_message: 'x', content: 'a' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ file_path: 'a.txt', branch: 'topic' });
    expect(await revParse(project, 'topic~1')).toBe(await revParse(project, 'main'));
  });

  it.each([
    [{ commit_message: 'x', content: 'a' }, { error: 'branch is missing' }],
    [{ branch: 'main', content: 'a' }, { error: 'commit_message is missing' }],
    [{ branch: 'main', commit_message: 'x' }, { error: 'content is missing' }],
    [{ branch: '', commit_message: 'x', content: 'a' }, { error: 'branch is empty' }],
    [{ branch: 'main', commit_message: '', content: 'a' }, { error: 'commit_message is empty' }],
    [
      { branch: 'main', commit_message: 'x', content: 'a', encoding: 'hex' },
      { error: 'encoding does not have a valid value' },
    ],
  ])('POST with %j answers 400 %j', async (json, body) => {
    const { owner, project } = await refusalProject();
    const response = await server.request('POST', filesUrl(project, 'new.txt'), { token: owner.token, json });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(body);
  });

  it.each([
    ['../escape.txt', { error: 'file_path should be a valid file path' }],
    ['/abs.txt', { error: 'file_path should be a valid file path' }],
    ['.git/config', { message: "invalid path: '.git/config'" }],
    ['GIT~1/config', { message: "invalid path: 'GIT~1/config'" }],
    ['lib', { message: 'A directory with this name already exists' }],
  ])('POST %s answers 400 %j', async (file, body) => {
    const { owner, project } = await refusalProject();
    const response = await server.request('POST', filesUrl(project, file), {
      token: owner.token,
      json: { branch: 'main', commit_message: 'x', content: 'a' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(body);
  });

  describe('permissions', () => {
    it.each([
      ['a Maintainer', AccessLevel.Maintainer, 'main', 201, { file_path: 'p.txt', branch: 'main' }],
      [
        'a Developer',
        AccessLevel.Developer,
        'main',
        400,
        { message: 'You are not allowed to push into this branch' },
      ],
      ['a Developer', AccessLevel.Developer, 'dev', 201, { file_path: 'p.txt', branch: 'dev' }],
      ['a Reporter', AccessLevel.Reporter, 'dev', 403, { message: '403 Forbidden' }],
      ['an outsider', null, 'dev', 404, { message: '404 Project Not Found' }],
    ])('%s writing to %s answers %i', async (_who, level, branch, status, body) => {
      const owner = await server.factories.user();
      const project = await projectWithReadme(owner);
      const user = await server.factories.user();
      if (level !== null) await server.factories.member(project, user.user, level);
      const before = await revParse(project, 'main');
      const response = await server.request('POST', filesUrl(project, 'p.txt'), {
        token: user.token,
        json: { branch, start_branch: 'main', commit_message: 'x', content: 'p' },
      });
      expect(response.status).toBe(status);
      expect(response.body).toEqual(body);
      if (status !== 201 || branch !== 'main') expect(await revParse(project, 'main')).toBe(before);
    });

    it('needs a token for writes, even on a public project', async () => {
      const owner = await server.factories.user();
      const project = await projectWithReadme(owner, { visibility: 'public' });
      const response = await server.request(
        'DELETE',
        `${filesUrl(project, 'README.md')}?branch=main&commit_message=x`,
      );
      expect(response.status).toBe(401);
    });
  });
});

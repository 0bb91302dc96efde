/**
 * Project and personal snippets: each a git repository cloned and pushed with real git, changed by file
 * actions (one commit each), read raw at older refs; GitLab's answers to bad input; visibility for
 * every kind of caller; user agent details; the project's snippets_size.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { remoteUrl, useGitWorkDir } from '../helpers/git-cli.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const { work, gitCli } = useGitWorkDir('forge-snippets-');

type Json = Record<string, unknown>;
type SnippetJson = Json & {
  id: number;
  files: Array<{ path: string; raw_url: string }>;
  http_url_to_repo: string;
};
let counter = 0;

async function call(
  user: TestUser | null,
  method: string,
  url: string,
  json?: unknown,
  headers?: Record<string, string>,
) {
  return server.request(method, url, { token: user?.token, json, headers });
}

async function ok<T = Json>(user: TestUser | null, method: string, url: string, json?: unknown): Promise<T> {
  const response = await call(user, method, url, json);
  if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${response.text}`);
  return response.body as T;
}

const THREE_FILES = [
  { file_path: 'hello.rb', content: "puts 'hello'\n" },
  { file_path: 'lib/world.rb', content: 'class World; end\n' },
  { file_path: 'README.md', content: '# Snippet\n' },
];

async function projectWorld(visibility: 'public' | 'internal' | 'private' = 'private') {
  const owner = await server.factories.user();
  const project = await server.factories.project({ owner, visibility });
  return { owner, project };
}

/** A single-file snippet of the project by `user`. */
const snippetIn = (user: TestUser, project: Project, attrs: Json = {}) =>
  ok<SnippetJson>(user, 'POST', `/projects/${project.id}/snippets`, {
    title: 't',
    file_name: 'a',
    content: 'a',
    ...attrs,
  });

const fullPathOf = (project: Project) => `${project.namespace!.fullPath}/${project.path}`;

const statistics = async (projectId: number) =>
  Number(
    (
      (await server.dataSource.query('SELECT snippets_size FROM project_statistics WHERE project_id = $1', [
        projectId,
      ])) as Array<{ snippets_size: string }>
    )[0].snippets_size,
  );

describe('a project snippet with three files', () => {
  it('is created, cloned, pushed to, changed by every action and read raw at an older ref', async () => {
    const { owner, project } = await projectWorld('private');
    const base = `/projects/${project.id}/snippets`;
    const created = await ok<SnippetJson>(owner, 'POST', base, {
      title: 'Three files',
      description: 'Trio',
      visibility: 'private',
      files: THREE_FILES,
    });
    const fullPath = fullPathOf(project);
    expect(created).toMatchObject({
      title: 'Three files',
      description: 'Trio',
      visibility: 'private',
      project_id: project.id,
      file_name: 'README.md',
      web_url: `${server.url}/${fullPath}/-/snippets/${created.id}`,
      raw_url: `${server.url}/${fullPath}/-/snippets/${created.id}/raw`,
      http_url_to_repo: `${server.url}/${fullPath}/snippets/${created.id}.git`,
      ssh_url_to_repo: `git@127.0.0.1:${fullPath}/snippets/${created.id}.git`,
      imported: false,
      imported_from: 'none',
      author: { id: owner.user.id, username: owner.user.username },
    });
    expect(created.files.map((f) => f.path).sort()).toEqual(['README.md', 'hello.rb', 'lib/world.rb']);
    expect(created.files.find((f) => f.path === 'lib/world.rb')!.raw_url).toBe(
      `${server.url}/${fullPath}/-/snippets/${created.id}/raw/main/lib/world.rb`,
    );
    const sizeAfterCreate = await statistics(project.id);
    expect(sizeAfterCreate).toBeGreaterThan(0);
    const projectJson = await ok<Json>(owner, 'GET', `/projects/${project.id}?statistics=true`);
    expect((projectJson.statistics as Json).snippets_size).toBe(sizeAfterCreate);

    // The repository lives at the hashed @snippets path and clones with real git.
    const url = new URL(created.http_url_to_repo);
    url.username = 'any';
    url.password = owner.token;
    const dir = path.join(work, `clone-${++counter}`);
    const clone = await gitCli(['clone', '-q', url.toString(), dir]);
    expect(clone.ok, clone.stderr).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'lib/world.rb'), 'utf8')).toBe('class World; end\n');
    const firstCommit = (await gitCli(['rev-parse', 'HEAD'], dir)).stdout.trim();

    // A push to main is taken; the API shows the new file.
    fs.writeFileSync(path.join(dir, 'pushed.txt'), 'pushed\n');
    await gitCli(['add', 'pushed.txt'], dir);
    await gitCli(['commit', '-q', '-m', 'push'], dir);
    const push = await gitCli(['push', '-q', 'origin', 'main'], dir);
    expect(push.ok, push.stderr).toBe(true);
    const afterPush = await ok<SnippetJson>(owner, 'GET', `${base}/${created.id}`);
    expect(afterPush.files.map((f) => f.path)).toContain('pushed.txt');

    // Creating another branch is refused, as GitLab refuses it.
    const branch = await gitCli(['push', '-q', 'origin', 'main:other'], dir);
    expect(branch.ok).toBe(false);
    expect(branch.stderr).toContain('You can not create or delete branches.');

    // Each action in turn, one commit each.
    const actions = [
      { action: 'create', file_path: 'new.txt', content: 'new\n' },
      { action: 'update', file_path: 'hello.rb', content: "puts 'bye'\n" },
      { action: 'delete', file_path: 'README.md' },
      { action: 'move', previous_path: 'lib/world.rb', file_path: 'lib/earth.rb' },
    ];
    for (const action of actions) await ok(owner, 'PUT', `${base}/${created.id}`, { files: [action] });
    const final = await ok<SnippetJson>(owner, 'GET', `${base}/${created.id}`);
    expect(final.files.map((f) => f.path).sort()).toEqual([
      'hello.rb',
      'lib/earth.rb',
      'new.txt',
      'pushed.txt',
    ]);
    await gitCli(['pull', '-q', 'origin', 'main'], dir);
    const log = (await gitCli(['rev-list', '--count', 'HEAD'], dir)).stdout.trim();
    expect(Number(log)).toBe(1 + 1 + actions.length);

    // Raw: the file at the older ref, and the current one.
    const old = await call(owner, 'GET', `${base}/${created.id}/files/${firstCommit}/hello.rb/raw`);
    expect(old.status).toBe(200);
    expect(old.text).toBe("puts 'hello'\n");
    const moved = await call(owner, 'GET', `${base}/${created.id}/files/main/lib%2Fearth.rb/raw`);
    expect(moved.text).toBe('class World; end\n');
    const gone = await call(owner, 'GET', `${base}/${created.id}/files/main/README.md/raw`);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ message: '404 File Not Found' });
    // A path relative to a working tree names no file of the repository (git's reader would die on it).
    for (const relative of ['..%2F..', '.%2Fhello.rb', '..'])
      expect((await call(owner, 'GET', `${base}/${created.id}/files/main/${relative}/raw`)).status).toBe(404);
    const badRef = await call(owner, 'GET', `${base}/${created.id}/files/nope/hello.rb/raw`);
    expect(badRef.body).toEqual({ message: '404 Reference Not Found' });
    const raw = await call(owner, 'GET', `${base}/${created.id}/raw`);
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(raw.text).toBe(fs.readFileSync(path.join(dir, final.file_name as string), 'utf8'));

    // Several files: the deprecated single-file parameters are refused.
    const single = await call(owner, 'PUT', `${base}/${created.id}`, { content: 'x' });
    expect(single.status).toBe(400);
    expect(single.body).toEqual({
      message: { error: 'To update Snippets with multiple files, you must use the `files` parameter' },
    });

    // Deleting frees the repository and the statistics.
    const deleted = await call(owner, 'DELETE', `${base}/${created.id}`);
    expect(deleted.status).toBe(204);
    expect((await call(owner, 'DELETE', `${base}/${created.id}`)).status).toBe(404);
    expect(await statistics(project.id)).toBe(0);
    const cloneAgain = await gitCli(['clone', '-q', url.toString(), path.join(work, `clone-${++counter}`)]);
    expect(cloneAgain.ok).toBe(false);
  });
});

describe('bad input', () => {
  it.each([
    [{ title: 'x' }, { error: 'content, files are missing, exactly one parameter must be provided' }],
    [
      { title: 'x', content: 'a', file_name: 'a', files: [{ file_path: 'a', content: 'a' }] },
      { error: 'content, files are mutually exclusive' },
    ],
    [{ title: 'x', content: 'a' }, { error: 'file_name is missing' }],
    [
      { title: 'x', files: [{ file_path: '../up', content: 'a' }] },
      { message: { error: 'Error creating the snippet - Path cannot include directory traversal' } },
    ],
    [
      {
        title: 'x',
        files: [
          { file_path: 'a', content: 'a' },
          { file_path: 'a', content: 'b' },
        ],
      },
      { message: { error: 'Error creating the snippet - A file with this name already exists' } },
    ],
  ])('create %j answers 400 %j', async (body, error) => {
    const { owner, project } = await projectWorld();
    const response = await call(owner, 'POST', `/projects/${project.id}/snippets`, body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual(error);
    expect(await ok<Json[]>(owner, 'GET', `/projects/${project.id}/snippets`)).toEqual([]);
  });

  it.each([
    [{}, 400],
    [{ files: [{ action: 'update', file_path: 'missing.txt', content: 'x' }] }, 400],
    [{ files: [{ action: 'move', file_path: 'b.txt' }] }, 400],
    [{ files: [{ action: 'create', file_path: 'a.txt', content: 'x' }] }, 400],
    [{ files: [{ action: 'chmod', file_path: 'a.txt' }] }, 400],
  ])('update %j answers %i and changes nothing', async (body, status) => {
    const { owner, project } = await projectWorld();
    const base = `/projects/${project.id}/snippets`;
    const snippet = await snippetIn(owner, project, { file_name: 'a.txt' });
    const response = await call(owner, 'PUT', `${base}/${snippet.id}`, body);
    expect(response.status).toBe(status);
    const raw = await call(owner, 'GET', `${base}/${snippet.id}/raw`);
    expect(raw.text).toBe('a');
  });

  it('the deprecated content and file_name update and rename a single file', async () => {
    const { owner, project } = await projectWorld();
    const base = `/projects/${project.id}/snippets`;
    const snippet = await snippetIn(owner, project, { file_name: 'a.txt' });
    const renamed = await ok<SnippetJson>(owner, 'PUT', `${base}/${snippet.id}`, {
      file_name: 'b.txt',
      content: 'b',
    });
    expect(renamed.file_name).toBe('b.txt');
    expect((await call(owner, 'GET', `${base}/${snippet.id}/raw`)).text).toBe('b');
    const blank = await call(owner, 'POST', base, { title: 't', files: [{ file_path: 'z', content: '' }] });
    expect(blank.status).toBe(400);
  });

  it('a missing snippet answers 404 Snippet Not Found; pagination', async () => {
    const { owner, project } = await projectWorld();
    const base = `/projects/${project.id}/snippets`;
    expect((await call(owner, 'GET', `${base}/999999`)).body).toEqual({ message: '404 Snippet Not Found' });
    for (let i = 0; i < 3; i++)
      await ok(owner, 'POST', base, { title: `s${i}`, file_name: 'a', content: 'a' });
    const page = await call(owner, 'GET', `${base}?per_page=2&page=2`);
    expect(page.headers.get('x-total')).toBe('3');
    expect((page.body as Json[]).map((s) => s.title)).toEqual(['s0']);
  });
});

describe('visibility', () => {
  type Caller = 'anonymous' | 'outsider' | 'external' | 'guest' | 'author' | 'admin';
  /** Snippet visibility in a public project, and who reads it (200) or not (404). */
  const CASES: Array<[string, Record<Caller, number>]> = [
    ['public', { anonymous: 200, outsider: 200, external: 200, guest: 200, author: 200, admin: 200 }],
    ['internal', { anonymous: 404, outsider: 200, external: 404, guest: 200, author: 200, admin: 200 }],
    ['private', { anonymous: 404, outsider: 404, external: 404, guest: 200, author: 200, admin: 200 }],
  ];

  it.each(CASES)('a %s project snippet of a public project', async (visibility, expected) => {
    const { owner, project } = await projectWorld('public');
    const author = await server.factories.memberOf(project, AccessLevel.Reporter);
    const callers: Record<Caller, TestUser | null> = {
      anonymous: null,
      outsider: await server.factories.user(),
      external: await server.factories.user({ external: true }),
      guest: await server.factories.memberOf(project, AccessLevel.Guest),
      author,
      admin: await server.factories.user({ admin: true }),
    };
    void owner;
    const base = `/projects/${project.id}/snippets`;
    const snippet = await ok<SnippetJson>(author, 'POST', base, {
      title: 'v',
      visibility,
      file_name: 'a',
      content: 'a',
    });
    for (const [name, user] of Object.entries(callers) as Array<[Caller, TestUser | null]>) {
      const got = await call(user, 'GET', `${base}/${snippet.id}`);
      expect(`${name} ${got.status}`).toBe(`${name} ${expected[name]}`);
      const raw = await call(user, 'GET', `${base}/${snippet.id}/raw`);
      expect(`${name} raw ${raw.status}`).toBe(`${name} raw ${expected[name]}`);
      const list = await call(user, 'GET', base);
      const listed = (list.body as Json[]).some((s) => s.id === snippet.id);
      expect(`${name} listed ${listed}`).toBe(`${name} listed ${expected[name] === 200}`);
      // Clone over HTTP with the same rule (anonymous gets the Basic challenge instead of 404).
      const url = remoteUrl(server.url, `${fullPathOf(project)}/snippets/${snippet.id}`, user?.token);
      const clone = await gitCli(['clone', '-q', url, path.join(work, `v-${++counter}`)]);
      expect(`${name} clone ${clone.ok}`).toBe(`${name} clone ${expected[name] === 200}`);
    }
  });

  /** Personal snippets: who reads them. */
  const PERSONAL: Array<[string, Record<Exclude<Caller, 'guest'>, number>]> = [
    ['public', { anonymous: 200, outsider: 200, external: 200, author: 200, admin: 200 }],
    ['internal', { anonymous: 404, outsider: 200, external: 404, author: 200, admin: 200 }],
    ['private', { anonymous: 404, outsider: 404, external: 404, author: 200, admin: 200 }],
  ];

  it.each(PERSONAL)('a %s personal snippet', async (visibility, expected) => {
    const author = await server.factories.user();
    const callers = {
      anonymous: null,
      outsider: await server.factories.user(),
      external: await server.factories.user({ external: true }),
      author,
      admin: await server.factories.user({ admin: true }),
    };
    const snippet = await ok<SnippetJson>(author, 'POST', '/snippets', {
      title: 'p',
      visibility,
      files: [{ file_path: 'p.txt', content: 'personal' }],
    });
    expect(snippet.http_url_to_repo).toBe(`${server.url}/snippets/${snippet.id}.git`);
    expect(snippet.web_url).toBe(`${server.url}/-/snippets/${snippet.id}`);
    for (const [name, user] of Object.entries(callers) as Array<[keyof typeof callers, TestUser | null]>) {
      const got = await call(user, 'GET', `/snippets/${snippet.id}`);
      expect(`${name} ${got.status}`).toBe(`${name} ${expected[name]}`);
      const file = await call(user, 'GET', `/snippets/${snippet.id}/files/main/p.txt/raw`);
      expect(`${name} file ${file.status}`).toBe(`${name} file ${expected[name]}`);
      if (user) {
        const all = (await ok<Json[]>(user, 'GET', '/snippets/all?per_page=100')).some(
          (s) => s.id === snippet.id,
        );
        expect(`${name} all ${all}`).toBe(`${name} all ${expected[name] === 200}`);
      }
    }
    const publicList = (await ok<Json[]>(callers.outsider, 'GET', '/snippets/public?per_page=100')).some(
      (s) => s.id === snippet.id,
    );
    expect(publicList).toBe(visibility === 'public');
    expect((await ok<Json[]>(author, 'GET', '/snippets')).map((s) => s.id)).toContain(snippet.id);
  });

  it('a project snippet is capped by its project: a public snippet of a private project is for members', async () => {
    const { owner, project } = await projectWorld('private');
    const snippet = await snippetIn(owner, project, { title: 'capped', visibility: 'public' });
    const outsider = await server.factories.user();
    expect((await call(outsider, 'GET', `/snippets/${snippet.id}`)).status).toBe(404);
    expect((await call(null, 'GET', `/snippets/${snippet.id}`)).status).toBe(404);
    expect((await call(owner, 'GET', `/snippets/${snippet.id}`)).status).toBe(200);
    const all = await ok<Json[]>(outsider, 'GET', '/snippets/all?per_page=100');
    expect(all.some((s) => s.id === snippet.id)).toBe(false);
  });

  it('the snippets feature switched off answers 403', async () => {
    const { owner, project } = await projectWorld('public');
    const snippet = await snippetIn(owner, project, { title: 'off', visibility: 'public' });
    await ok(owner, 'PUT', `/projects/${project.id}`, { snippets_enabled: false });
    expect((await call(owner, 'GET', `/projects/${project.id}/snippets`)).status).toBe(403);
    expect((await call(owner, 'GET', `/projects/${project.id}/snippets/${snippet.id}`)).status).toBe(403);
    const body = { title: 't', file_name: 'a', content: 'a' };
    expect((await call(owner, 'POST', `/projects/${project.id}/snippets`, body)).status).toBe(403);
    expect((await call(owner, 'GET', `/snippets/${snippet.id}`)).status).toBe(404);
  });
});

describe('who changes a snippet', () => {
  it.each([
    ['author (Reporter)', 'author', 200],
    ['another Reporter', AccessLevel.Reporter, 403],
    ['a Developer', AccessLevel.Developer, 403],
    ['a Maintainer', AccessLevel.Maintainer, 200],
    ['an administrator', 'admin', 200],
  ] as const)('%s: %s', async (_label, who, status) => {
    const { project } = await projectWorld('public');
    const author = await server.factories.memberOf(project, AccessLevel.Reporter);
    const base = `/projects/${project.id}/snippets`;
    const snippet = await ok<SnippetJson>(author, 'POST', base, { title: 't', file_name: 'a', content: 'a' });
    const user =
      who === 'author'
        ? author
        : who === 'admin'
          ? await server.factories.user({ admin: true })
          : await server.factories.memberOf(project, who);
    expect((await call(user, 'PUT', `${base}/${snippet.id}`, { title: 'changed' })).status).toBe(status);
    const expectedDelete = status === 200 ? 204 : 403;
    expect((await call(user, 'DELETE', `${base}/${snippet.id}`)).status).toBe(expectedDelete);
  });

  it('pushing needs the right to change the snippet', async () => {
    const author = await server.factories.user();
    const other = await server.factories.user();
    const snippet = await ok<SnippetJson>(author, 'POST', '/snippets', {
      title: 'pub',
      visibility: 'public',
      files: [{ file_path: 'a.txt', content: 'a' }],
    });
    const dir = path.join(work, `push-${++counter}`);
    expect(
      (await gitCli(['clone', '-q', remoteUrl(server.url, `snippets/${snippet.id}`, other.token), dir])).ok,
    ).toBe(true);
    fs.writeFileSync(path.join(dir, 'b.txt'), 'b');
    await gitCli(['add', 'b.txt'], dir);
    await gitCli(['commit', '-q', '-m', 'b'], dir);
    const refused = await gitCli(['push', '-q', 'origin', 'main'], dir);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain('You are not allowed to update this snippet.');
    await gitCli(
      ['remote', 'set-url', 'origin', remoteUrl(server.url, `-/snippets/${snippet.id}`, author.token)],
      dir,
    );
    const pushed = await gitCli(['push', '-q', 'origin', 'main'], dir);
    expect(pushed.ok, pushed.stderr).toBe(true);
    expect(
      (await ok<SnippetJson>(author, 'GET', `/snippets/${snippet.id}`)).files.map((f) => f.path),
    ).toEqual(['a.txt', 'b.txt']);
  });

  it('personal snippets: only the author or an administrator changes them', async () => {
    const author = await server.factories.user();
    const other = await server.factories.user();
    const snippet = await ok<SnippetJson>(author, 'POST', '/snippets', {
      title: 'mine',
      visibility: 'internal',
      file_name: 'a',
      content: 'a',
    });
    expect((await call(other, 'PUT', `/snippets/${snippet.id}`, { title: 'x' })).status).toBe(403);
    expect((await call(other, 'DELETE', `/snippets/${snippet.id}`)).status).toBe(403);
    expect((await ok<Json>(author, 'PUT', `/snippets/${snippet.id}`, { title: 'y' })).title).toBe('y');
    expect((await call(author, 'DELETE', `/snippets/${snippet.id}`)).status).toBe(204);
    expect((await call(author, 'GET', `/snippets/${snippet.id}`)).status).toBe(404);
  });
});

describe('user agent details', () => {
  it('records the user agent and address at creation, for administrators only', async () => {
    const { owner, project } = await projectWorld('public');
    const admin = await server.factories.user({ admin: true });
    const created = await call(
      owner,
      'POST',
      `/projects/${project.id}/snippets`,
      { title: 'ua', file_name: 'a', content: 'a', visibility: 'public' },
      { 'User-Agent': 'snippet-test/1.0' },
    );
    const id = (created.body as Json).id as number;
    const detail = await call(admin, 'GET', `/projects/${project.id}/snippets/${id}/user_agent_detail`);
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ user_agent: 'snippet-test/1.0', akismet_submitted: false });
    expect((detail.body as Json).ip_address).toMatch(/127\.0\.0\.1/);
    expect(
      (await call(owner, 'GET', `/projects/${project.id}/snippets/${id}/user_agent_detail`)).status,
    ).toBe(403);
    const personal = await ok<SnippetJson>(owner, 'POST', '/snippets', {
      title: 'p',
      file_name: 'a',
      content: 'a',
    });
    expect((await call(owner, 'GET', `/snippets/${personal.id}/user_agent_detail`)).status).toBe(403);
    expect((await call(admin, 'GET', `/snippets/${personal.id}/user_agent_detail`)).status).toBe(200);
  });
});

describe('repositories go with their snippets', () => {
  async function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const dirOf = (id: number) => server.services.snippetRepositories.dir('default', id);
  const leftovers = (id: number) =>
    fs.readdirSync(path.dirname(dirOf(id))).filter((name) => name.startsWith(path.basename(dirOf(id))));

  it('at @snippets/<hash>, removed on the snippet deletion and on its project deletion', async () => {
    const { owner, project } = await projectWorld();
    const first = await snippetIn(owner, project);
    const second = await snippetIn(owner, project);
    expect(dirOf(first.id)).toMatch(/\/@snippets\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}\.git$/);
    expect(fs.existsSync(dirOf(first.id))).toBe(true);
    await ok(owner, 'DELETE', `/projects/${project.id}/snippets/${first.id}`);
    expect(fs.existsSync(dirOf(first.id))).toBe(false);
    await until(() => leftovers(first.id).length === 0);
    const deleted = await call(owner, 'DELETE', `/projects/${project.id}`);
    expect(deleted.status).toBe(202);
    await until(() => !fs.existsSync(dirOf(second.id)) && leftovers(second.id).length === 0);
  });
});

describe('an archived project', () => {
  it('keeps its snippets readable and refuses their changes', async () => {
    const { owner, project } = await projectWorld('public');
    const snippet = await snippetIn(owner, project, { visibility: 'public' });
    await ok(owner, 'POST', `/projects/${project.id}/archive`);
    const base = `/projects/${project.id}/snippets`;
    expect((await call(owner, 'GET', `${base}/${snippet.id}`)).status).toBe(200);
    expect((await call(owner, 'PUT', `${base}/${snippet.id}`, { title: 'x' })).status).toBe(403);
    expect((await call(owner, 'DELETE', `${base}/${snippet.id}`)).status).toBe(403);
    expect((await call(owner, 'POST', base, { title: 't', file_name: 'a', content: 'a' })).status).toBe(403);
    const dir = path.join(work, `archived-${++counter}`);
    const url = remoteUrl(server.url, `${fullPathOf(project)}/-/snippets/${snippet.id}`, owner.token);
    expect((await gitCli(['clone', '-q', url, dir])).ok).toBe(true);
    fs.writeFileSync(path.join(dir, 'b'), 'b');
    await gitCli(['add', 'b'], dir);
    await gitCli(['commit', '-q', '-m', 'b'], dir);
    const push = await gitCli(['push', '-q', 'origin', 'main'], dir);
    expect(push.ok).toBe(false);
  });
});

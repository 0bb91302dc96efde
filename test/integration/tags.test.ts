/** Tags: listing, ordering and search, annotated and lightweight tags, creation, deletion, signatures. */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, gitText } from '../../src/git/git.js';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import { User } from '../../src/users/user.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { writeOneFileCommit } from '../helpers/git-plumbing.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const execAsync = promisify(execFile);
/** Runs a command with stdin closed, so that no tool can sit waiting for a passphrase. */
function exec(command: string, args: string[], options: { env?: NodeJS.ProcessEnv } = {}) {
  const running = execAsync(command, args, { ...options, timeout: 20_000 });
  running.child.stdin?.end();
  return running;
}
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-tags-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

type Json = Record<string, unknown>;

const repositoryOf = (project: Project) => server.services.storage.diskPath('default', project.id);
const tagsPath = (project: Project, rest = '') => `/projects/${project.id}/repository/tags${rest}`;
const names = (body: unknown) => (body as Json[]).map((tag) => tag.name);

async function lightweight(dir: string, name: string, commit: string) {
  await git(['update-ref', `refs/tags/${name}`, commit], { gitDir: dir });
}

async function annotated(dir: string, name: string, commit: string, message: string, date: string) {
  const env = {
    GIT_COMMITTER_NAME: 'Tagger',
    GIT_COMMITTER_EMAIL: 'tagger@example.com',
    GIT_COMMITTER_DATE: date,
  };
  await git(['tag', '-a', name, '-m', message, commit], { gitDir: dir, env });
}

const projectFor = (owner: TestUser, visibility: 'public' | 'private' = 'private') =>
  server.factories.projectWithReadme({ owner, visibility });

describe('listing and reading tags', () => {
  let project: Project;
  let owner: TestUser;
  const commits: Record<string, string> = {};

  beforeAll(async () => {
    owner = await server.factories.user();
    project = await projectFor(owner, 'public');
    const dir = repositoryOf(project);
    commits.c1 = await writeOneFileCommit(dir, null, 'one', '2026-01-01T10:00:00Z');
    commits.c2 = await writeOneFileCommit(dir, commits.c1, 'two', '2026-01-02T10:00:00Z');
    commits.c3 = await writeOneFileCommit(dir, commits.c2, 'three', '2026-01-03T10:00:00Z');
    await lightweight(dir, 'v1.2.0', commits.c2);
    await lightweight(dir, 'v1.9.0', commits.c1);
    await annotated(dir, 'v1.10.0', commits.c2, 'Release 1.10.0\n\nNotes', '2026-01-05T10:00:00Z');
    await annotated(dir, 'release/1.0', commits.c3, 'First release', '2026-01-03T10:00:00Z');
    await lightweight(dir, 'Beta-1', commits.c2);
    await lightweight(dir, '1.0-final', commits.c1);
    await lightweight(dir, '1.0', commits.c3);
    await server.request('POST', `/projects/${project.id}/protected_tags`, {
      token: owner.token,
      json: { name: 'release/*' },
    });
  });

  it.each([
    ['', ['v1.10.0', '1.0', 'release/1.0', 'Beta-1', 'v1.2.0', '1.0-final', 'v1.9.0']],
    ['?sort=asc', ['1.0-final', 'v1.9.0', 'Beta-1', 'v1.2.0', '1.0', 'release/1.0', 'v1.10.0']],
    ['?order_by=name&sort=asc', ['1.0', '1.0-final', 'Beta-1', 'release/1.0', 'v1.10.0', 'v1.2.0', 'v1.9.0']],
    ['?order_by=name', ['v1.9.0', 'v1.2.0', 'v1.10.0', 'release/1.0', 'Beta-1', '1.0-final', '1.0']],
    ['?order_by=version&sort=asc&search=%5Ev1.', ['v1.2.0', 'v1.9.0', 'v1.10.0']],
    ['?order_by=version&search=%5Ev1.', ['v1.10.0', 'v1.9.0', 'v1.2.0']],
    ['?search=0%24', ['v1.10.0', '1.0', 'release/1.0', 'v1.2.0', 'v1.9.0']],
    ['?search=%5E1.0%24', ['1.0']],
    ['?search=BETA', ['Beta-1']],
    // A substring search lists the exact match first.
    ['?search=1.0&sort=asc', ['1.0', '1.0-final', 'release/1.0']],
    ['?search=v*', []],
  ])('GET tags%s lists %j', async (query, expected) => {
    const response = await server.request('GET', tagsPath(project, query));
    expect(response.status).toBe(200);
    expect(names(response.body)).toEqual(expected);
  });

  it('paginates with every header', async () => {
    const response = await server.request('GET', tagsPath(project, '?per_page=2&page=2'));
    expect(names(response.body)).toEqual(['release/1.0', 'Beta-1']);
    expect(response.headers.get('x-total')).toBe('7');
    expect(response.headers.get('x-total-pages')).toBe('4');
    expect(response.headers.get('x-page')).toBe('2');
    expect(response.headers.get('x-next-page')).toBe('3');
    expect(response.headers.get('x-prev-page')).toBe('1');
    expect(response.headers.get('link')).toContain(
      `<${server.api}${tagsPath(project)}?page=3&per_page=2>; rel="next"`,
    );
  });

  it('shows an annotated tag with its message, tag object and date', async () => {
    const response = await server.request('GET', tagsPath(project, '/v1.10.0'));
    expect(response.status).toBe(200);
    const tagObject = await gitText(['rev-parse', 'refs/tags/v1.10.0'], { gitDir: repositoryOf(project) });
    expect(tagObject).not.toBe(commits.c2);
    expect(response.body).toMatchObject({
      name: 'v1.10.0',
      message: 'Release 1.10.0\n\nNotes',
      target: tagObject,
      release: null,
      protected: false,
      created_at: '2026-01-05T10:00:00.000Z',
      commit: {
        id: commits.c2,
        short_id: commits.c2.slice(0, 11),
        parent_ids: [commits.c1],
        title: 'add two',
        committed_date: '2026-01-02T10:00:00.000Z',
        web_url: `${server.url}/${owner.user.username}/${project.path}/-/commit/${commits.c2}`,
      },
    });
  });

  it('shows a lightweight tag with no message or date, targeting its commit', async () => {
    const response = await server.request('GET', tagsPath(project, '/v1.2.0'));
    expect(response.body).toMatchObject({
      name: 'v1.2.0',
      message: null,
      target: commits.c2,
      created_at: null,
      commit: { id: commits.c2 },
    });
  });

  it('reads URL-encoded names and marks tags a protected wildcard matches', async () => {
    const response = await server.request('GET', tagsPath(project, '/release%2F1.0'));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ name: 'release/1.0', protected: true, message: 'First release' });
    const list = await server.request('GET', tagsPath(project, '?search=release'));
    expect((list.body as Json[]).map((tag) => tag.protected)).toEqual([true]);
  });

  it('answers 404 for a missing tag and 400 for a bad order', async () => {
    const missing = await server.request('GET', tagsPath(project, '/nope'));
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Tag Not Found' });
    const bad = await server.request('GET', tagsPath(project, '?order_by=date'));
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'order_by does not have a valid value' });
  });

  it('lists an empty repository as an empty page', async () => {
    const empty = await server.factories.project({ owner, visibility: 'public' });
    const response = await server.request('GET', tagsPath(empty));
    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
    expect(response.headers.get('x-total')).toBe('0');
  });
});

describe('who reads the tags of a private project', () => {
  it.each([
    ['anonymous', null, 404],
    ['an outsider', 0, 404],
    ['a Guest', AccessLevel.Guest, 403],
    ['a Reporter', AccessLevel.Reporter, 200],
  ])('%s (level %s) gets %i', async (_who, level, status) => {
    const owner = await server.factories.user();
    const project = await projectFor(owner);
    let token: string | undefined;
    if (level !== null) token = (await server.factories.memberOf(project, level)).token;
    const list = await server.request('GET', tagsPath(project), { token });
    expect(list.status).toBe(status);
    if (status === 404) expect(list.body).toEqual({ message: '404 Project Not Found' });
    if (status === 403) expect(list.body).toEqual({ message: '403 Forbidden' });
    expect((await server.request('GET', tagsPath(project, '/x'), { token })).status).toBe(
      status === 200 ? 404 : status,
    );
  });
});

describe('creating tags', () => {
  it('creates a lightweight tag at a branch and records the push', async () => {
    const owner = await server.factories.user();
    const project = await projectFor(owner);
    const developer = await server.factories.memberOf(project, AccessLevel.Developer);
    const head = await gitText(['rev-parse', 'main'], { gitDir: repositoryOf(project) });
    const response = await server.request('POST', tagsPath(project), {
      token: developer.token,
      json: { tag_name: 'v1.0.0', ref: 'main' },
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      name: 'v1.0.0',
      message: null,
      target: head,
      created_at: null,
      protected: false,
      release: null,
      commit: { id: head, title: 'Initial commit' },
    });
    const events = await server.dataSource.query(
      'SELECT ref, before_sha, after_sha, user_id, via FROM push_events WHERE project_id = $1',
      [project.id],
    );
    expect(events).toEqual([
      {
        ref: 'refs/tags/v1.0.0',
        before_sha: '0'.repeat(40),
        after_sha: head,
        user_id: developer.user.id,
        via: 'api',
      },
    ]);
  });

  it('creates an annotated tag by the caller, with the message trimmed', async () => {
    const owner = await server.factories.user({ name: 'Owner Person' });
    const project = await projectFor(owner);
    const dir = repositoryOf(project);
    const head = await gitText(['rev-parse', 'main'], { gitDir: dir });
    const response = await server.request('POST', tagsPath(project), {
      token: owner.token,
      form: { tag_name: 'v2.0', ref: head, message: '  Release 2.0\n\nWith notes.\n ' },
    });
    expect(response.status).toBe(201);
    const body = response.body as Json;
    expect(body).toMatchObject({ name: 'v2.0', message: 'Release 2.0\n\nWith notes.', commit: { id: head } });
    expect(body.target).not.toBe(head);
    expect(Date.now() - Date.parse(body.created_at as string)).toBeLessThan(60_000);
    const raw = await gitText(['cat-file', 'tag', 'v2.0'], { gitDir: dir });
    expect(raw).toMatch(
      new RegExp(
        `^object ${head}\ntype commit\ntag v2.0\ntagger Owner Person <${owner.user.email}> \\d+ \\+0000\n\nRelease 2.0\n\nWith notes.$`,
      ),
    );
  });

  it('makes a whitespace-only message a lightweight tag, and resolves a tag as the ref', async () => {
    const owner = await server.factories.user();
    const project = await projectFor(owner);
    const first = await server.request('POST', tagsPath(project), {
      token: owner.token,
      json: { tag_name: 'a', ref: 'main', message: 'annotated' },
    });
    const second = await server.request('POST', tagsPath(project), {
      token: owner.token,
      json: { tag_name: 'b', ref: 'a', message: '   ' },
    });
    expect(second.status).toBe(201);
    const head = (first.body as { commit: { id: string } }).commit.id;
    expect(second.body).toMatchObject({ name: 'b', message: null, target: head, created_at: null });
  });

  it('takes the parameters from the query string, as gitbeaker sends them', async () => {
    const owner = await server.factories.user();
    const project = await projectFor(owner);
    const response = await server.request('POST', tagsPath(project, '?tag_name=q1&ref=main&message=Hi'), {
      token: owner.token,
      json: {},
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ name: 'q1', message: 'Hi' });
  });

  it.each([
    ['an existing tag', { tag_name: 'taken', ref: 'main' }, 'Tag taken already exists'],
    ['an empty ref', { tag_name: 'x', ref: '' }, 'Target is empty'],
    ['an unknown ref', { tag_name: 'x', ref: 'nowhere' }, 'Target nowhere is invalid'],
    ['an option-like ref', { tag_name: 'x', ref: '--all' }, 'Target --all is invalid'],
    ['a name with a space', { tag_name: 'bad name', ref: 'main' }, 'Tag name invalid'],
    ['a name with ..', { tag_name: 'a..b', ref: 'main' }, 'Tag name invalid'],
    ['a name starting with -', { tag_name: '-x', ref: 'main' }, 'Tag name invalid'],
    ['HEAD', { tag_name: 'HEAD', ref: 'main' }, 'Tag name invalid'],
    ['a refs/ prefix', { tag_name: 'refs/tags/x', ref: 'main' }, 'Tag name invalid'],
    ['an empty name', { tag_name: '', ref: 'main' }, 'Tag name invalid'],
    [
      'a SHA-like name',
      { tag_name: `${'a'.repeat(40)}-x`, ref: 'main' },
      'You cannot create a tag with a SHA-1 or SHA-256 tag name.',
    ],
    [
      'the default branch name',
      { tag_name: 'main', ref: 'main' },
      'You cannot use default branch name to create a tag',
    ],
  ])('refuses %s with 405', async (_what, json, message) => {
    const owner = await server.factories.user();
    const project = await projectFor(owner);
    await server.request('POST', tagsPath(project), {
      token: owner.token,
      json: { tag_name: 'taken', ref: 'main' },
    });
    const response = await server.request('POST', tagsPath(project), { token: owner.token, json });
    expect(response.status).toBe(405);
    expect(response.body).toEqual({ message });
  });

  it.each([
    [{ ref: 'main' }, 'tag_name is missing'],
    [{ tag_name: 'x' }, 'ref is missing'],
  ])('answers 400 to %j', async (json, error) => {
    const owner = await server.factories.user();
    const project = await projectFor(owner);
    const response = await server.request('POST', tagsPath(project), { token: owner.token, json });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error });
  });

  it.each([
    ['a Reporter', AccessLevel.Reporter, 403],
    ['an outsider', 0, 404],
  ])('refuses %s', async (_who, level, status) => {
    const owner = await server.factories.user();
    const project = await projectFor(owner);
    const caller = await server.factories.memberOf(project, level);
    const response = await server.request('POST', tagsPath(project), {
      token: caller.token,
      json: { tag_name: 'x', ref: 'main' },
    });
    expect(response.status).toBe(status);
  });

  it('refuses writes to an archived project', async () => {
    const owner = await server.factories.user();
    const project = await projectFor(owner);
    await server.request('POST', `/projects/${project.id}/archive`, { token: owner.token });
    const response = await server.request('POST', tagsPath(project), {
      token: owner.token,
      json: { tag_name: 'x', ref: 'main' },
    });
    expect(response.status).toBe(403);
  });

  it('lets only the allowed roles create a protected tag', async () => {
    const owner = await server.factories.user();
    const project = await projectFor(owner);
    const developer = await server.factories.memberOf(project, AccessLevel.Developer);
    const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
    await server.request('POST', `/projects/${project.id}/protected_tags`, {
      token: owner.token,
      json: { name: 'v*', create_access_level: AccessLevel.Maintainer },
    });
    const refused = await server.request('POST', tagsPath(project), {
      token: developer.token,
      json: { tag_name: 'v1', ref: 'main', message: 'no' },
    });
    expect(refused.status).toBe(405);
    expect(refused.body).toEqual({ message: 'You are not allowed to create this tag as it is protected.' });
    expect((await server.request('GET', tagsPath(project, '/v1'), { token: owner.token })).status).toBe(404);
    const other = await server.request('POST', tagsPath(project), {
      token: developer.token,
      json: { tag_name: 'nightly', ref: 'main' },
    });
    expect(other.status).toBe(201);
    const allowed = await server.request('POST', tagsPath(project), {
      token: maintainer.token,
      json: { tag_name: 'v1', ref: 'main' },
    });
    expect(allowed.status).toBe(201);
    expect(allowed.body).toMatchObject({ name: 'v1', protected: true });
  });
});

describe('deleting tags', () => {
  async function taggedProject() {
    const owner = await server.factories.user();
    const project = await projectFor(owner);
    for (const tag_name of ['plain', 'v1'])
      await server.request('POST', tagsPath(project), {
        token: owner.token,
        json: { tag_name, ref: 'main' },
      });
    await server.request('POST', `/projects/${project.id}/protected_tags`, {
      token: owner.token,
      json: { name: 'v*' },
    });
    return { owner, project };
  }

  it('lets a Developer delete an unprotected tag, and records it', async () => {
    const { project } = await taggedProject();
    const developer = await server.factories.memberOf(project, AccessLevel.Developer);
    const target = await gitText(['rev-parse', 'refs/tags/plain'], { gitDir: repositoryOf(project) });
    const response = await server.request('DELETE', tagsPath(project, '/plain'), { token: developer.token });
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(
      (await server.request('GET', tagsPath(project, '/plain'), { token: developer.token })).status,
    ).toBe(404);
    const events = await server.dataSource.query(
      `SELECT before_sha, after_sha, user_id FROM push_events WHERE project_id = $1 AND ref = 'refs/tags/plain'
       ORDER BY id`,
      [project.id],
    );
    expect(events[events.length - 1]).toEqual({
      before_sha: target,
      after_sha: '0'.repeat(40),
      user_id: developer.user.id,
    });
  });

  it.each([
    ['a Developer', AccessLevel.Developer, 403],
    ['a Maintainer', AccessLevel.Maintainer, 204],
  ])('lets %s delete a protected tag: %i', async (_who, level, status) => {
    const { project } = await taggedProject();
    const member = await server.factories.memberOf(project, level);
    const response = await server.request('DELETE', tagsPath(project, '/v1'), { token: member.token });
    expect(response.status).toBe(status);
    if (status === 403) expect(response.body).toEqual({ message: '403 Forbidden' });
  });

  it('answers 404 for a missing tag before the role, and 403 to a Reporter', async () => {
    const { project } = await taggedProject();
    const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
    const missing = await server.request('DELETE', tagsPath(project, '/nope'), { token: reporter.token });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Tag Not Found' });
    expect(
      (await server.request('DELETE', tagsPath(project, '/plain'), { token: reporter.token })).status,
    ).toBe(403);
  });
});

describe('tag signatures', () => {
  let owner: TestUser;
  let project: Project;
  let dir: string;
  const env = (home: string) => ({ PATH: process.env.PATH ?? '', GNUPGHOME: home, HOME: work });

  /** Signs a tag at main with the git command line, as a developer's machine would. */
  async function signTag(name: string, config: string[], home: string, email = 'signer@example.com') {
    await exec(
      'git',
      [
        `--git-dir=${dir}`,
        '-c',
        'user.name=Signer',
        '-c',
        `user.email=${email}`,
        ...config,
        'tag',
        '-s',
        name,
        '-m',
        `${name} message`,
        'main',
      ],
      { env: env(home) },
    );
  }

  beforeAll(async () => {
    owner = await server.factories.user();
    project = await projectFor(owner, 'public');
    dir = repositoryOf(project);
    await server.request('POST', tagsPath(project), {
      token: owner.token,
      json: { tag_name: 'plain', ref: 'main', message: 'x' },
    });
    await server.request('POST', tagsPath(project), {
      token: owner.token,
      json: { tag_name: 'light', ref: 'main' },
    });
  });

  it.each([
    ['plain', '404 Signature Not Found'],
    ['light', '404 Signature Not Found'],
    ['missing', '404 Tag Not Found'],
  ])('answers 404 for %s', async (name, message) => {
    const response = await server.request('GET', tagsPath(project, `/${name}/signature`));
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ message });
  });

  it('reports a GPG signature with the key ID it names, unverified', async () => {
    const home = fs.mkdtempSync(path.join(work, 'gpg-'));
    await exec(
      'gpg',
      [
        '--batch',
        '--passphrase',
        '',
        '--quick-gen-key',
        'Signer <signer@example.com>',
        'ed25519',
        'sign',
        'never',
      ],
      {
        env: env(home),
      },
    );
    const { stdout } = await exec('gpg', ['--list-keys', '--with-colons'], { env: env(home) });
    const keyId = /^pub:[^:]*:[^:]*:[^:]*:([0-9A-F]{16}):/m.exec(stdout)![1];
    await signTag('gpg-signed', ['-c', 'user.signingkey=signer@example.com'], home);
    const response = await server.request('GET', tagsPath(project, '/gpg-signed/signature'));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      signature_type: 'PGP',
      verification_status: 'unknown_key',
      gpg_key_id: null,
      gpg_key_primary_keyid: keyId,
      gpg_key_user_name: null,
      gpg_key_user_email: null,
      gpg_key_subkey_id: null,
    });
    // The tag's message leaves the signature out.
    const tag = await server.request('GET', tagsPath(project, '/gpg-signed'));
    expect((tag.body as Json).message).toBe('gpg-signed message');
  });

  it('reports an SSH signature as unknown_key', async () => {
    const key = path.join(work, 'ssh-key');
    await exec('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'signer', '-f', key]);
    await signTag('ssh-signed', ['-c', 'gpg.format=ssh', '-c', `user.signingkey=${key}.pub`], work);
    const response = await server.request('GET', tagsPath(project, '/ssh-signed/signature'));
    expect(response.body).toEqual({ signature_type: 'SSH', verification_status: 'unknown_key', key: null });
  });

  it('reports an X.509 signature with its certificate, verified once trusted and matched to a user', async () => {
    const home = fs.mkdtempSync(path.join(work, 'gpgsm-'));
    const signer = await server.factories.user({ name: 'X509 Signer' });
    const email = signer.user.email;
    fs.writeFileSync(path.join(home, 'gpgsm.conf'), 'disable-crl-checks\ninclude-certs 1\n');
    fs.writeFileSync(
      path.join(home, 'cert.params'),
      `Key-Type: RSA\nKey-Length: 2048\nKey-Usage: sign\nSerial: random\nName-DN: CN=Tag Signer,O=Forge Test\nName-Email: ${email}\n`,
    );
    const certificate = path.join(home, 'cert.pem');
    const gpgsm = (args: string[]) => exec('gpgsm', ['--batch', ...args], { env: env(home) });
    await gpgsm([
      '--pinentry-mode',
      'loopback',
      '--passphrase',
      '',
      '--gen-key',
      '--armor',
      '-o',
      certificate,
      path.join(home, 'cert.params'),
    ]);
    await gpgsm(['--import', certificate]);
    const listing = (await gpgsm(['--list-keys', '--with-colons'])).stdout;
    const fingerprint = /^fpr:{9}([0-9A-F]{40}):/m.exec(listing)![1];
    const serial = /^crt:(?:[^:]*:){6}([0-9A-F]+):/m.exec(listing)![1];
    fs.appendFileSync(path.join(home, 'trustlist.txt'), `${fingerprint} S relax\n`);
    await signTag(
      'x509-signed',
      ['-c', 'gpg.format=x509', '-c', `user.signingkey=${fingerprint}`],
      home,
      email,
    );

    const unverified = await server.request('GET', tagsPath(project, '/x509-signed/signature'));
    expect(unverified.status).toBe(200);
    expect(unverified.body).toEqual({
      signature_type: 'X509',
      verification_status: 'unverified',
      x509_certificate: {
        id: null,
        subject: 'CN=Tag Signer,O=Forge Test',
        subject_key_identifier: null,
        email,
        serial_number: BigInt(`0x${serial}`).toString(10),
        certificate_status: 'good',
        x509_issuer: {
          id: null,
          subject: 'CN=Tag Signer,O=Forge Test',
          subject_key_identifier: null,
          crl_url: null,
        },
      },
    });

    // Trusted by the server's store and matched to a confirmed user, the same signature verifies.
    const previous = process.env.SSL_CERT_FILE;
    process.env.SSL_CERT_FILE = certificate;
    try {
      await server.dataSource.getRepository(User).update(signer.user.id, { confirmedAt: null });
      const unconfirmed = await server.request('GET', tagsPath(project, '/x509-signed/signature'));
      expect((unconfirmed.body as Json).verification_status).toBe('unverified');
      await server.dataSource.getRepository(User).update(signer.user.id, { confirmedAt: new Date() });
      const verified = await server.request('GET', tagsPath(project, '/x509-signed/signature'));
      expect((verified.body as Json).verification_status).toBe('verified');
    } finally {
      if (previous === undefined) delete process.env.SSL_CERT_FILE;
      else process.env.SSL_CERT_FILE = previous;
    }
  });
});

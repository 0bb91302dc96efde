/**
 * No secret leaks: every kind of secret the server knows (the root token, personal, project and group
 * access tokens and their rotations, passwords, tokens in the query string, Sudo) goes through failing
 * and succeeding requests against the built server, and neither a response (headers and body) nor the
 * server's log output shows one, except the one response that creates a token. The root token is
 * printed only by the start that generated it.
 */
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createProcessDatabaseUrl } from '../helpers/database.js';
import { SERVER_ENTRY, serverPort, startServerProcess } from '../helpers/process.js';
import { sendRaw } from '../fuzz/http.js';

/** Below the ephemeral range, where no connection's own port can take it (see serverPort). */
const freePort = () => String(serverPort());

const run = promisify(execFile);
const children: ChildProcess[] = [];
const dirs: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-secrets-'));
  dirs.push(dir);
  return dir;
};
const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');
/** A password digest as the server stores it: scrypt salt and hash in hex. */
const PASSWORD_DIGEST = /[0-9a-f]{32}:[0-9a-f]{128}/;

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const stopped = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

interface Seen {
  label: string;
  /** Status line, every header and the body, as the client received them. */
  text: string;
  /** The secrets this response exists to hand out (a created or rotated token). */
  hands: string[];
}

describe.runIf(fs.existsSync(SERVER_ENTRY))('secrets', () => {
  it('never appear in a response or in the log, except where a token is created', async () => {
    const rootToken = `glpat-root-${crypto.randomBytes(12).toString('hex')}`;
    const port = freePort();
    const base = new URL(`http://127.0.0.1:${port}`);
    const databaseUrl = await createProcessDatabaseUrl();
    const server = startServerProcess(
      {
        ...process.env,
        PORT: port,
        HOST: '127.0.0.1',
        DATA_DIR: tempDir(),
        DATABASE_URL: databaseUrl,
        FORGE_ROOT_TOKEN: rootToken,
        LOG_LEVEL: 'debug',
      },
      children,
    );
    // Everything it prints: what came before it was ready, then the rest.
    let output = await server.ready;
    server.child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));

    const secrets = new Map<string, string>([['root token', rootToken]]);
    const seen: Seen[] = [];
    const call = async (
      label: string,
      method: string,
      route: string,
      options: {
        headers?: Record<string, string>;
        json?: unknown;
        hands?: (body: Record<string, unknown>) => string;
      } = {},
    ) => {
      const headers = { ...options.headers };
      if (options.json !== undefined) headers['Content-Type'] = 'application/json';
      const answer = await sendRaw(
        base,
        {
          method,
          path: `/api/v4${route}`,
          headers,
          body: options.json === undefined ? undefined : Buffer.from(JSON.stringify(options.json)),
        },
        { timeoutMs: 30_000 },
      );
      const bodyText = answer.body.toString('utf8');
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(bodyText) as Record<string, unknown>;
      } catch {
        // not JSON
      }
      const handed = answer.status < 300 && options.hands ? options.hands(body) : undefined;
      const text = [
        `${answer.status}`,
        ...Object.entries(answer.headers).map(([name, value]) => `${name}: ${String(value)}`),
        bodyText,
      ].join('\n');
      seen.push({
        label: `${label} (${method} ${route.slice(0, 80)} → ${answer.status})`,
        text,
        hands: handed ? [handed] : [],
      });
      return { status: answer.status, body };
    };
    const asRoot = { 'PRIVATE-TOKEN': rootToken };
    const tokenOf = (body: Record<string, unknown>) => String(body.token);

    // A user with a password, created, changed, listed.
    const password = `pw-${crypto.randomBytes(9).toString('hex')}`;
    secrets.set('password', password);
    const alice = await call('create a user with a password', 'POST', '/users', {
      headers: asRoot,
      json: {
        username: 'alice',
        name: 'Alice',
        email: 'alice@example.com',
        password,
        skip_confirmation: true,
      },
    });
    expect(alice.status).toBe(201);
    const aliceId = Number(alice.body.id);
    const newPassword = `pw-${crypto.randomBytes(9).toString('hex')}`;
    secrets.set('changed password', newPassword);
    expect(
      (
        await call('change the password', 'PUT', `/users/${aliceId}`, {
          headers: asRoot,
          json: { password: newPassword },
        })
      ).status,
    ).toBe(200);
    const shortPassword = `p${crypto.randomBytes(2).toString('hex')}`;
    secrets.set('refused password', shortPassword);
    expect(
      (
        await call('a password too short', 'POST', '/users', {
          headers: asRoot,
          json: { username: 'bob', name: 'Bob', email: 'bob@example.com', password: shortPassword },
        })
      ).status,
    ).toBe(400);
    await call('list users', 'GET', '/users?per_page=100', { headers: asRoot });
    await call('a user', 'GET', `/users/${aliceId}`, { headers: asRoot });

    // Failed user writes reach the database with the digest and the e-mail among their values.
    const failedPassword = `pw-${crypto.randomBytes(9).toString('hex')}`;
    const failedEmail = `carol-${crypto.randomBytes(4).toString('hex')}@example.com`;
    secrets.set('password of a failed write', failedPassword);
    secrets.set('e-mail of a failed write', failedEmail);
    await call('a user write the database refuses (NUL)', 'POST', '/users', {
      headers: asRoot,
      json: { username: 'carol', name: 'Ca\u0000rol', email: failedEmail, password: failedPassword },
    });
    if (databaseUrl) {
      // A trigger refuses the write whatever the input validation lets through.
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      await client.query(`
        CREATE FUNCTION refuse_for_test() RETURNS trigger LANGUAGE plpgsql AS
          $$ BEGIN RAISE EXCEPTION 'refused by the secrets test'; END $$;
        CREATE TRIGGER refuse_for_test BEFORE INSERT OR UPDATE ON users FOR EACH ROW
          WHEN (NEW.username LIKE 'refused%') EXECUTE FUNCTION refuse_for_test();`);
      await client.end();
      const refused = await call('a user insert the database refuses', 'POST', '/users', {
        headers: asRoot,
        json: { username: 'refused', name: 'Refused', email: failedEmail, password: failedPassword },
      });
      expect(refused.status).toBe(500);
      const dave = await call('create dave', 'POST', '/users', {
        headers: asRoot,
        json: {
          username: 'refused-dave',
          name: 'Dave',
          email: 'dave@example.com',
          force_random_password: true,
        },
      });
      expect(dave.status).toBe(500);
    }

    // Personal access tokens: created, used every way, refused, rotated, revoked.
    const created = await call(
      'create a personal access token',
      'POST',
      `/users/${aliceId}/personal_access_tokens`,
      {
        headers: asRoot,
        json: { name: 'laptop', scopes: ['api'] },
        hands: tokenOf,
      },
    );
    const pat = tokenOf(created.body);
    secrets.set('personal access token', pat);
    await call('header', 'GET', '/user', { headers: { 'PRIVATE-TOKEN': pat } });
    await call('Bearer', 'GET', '/user', { headers: { Authorization: `Bearer ${pat}` } });
    await call('query string, a page with links', 'GET', `/users?per_page=1&private_token=${pat}`);
    await call('query string, a project list', 'GET', `/projects?per_page=1&private_token=${pat}`);
    await call('query string, not found', 'GET', `/projects/999999?private_token=${pat}`);
    await call('query string, a bad parameter', 'GET', `/projects?page=abc&private_token=${pat}`);
    await call('query string, out of range', 'GET', `/projects?page=2147483648&private_token=${pat}`);
    await call('query string, unknown route', 'GET', `/nowhere?private_token=${pat}`);
    await call('query string, HEAD', 'HEAD', `/users?private_token=${pat}`);
    await call('query string, a refused write', 'POST', `/projects?private_token=${pat}`, {
      json: { name: '' },
    });
    await call('forbidden', 'GET', `/sidekiq/queue_metrics?private_token=${pat}`);
    await call('the token itself', 'GET', '/personal_access_tokens/self', {
      headers: { 'PRIVATE-TOKEN': pat },
    });
    await call('the token list', 'GET', '/personal_access_tokens', { headers: asRoot });
    await call('a token that is almost it', 'GET', '/user', { headers: { 'PRIVATE-TOKEN': `${pat}x` } });
    await call('Sudo from a non-administrator', 'GET', '/user', {
      headers: { 'PRIVATE-TOKEN': pat, Sudo: 'root' },
    });
    const rotated = await call('rotate it', 'POST', '/personal_access_tokens/self/rotate', {
      headers: { 'PRIVATE-TOKEN': pat },
      hands: tokenOf,
    });
    const pat2 = tokenOf(rotated.body);
    secrets.set('rotated personal access token', pat2);
    expect(
      (await call('the rotated-away token', 'GET', '/user', { headers: { 'PRIVATE-TOKEN': pat } })).status,
    ).toBe(401);
    await call('the new token', 'GET', `/user?private_token=${pat2}`);
    const byId = await call(
      'rotate by id',
      'POST',
      `/personal_access_tokens/${Number(rotated.body.id)}/rotate`,
      {
        headers: asRoot,
        hands: tokenOf,
      },
    );
    const pat3 = tokenOf(byId.body);
    secrets.set('personal access token rotated by id', pat3);
    await call('revoke it', 'DELETE', '/personal_access_tokens/self', { headers: { 'PRIVATE-TOKEN': pat3 } });
    await call('the revoked token', 'GET', `/user?private_token=${pat3}`);

    // Project and group access tokens.
    const project = await call('a project', 'POST', '/projects', {
      headers: asRoot,
      json: { name: 'vault', initialize_with_readme: true },
    });
    const projectId = Number(project.body.id);
    const projectToken = await call(
      'create a project access token',
      'POST',
      `/projects/${projectId}/access_tokens`,
      {
        headers: asRoot,
        json: { name: 'ci', scopes: ['api'], access_level: 40, expires_at: '2099-01-01' },
        hands: tokenOf,
      },
    );
    const pt = tokenOf(projectToken.body);
    secrets.set('project access token', pt);
    await call('use it', 'GET', `/projects/${projectId}/repository/tree?private_token=${pt}`);
    await call('list them', 'GET', `/projects/${projectId}/access_tokens`, { headers: asRoot });
    const ptRotated = await call('rotate it', 'POST', `/projects/${projectId}/access_tokens/self/rotate`, {
      headers: { 'PRIVATE-TOKEN': pt },
      hands: tokenOf,
    });
    secrets.set('rotated project access token', tokenOf(ptRotated.body));
    await call('the old one', 'GET', `/projects/${projectId}`, { headers: { 'PRIVATE-TOKEN': pt } });
    const group = await call('a group', 'POST', '/groups', {
      headers: asRoot,
      json: { name: 'safe', path: 'safe' },
    });
    const groupId = Number(group.body.id);
    const groupToken = await call('create a group access token', 'POST', `/groups/${groupId}/access_tokens`, {
      headers: asRoot,
      json: { name: 'release', scopes: ['api'], access_level: 40, expires_at: '2099-01-01' },
      hands: tokenOf,
    });
    const gt = tokenOf(groupToken.body);
    secrets.set('group access token', gt);
    await call('use it', 'GET', `/groups/${groupId}`, { headers: { Authorization: `Bearer ${gt}` } });
    const gtRotated = await call(
      'rotate it by id',
      'POST',
      `/groups/${groupId}/access_tokens/${Number(groupToken.body.id)}/rotate`,
      {
        headers: asRoot,
        hands: tokenOf,
      },
    );
    secrets.set('rotated group access token', tokenOf(gtRotated.body));
    await call(
      'revoke the new one',
      'DELETE',
      `/groups/${groupId}/access_tokens/${Number(gtRotated.body.id)}`,
      { headers: asRoot },
    );

    // Job tokens (no job has one yet: each is refused) and Sudo with the root token.
    const jobToken = `glcbt-${crypto.randomBytes(10).toString('hex')}`;
    secrets.set('job token', jobToken);
    await call('job_token in the query', 'GET', `/projects?job_token=${jobToken}`);
    await call('JOB-TOKEN header', 'GET', '/projects', { headers: { 'JOB-TOKEN': jobToken } });
    await call('Sudo', 'GET', '/user', { headers: { ...asRoot, Sudo: 'alice' } });
    await call('Sudo by id in the query', 'GET', `/user?sudo=${aliceId}&private_token=${rootToken}`);
    await call('Sudo nobody', 'GET', '/user', { headers: { ...asRoot, Sudo: 'nobody' } });
    await call('Sudo out of range', 'GET', '/user', { headers: { ...asRoot, Sudo: '2147483648' } });
    await call('root token, a page with links', 'GET', `/projects?per_page=1&private_token=${rootToken}`);

    await stopped(server.child);

    const leaks: string[] = [];
    for (const [name, secret] of secrets) {
      for (const needle of [secret, sha256(secret)]) {
        const what = needle === secret ? name : `sha256 of the ${name}`;
        for (const response of seen)
          if (!response.hands.includes(needle) && response.text.includes(needle))
            leaks.push(`${what} in the response to ${response.label}`);
        if (output.includes(needle)) leaks.push(`${what} in the server's output`);
      }
    }
    for (const response of seen)
      if (PASSWORD_DIGEST.test(response.text))
        leaks.push(`a password digest in the response to ${response.label}`);
    if (PASSWORD_DIGEST.test(output)) leaks.push("a password digest in the server's output");
    expect(leaks).toEqual([]);
    // The refused writes were logged, with what failed: the log was looked at, not empty.
    if (databaseUrl) expect(output).toContain('refused by the secrets test');
    expect(output).toContain('"level":30');
  }, 120_000);

  it('prints the root token once, on the start that generated it', async () => {
    const dataDir = tempDir();
    const env = {
      ...process.env,
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: await createProcessDatabaseUrl(),
      FORGE_ROOT_TOKEN: '',
      LOG_LEVEL: 'info',
    };
    // `make run`: setup generates it, then the server starts; neither start again shows it.
    const setup = () => run(process.execPath, ['dist/src/cli/setup.js'], { env });
    const first = await setup();
    const token = fs.readFileSync(path.join(dataDir, 'root-token'), 'utf8').trim();
    expect(first.stdout.split(token).length - 1).toBe(1);
    const start = async () => {
      const server = startServerProcess({ ...env, PORT: freePort() }, children);
      const output = await server.ready;
      await stopped(server.child);
      return output;
    };
    const outputs = [await start(), (await setup()).stdout, await start()];
    for (const output of outputs) expect(output).not.toContain(token);
    expect(outputs[1]).toContain('Root token: saved in');

    // FORGE_ROOT_TOKEN is never printed, by setup or by the server.
    const chosen = `glpat-chosen-${crypto.randomBytes(8).toString('hex')}`;
    const withChosen = { ...env, FORGE_ROOT_TOKEN: chosen };
    const setupOutput = await run(process.execPath, ['dist/src/cli/setup.js'], { env: withChosen });
    expect(setupOutput.stdout).toContain('Root token: from FORGE_ROOT_TOKEN');
    const server = startServerProcess({ ...withChosen, PORT: freePort() }, children);
    const serverOutput = await server.ready;
    await stopped(server.child);
    expect(`${setupOutput.stdout}${setupOutput.stderr}${serverOutput}`).not.toContain(chosen);
  }, 120_000);
});

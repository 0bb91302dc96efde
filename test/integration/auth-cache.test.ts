/**
 * Authentication keeps each token's principal in memory (src/db/change-cache.ts): whatever changes a
 * token or its user, by the API or by SQL, the very next request is answered as if nothing were cached,
 * here and in a second server process on the same PostgreSQL database.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { SERVER_ENTRY, serverPort, startServerProcess } from '../helpers/process.js';
import { send, useTestServer, type TestResponse } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

/** Two requests: the first fills the cache, the second is served from it. */
async function warm(token: string, path = '/user'): Promise<TestResponse> {
  expect((await server.request('GET', path, { token })).status).toBe(200);
  const second = await server.request('GET', path, { token });
  expect(second.status).toBe(200);
  return second;
}

const admin = () => server.factories.user({ admin: true });

afterEach(() => {
  vi.useRealTimers();
});

describe('a cached token', () => {
  it('is served from memory: a change the triggers do not announce goes unseen until one is', async () => {
    const member = await server.factories.user({ name: 'Before' });
    expect((await warm(member.token)).body).toMatchObject({ name: 'Before' });
    // Only possible behind the application's back: triggers off for one transaction.
    await server.dataSource.transaction(async (tx) => {
      await tx.query(`SET LOCAL session_replication_role = replica`);
      await tx.query(`UPDATE users SET name = 'Behind' WHERE id = $1`, [member.user.id]);
    });
    expect((await server.request('GET', '/user', { token: member.token })).body).toMatchObject({
      name: 'Before',
    });
    await server.dataSource.query(`UPDATE users SET note = 'announced' WHERE id = $1`, [member.user.id]);
    expect((await server.request('GET', '/user', { token: member.token })).body).toMatchObject({
      name: 'Behind',
    });
  });

  it('answers 401 once revoked through the API, by itself or by an administrator', async () => {
    const member = await server.factories.user();
    await warm(member.token);
    const revoked = await server.request('DELETE', '/personal_access_tokens/self', { token: member.token });
    expect(revoked.status).toBe(204);
    expect((await server.request('GET', '/user', { token: member.token })).status).toBe(401);

    const other = await server.factories.user();
    await warm(other.token);
    const self = await server.request('GET', '/personal_access_tokens/self', { token: other.token });
    const root = await admin();
    const byAdmin = await server.request('DELETE', `/personal_access_tokens/${(self.body as Json).id}`, {
      token: root.token,
    });
    expect(byAdmin.status).toBe(204);
    expect((await server.request('GET', '/projects', { token: other.token })).status).toBe(401);
  });

  it('answers 401 once rotated, and the new token works', async () => {
    const member = await server.factories.user();
    await warm(member.token);
    const rotated = await server.request('POST', '/personal_access_tokens/self/rotate', {
      token: member.token,
    });
    expect(rotated.status).toBe(200);
    expect((await server.request('GET', '/user', { token: member.token })).status).toBe(401);
    const fresh = (rotated.body as Json).token as string;
    expect((await server.request('GET', '/user', { token: fresh })).status).toBe(200);
  });

  it('answers 401 once its user is blocked, and works again once unblocked', async () => {
    const member = await server.factories.user();
    const root = await admin();
    await warm(member.token);
    expect(
      (await server.request('POST', `/users/${member.user.id}/block`, { token: root.token })).status,
    ).toBe(201);
    expect((await server.request('GET', '/user', { token: member.token })).status).toBe(401);
    await server.request('POST', `/users/${member.user.id}/unblock`, { token: root.token });
    expect((await server.request('GET', '/user', { token: member.token })).status).toBe(200);
  });

  it('answers 401 once its user or the token is deleted', async () => {
    const member = await server.factories.user();
    await warm(member.token);
    await server.dataSource.query('DELETE FROM personal_access_tokens WHERE user_id = $1', [member.user.id]);
    expect((await server.request('GET', '/user', { token: member.token })).status).toBe(401);

    const gone = await server.factories.user();
    await warm(gone.token);
    await server.dataSource.query('DELETE FROM namespaces WHERE owner_id = $1', [gone.user.id]);
    await server.dataSource.query('DELETE FROM users WHERE id = $1', [gone.user.id]);
    expect((await server.request('GET', '/user', { token: gone.token })).status).toBe(401);
  });

  it('answers 401 once its expiry is moved to today', async () => {
    const member = await server.factories.user();
    await warm(member.token);
    await server.dataSource.query(`UPDATE personal_access_tokens SET expires_at = $2 WHERE user_id = $1`, [
      member.user.id,
      new Date().toISOString().slice(0, 10),
    ]);
    expect((await server.request('GET', '/user', { token: member.token })).status).toBe(401);
  });

  it('answers 401 from the day it expires, with nothing written', async () => {
    const member = await server.factories.user();
    const token = await server.factories.token(member.user, ['api'], { expiresAt: '2100-01-02' });
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2100-01-01T23:59:58Z') });
    await warm(token);
    // Two seconds later: well within the cache's lifetime, but another day.
    vi.setSystemTime(new Date('2100-01-02T00:00:00Z'));
    expect((await server.request('GET', '/user', { token })).status).toBe(401);

    // A clock set back brings its own day back: a token that expires tomorrow is usable today again.
    vi.useRealTimers();
    const tomorrow = new Date(Date.now() + 24 * 60 * 60 * 1000).toISOString().slice(0, 10);
    const current = await server.factories.token(member.user, ['api'], { expiresAt: tomorrow });
    expect((await server.request('GET', '/user', { token: current })).status).toBe(200);
  });

  it('answers 403 once its scopes are narrowed', async () => {
    const member = await server.factories.user();
    await warm(member.token, '/projects');
    await server.dataSource.query(
      `UPDATE personal_access_tokens SET scopes = '{read_user}' WHERE user_id = $1`,
      [member.user.id],
    );
    const refused = await server.request('GET', '/projects', { token: member.token });
    expect(refused.status).toBe(403);
    expect((refused.body as Json).error).toBe('insufficient_scope');
  });

  it('drops the admin and external flags and shows the user’s new fields at once', async () => {
    const root = await admin();
    const other = await admin();
    expect((await warm(other.token)).body).toMatchObject({ is_admin: true, external: false });
    const asAdmin = await warm(other.token, `/users/${root.user.id}`);
    expect((asAdmin.body as Json).is_admin).toBe(true);
    const updated = await server.request('PUT', `/users/${other.user.id}`, {
      token: root.token,
      json: { admin: false, external: true, name: 'Renamed' },
    });
    expect(updated.status).toBe(200);
    const after = await server.request('GET', '/user', { token: other.token });
    expect(after.body).toMatchObject({ name: 'Renamed', external: true });
    expect((after.body as Json).is_admin).toBeUndefined();
    const asMember = await server.request('GET', `/users/${root.user.id}`, { token: other.token });
    expect(asMember.status).toBe(200);
    expect((asMember.body as Json).is_admin).toBeUndefined();
  });

  it('shows can_create_project as the personal projects and the limit change', async () => {
    const member = await server.factories.user();
    const root = await admin();
    await server.request('PUT', `/users/${member.user.id}`, {
      token: root.token,
      json: { projects_limit: 1 },
    });
    expect((await warm(member.token)).body).toMatchObject({ can_create_project: true });
    const created = await server.request('POST', '/projects', {
      token: member.token,
      json: { name: 'mine' },
    });
    expect(created.status).toBe(201);
    expect((await server.request('GET', '/user', { token: member.token })).body).toMatchObject({
      can_create_project: false,
    });
    await server.request('PUT', `/users/${member.user.id}`, {
      token: root.token,
      json: { projects_limit: 2 },
    });
    expect((await server.request('GET', '/user', { token: member.token })).body).toMatchObject({
      can_create_project: true,
    });
  });

  it('keeps sudo working, and refuses it once the administrator is demoted', async () => {
    const root = await admin();
    const sudo = await server.factories.token(root.user, ['api', 'sudo']);
    const target = await server.factories.user();
    const as = { token: sudo, headers: { Sudo: target.user.username } };
    expect(((await warm(sudo)).body as Json).id).toBe(root.user.id);
    expect(((await server.request('GET', '/user', as)).body as Json).id).toBe(target.user.id);
    await server.dataSource.query('UPDATE users SET admin = false WHERE id = $1', [root.user.id]);
    expect((await server.request('GET', '/user', as)).status).toBe(403);
  });
});

// ---------- a second server process on the same PostgreSQL database ----------

const postgres = process.env.FORGE_TEST_DATABASE_URL;
const children: ChildProcess[] = [];
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-auth-cache-'));

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe.runIf(postgres && fs.existsSync(SERVER_ENTRY))('another process on the same database', () => {
  it('hears of revocation, blocking and new fields before the next request', async () => {
    const port = String(serverPort());
    const other = startServerProcess(
      {
        ...process.env,
        PORT: port,
        DATA_DIR: dataDir,
        DATABASE_URL: (server.dataSource.options as { url: string }).url,
        FORGE_ROOT_TOKEN: 'glpat-auth-cache-second-process',
        LOG_LEVEL: 'warn',
      },
      children,
    );
    await other.ready;
    const there = (token: string) => send(`http://127.0.0.1:${port}/api/v4/user`, 'GET', { token });
    const root = await admin();

    const revoked = await server.factories.user({ name: 'First' });
    const blocked = await server.factories.user();
    for (const user of [revoked, blocked]) {
      expect((await there(user.token)).status).toBe(200);
      expect((await there(user.token)).status).toBe(200);
    }
    await server.request('PUT', `/users/${revoked.user.id}`, { token: root.token, json: { name: 'Second' } });
    expect((await there(revoked.token)).body).toMatchObject({ name: 'Second' });
    await server.request('DELETE', '/personal_access_tokens/self', { token: revoked.token });
    expect((await there(revoked.token)).status).toBe(401);
    await server.request('POST', `/users/${blocked.user.id}/block`, { token: root.token });
    expect((await there(blocked.token)).status).toBe(401);
  });
});

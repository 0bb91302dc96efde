import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVER_ENTRY, serverPort, startServerProcess } from '../helpers/process.js';

/** The built entry point: embedded database, root bootstrap, graceful stop. */
const entry = SERVER_ENTRY;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-start-'));
const children: ChildProcess[] = [];

const start = (env: Record<string, string>) =>
  startServerProcess(
    { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'warn', DATA_DIR: dataDir, ...env },
    children,
  );

const stopped = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe.runIf(fs.existsSync(entry))('starting the built server', () => {
  it('creates root on the embedded database, prints its token once, and stops on SIGTERM', async () => {
    const port = String(serverPort());
    const first = start({ PORT: port });
    const output = await first.ready;
    const token = /root token \(shown once[^)]*\): (glpat-\S+)/.exec(output)?.[1];
    expect(token).toBeDefined();
    const tokenFile = path.join(dataDir, 'root-token');
    expect(fs.readFileSync(tokenFile, 'utf8').trim()).toBe(token);
    expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600);

    const response = await fetch(`http://127.0.0.1:${port}/api/v4/projects`, {
      headers: { 'PRIVATE-TOKEN': token! },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const created = await fetch(`http://127.0.0.1:${port}/api/v4/projects`, {
      method: 'POST',
      headers: { 'PRIVATE-TOKEN': token!, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'kept' }),
    });
    expect(created.status).toBe(201);

    const exit = stopped(first.child);
    first.child.kill('SIGTERM');
    expect(await exit).toBe(0);

    // A second start keeps the data and does not print the token again.
    const second = start({ PORT: port, FORGE_ROOT_TOKEN: 'glpat-operator-chosen-token' });
    const again = await second.ready;
    expect(again).not.toContain(token);
    const list = await fetch(`http://127.0.0.1:${port}/api/v4/projects?search=kept`, {
      headers: { 'PRIVATE-TOKEN': 'glpat-operator-chosen-token' },
    });
    expect(((await list.json()) as unknown[]).length).toBe(1);
    const secondExit = stopped(second.child);
    second.child.kill('SIGTERM');
    expect(await secondExit).toBe(0);
  }, 120_000);
});

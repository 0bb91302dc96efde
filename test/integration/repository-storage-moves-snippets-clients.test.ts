/** Snippet repository storage moves through the real clients: @gitbeaker/rest and python-gitlab. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, describe, expect, it } from 'vitest';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const second = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-snippet-moves-clients-'));
const server = useTestServer({ env: { FORGE_STORAGES: `second=${second}`, FORGE_JOB_POLL: '0.5' } });
afterAll(() => fs.rmSync(second, { recursive: true, force: true }));

async function settle<T extends { state: unknown }>(read: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const move = await read();
    if (['finished', 'failed', 'cleanup_failed'].includes(move.state as string)) return move;
    if (Date.now() > deadline) throw new Error(`move still ${String(move.state)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('@gitbeaker/rest', () => {
  it('schedules, shows and lists snippet moves, and moves a whole storage', async () => {
    const admin = (await server.factories.caller('admin'))!;
    const api = new Gitlab({ host: server.url, token: admin.token });
    const snippet = await api.Snippets.create('moved by gitbeaker', {
      files: [{ filePath: 'a.txt', content: 'gitbeaker' }],
    } as never);
    const moves = api.SnippetRepositoryStorageMoves;

    const move = await moves.schedule('default', { snippetId: snippet.id, destinationStorageName: 'second' });
    expect(move).toMatchObject({
      state: 'scheduled',
      source_storage_name: 'default',
      destination_storage_name: 'second',
      snippet: { id: snippet.id, title: 'moved by gitbeaker', project_id: null },
    });
    const done = await settle(() => moves.show(move.id, { snippetId: snippet.id }));
    expect(done.state).toBe('finished');
    expect((await moves.all({ snippetId: snippet.id })).map((m) => m.id)).toEqual([move.id]);
    expect((await moves.all()).map((m) => m.id)).toContain(move.id);
    expect((await moves.show(move.id)).snippet).toMatchObject({ id: snippet.id });
    expect(String(await api.Snippets.showContent(snippet.id))).toBe('gitbeaker');

    // The whole storage back to `default`.
    expect(await moves.schedule('second', { destinationStorageName: 'default' })).toEqual({
      message: '202 Accepted',
    });
    const back = await settle(async () => {
      const [latest] = await moves.all({ snippetId: snippet.id });
      return latest.id === move.id ? { ...latest, state: 'waiting' } : latest;
    });
    expect(back).toMatchObject({ state: 'finished', source_storage_name: 'second' });
    expect(String(await api.Snippets.showContent(snippet.id))).toBe('gitbeaker');
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)('drives snippet moves (needs Debian python3-gitlab)', async () => {
    const admin = (await server.factories.caller('admin'))!;
    const stdout = await runPythonClient('python_gitlab_snippet_repository_storage_moves.py', [
      server.url,
      admin.token,
    ]);
    const result = JSON.parse(stdout.trim()) as { scheduled: unknown[] };
    expect(result).toEqual({
      scheduled: ['scheduled', 'default', 'second', expect.any(Number)],
      done: 'finished',
      listed: true,
      raw: 'print(1)\n',
      unknown: [400, { destination_storage_name: ['is not included in the list'] }],
      bulk: { message: '202 Accepted' },
    });
  });
});

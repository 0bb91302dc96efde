/** Repository storage moves through the real clients: @gitbeaker/rest and python-gitlab. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, describe, expect, it } from 'vitest';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const second = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-moves-clients-'));
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
  it('schedules, shows and lists project moves, and moves a whole storage', async () => {
    const admin = (await server.factories.caller('admin'))!;
    const project = await server.factories.projectWithReadme({ owner: admin });
    const api = new Gitlab({ host: server.url, token: admin.token });
    const moves = api.ProjectRepositoryStorageMoves;

    // gitbeaker sends the source name too; the single-move endpoint takes the project's own storage.
    const move = await moves.schedule('default', { projectId: project.id, destinationStorageName: 'second' });
    expect(move).toMatchObject({
      state: 'scheduled',
      source_storage_name: 'default',
      destination_storage_name: 'second',
    });
    const done = await settle(() => moves.show(move.id, { projectId: project.id }));
    expect(done.state).toBe('finished');
    expect((await moves.all({ projectId: project.id })).map((m) => m.id)).toEqual([move.id]);
    expect((await moves.all()).map((m) => m.id)).toContain(move.id);
    expect((await moves.show(move.id)).project).toMatchObject({ id: project.id });
    const onSecond = await api.Projects.all({ repositoryStorage: 'second' } as never);
    expect(onSecond.map((p) => p.id)).toContain(project.id);

    // The whole storage back to `default`.
    expect(await moves.schedule('second', { destinationStorageName: 'default' })).toEqual({
      message: '202 Accepted',
    });
    const back = await settle(async () => {
      const [latest] = await moves.all({ projectId: project.id });
      return latest.id === move.id ? { ...latest, state: 'waiting' } : latest;
    });
    expect(back).toMatchObject({ state: 'finished', source_storage_name: 'second' });
    expect((await api.Projects.show(project.id)).repository_storage).toBe('default');

    const group = await server.factories.group();
    const groupMoves = api.GroupRepositoryStorageMoves;
    const groupMove = await groupMoves.schedule('default', {
      groupId: group.id,
      destinationStorageName: 'second',
    });
    expect((await settle(() => groupMoves.show(groupMove.id))).state).toBe('finished');
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)('drives project and group moves (needs Debian python3-gitlab)', async () => {
    const admin = (await server.factories.caller('admin'))!;
    const project = await server.factories.projectWithReadme({ owner: admin });
    const group = await server.factories.group();
    const stdout = await runPythonClient('python_gitlab_repository_storage_moves.py', [
      server.url,
      admin.token,
      String(project.id),
      String(group.id),
    ]);
    expect(JSON.parse(stdout.trim())).toEqual({
      scheduled: ['scheduled', 'default', 'second', project.id],
      done: 'finished',
      listed: true,
      on_second: true,
      repository_storage: 'second',
      unknown: [400, { destination_storage_name: ['is not included in the list'] }],
      bulk: { message: '202 Accepted' },
      group: ['finished', group.id],
    });
  });
});

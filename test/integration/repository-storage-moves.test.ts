/**
 * Repository storage moves, end to end on two real storages: a bulk move of every project on the
 * first, a push refused (over git and through the API) while a repository moves, every repository
 * cloned with identical refs from the second storage afterwards; GitLab's validation errors, a failed
 * move cleared by rescheduling, fork networks across a move, and group moves.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRefs } from '../../src/git/ref-store.js';
import { remoteUrl, useGitWorkDir } from '../helpers/git-cli.js';
import { useTestServer } from '../helpers/server.js';
import type { TestUser } from '../helpers/factories.js';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-storage-moves-'));
const second = path.join(scratch, 'second');
// A storage whose root is a file: every move there fails.
const broken = path.join(scratch, 'broken');
fs.mkdirSync(second);
fs.writeFileSync(broken, 'not a directory');
const pauseFile = path.join(scratch, 'pause');

const server = useTestServer({
  env: { FORGE_STORAGES: `second=${second},broken=${broken}`, FORGE_JOB_POLL: '0.5' },
});
const { work, gitCli } = useGitWorkDir('forge-moves-');

afterAll(() => {
  delete process.env.FORGE_FAULT_PAUSE;
  delete process.env.FORGE_FAULT_PAUSE_FILE;
  fs.rmSync(scratch, { recursive: true, force: true });
});

type Json = Record<string, unknown>;
let admin: TestUser;

beforeAll(async () => {
  admin = (await server.factories.caller('admin'))!;
});

const api = (method: string, route: string, json?: unknown, token = admin.token) =>
  server.request(method, route, { token, json });

async function until<T>(probe: () => Promise<T | undefined | false>, what: string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const movesOf = async (projectId: number) =>
  (await api('GET', `/projects/${projectId}/repository_storage_moves`)).body as Json[];

async function settled(projectId: number, moveId: number): Promise<Json> {
  return until(async () => {
    const move = (await api('GET', `/projects/${projectId}/repository_storage_moves/${moveId}`)).body as Json;
    return ['finished', 'failed', 'cleanup_failed'].includes(move.state as string) && move;
  }, `move ${moveId} settles`);
}

/** A project with a README and one more branch pushed with git; its full path and refs. */
async function pushedProject(name: string) {
  const project = await server.factories.projectWithReadme({ owner: admin });
  const fullPath = ((await api('GET', `/projects/${project.id}`)).body as Json).path_with_namespace as string;
  const url = remoteUrl(server.url, fullPath, admin.token);
  const dir = path.join(work, name);
  expect((await gitCli(['clone', '--quiet', url, dir])).ok).toBe(true);
  fs.writeFileSync(path.join(dir, 'pushed.txt'), name);
  await gitCli(['checkout', '-q', '-b', 'topic'], dir);
  await gitCli(['add', '.'], dir);
  await gitCli(['commit', '-q', '-m', `push to ${name}`], dir);
  expect((await gitCli(['push', '--quiet', 'origin', 'topic'], dir)).ok).toBe(true);
  await gitCli(['tag', 'v1'], dir);
  expect((await gitCli(['push', '--quiet', 'origin', 'v1'], dir)).ok).toBe(true);
  return { project, fullPath, url, dir, refs: await lsRemote(url) };
}

async function lsRemote(url: string): Promise<string> {
  const result = await gitCli(['ls-remote', url]);
  expect(result.ok).toBe(true);
  return result.stdout;
}

const diskPath = (storage: string, id: number) => server.services.storage.diskPath(storage, id);

describe('moving every project of a storage', () => {
  it(
    'refuses writes while a repository moves, then serves every repository from the destination',
    { timeout: 120_000 },
    async () => {
      const projects = [];
      for (const name of ['one', 'two', 'three']) projects.push(await pushedProject(name));
      // A merge request to merge during the move (its refs/merge-requests/1/head is part of the refs).
      const opened = await api('POST', `/projects/${projects[0].project.id}/merge_requests`, {
        source_branch: 'topic',
        target_branch: 'main',
        title: 'Topic',
      });
      expect(opened.status).toBe(201);
      projects[0].refs = await lsRemote(projects[0].url);

      // Hold each move after its copy, before the switch: the repository is read-only there.
      fs.writeFileSync(pauseFile, '');
      process.env.FORGE_FAULT_PAUSE_FILE = pauseFile;
      process.env.FORGE_FAULT_PAUSE = 'storage-move:replicated';
      const scheduled = await api('POST', '/project_repository_storage_moves', {
        source_storage_name: 'default',
        destination_storage_name: 'second',
      });
      expect(scheduled.status).toBe(202);
      expect(scheduled.body).toEqual({ message: '202 Accepted' });

      const [first] = projects;
      const moving = await until(async () => {
        const [move] = await movesOf(first.project.id);
        return move && ['scheduled', 'started'].includes(move.state as string) && move;
      }, 'the first project has a move in progress');
      expect(moving).toMatchObject({
        source_storage_name: 'default',
        destination_storage_name: 'second',
        project: { id: first.project.id, path_with_namespace: first.fullPath },
      });

      // git push: refused, with GitLab's message as a remote line.
      fs.writeFileSync(path.join(first.dir, 'late.txt'), 'late');
      await gitCli(['add', '.'], first.dir);
      await gitCli(['commit', '-q', '-m', 'late'], first.dir);
      const push = await gitCli(['push', 'origin', 'topic'], first.dir);
      expect(push.ok).toBe(false);
      expect(push.stderr).toContain(
        'remote: The repository is temporarily read-only. Please try again later.',
      );
      // API writes: refused with GitLab's status and message.
      const branch = await api('POST', `/projects/${first.project.id}/repository/branches`, {
        branch: 'during-move',
        ref: 'main',
      });
      expect(branch.status).toBe(400);
      expect(branch.body).toEqual({
        message: 'The repository is temporarily read-only. Please try again later.',
      });
      const file = await api('POST', `/projects/${first.project.id}/repository/files/new.txt`, {
        branch: 'main',
        content: 'x',
        commit_message: 'during the move',
      });
      expect(file.status).toBe(400);
      expect((file.body as Json).message).toBe(
        'The repository is temporarily read-only. Please try again later.',
      );
      // Merging: the same refusal, not 401, and nothing merged.
      const merge = await api('PUT', `/projects/${first.project.id}/merge_requests/1/merge`);
      expect([merge.status, merge.body]).toEqual([
        400,
        { message: 'The repository is temporarily read-only. Please try again later.' },
      ]);
      expect(((await api('GET', `/projects/${first.project.id}/merge_requests/1`)).body as Json).state).toBe(
        'opened',
      );
      // Reads keep working.
      expect((await api('GET', `/projects/${first.project.id}/repository/branches`)).status).toBe(200);
      expect(await lsRemote(first.url)).toBe(first.refs);
      // A second move of a repository being moved: GitLab's validation error.
      const again = await api('POST', `/projects/${first.project.id}/repository_storage_moves`, {
        destination_storage_name: 'second',
      });
      expect(again.status).toBe(400);
      expect(again.body).toEqual({ message: { project: ['is read-only'] } });

      fs.rmSync(pauseFile);
      for (const { project } of projects) {
        const [move] = await until(async () => {
          const moves = await movesOf(project.id);
          return moves.length > 0 && moves;
        }, 'a move is listed');
        expect(await settled(project.id, move.id as number)).toMatchObject({ state: 'finished' });
      }

      const onSecond = (await api('GET', '/projects?repository_storage=second&per_page=100')).body as Json[];
      const onDefault = (await api('GET', '/projects?repository_storage=default&per_page=100'))
        .body as Json[];
      for (const { project, url, refs } of projects) {
        expect(onSecond.map((p) => p.id)).toContain(project.id);
        expect(onDefault.map((p) => p.id)).not.toContain(project.id);
        expect(fs.existsSync(diskPath('second', project.id))).toBe(true);
        expect(fs.existsSync(diskPath('default', project.id))).toBe(false);
        // Cloned from the second storage, with exactly the refs it had.
        expect(await lsRemote(url)).toBe(refs);
        const clone = path.join(work, `clone-${project.id}`);
        expect((await gitCli(['clone', '--quiet', '--mirror', url, clone])).ok).toBe(true);
        expect((await gitCli(['fsck', '--no-progress'], clone)).ok).toBe(true);
      }
      // Writable again, on the new storage.
      const retry = await gitCli(['push', '--quiet', 'origin', 'topic'], first.dir);
      expect(retry.ok).toBe(true);
      const head = (await readRefs(diskPath('second', first.project.id))).find(
        (r) => r.ref === 'refs/heads/topic',
      );
      expect(head?.sha).toBe((await gitCli(['rev-parse', 'HEAD'], first.dir)).stdout.trim());

      const all = (await api('GET', '/project_repository_storage_moves?per_page=2')).body as Json[];
      expect(all).toHaveLength(2);
      const one = await api('GET', `/project_repository_storage_moves/${all[0].id as number}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(all[0]);
    },
  );
});

describe('scheduling errors and failures', () => {
  it.each([
    [
      'an unknown destination',
      (id: number) => [`/projects/${id}/repository_storage_moves`, { destination_storage_name: 'nowhere' }],
      { message: { destination_storage_name: ['is not included in the list'] } },
    ],
    [
      'an unknown bulk source',
      () => ['/project_repository_storage_moves', { source_storage_name: 'nowhere' }],
      { error: 'source_storage_name does not have a valid value' },
    ],
    [
      'an unknown bulk destination',
      () => [
        '/project_repository_storage_moves',
        { source_storage_name: 'default', destination_storage_name: 'nowhere' },
      ],
      { error: 'destination_storage_name does not have a valid value' },
    ],
    [
      'a bulk move without a source',
      () => ['/group_repository_storage_moves', {}],
      { error: 'source_storage_name is missing' },
    ],
  ] as const)('refuses %s with 400', async (_, call, expected) => {
    const project = await server.factories.projectWithReadme({ owner: admin });
    const [route, body] = call(project.id);
    const response = await api('POST', route as string, body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual(expected);
  });

  it('a failed move leaves the project on its storage and writable; rescheduling clears it', async () => {
    const { project, url, refs, dir } = await pushedProject('failing');
    const failed = await api('POST', `/projects/${project.id}/repository_storage_moves`, {
      destination_storage_name: 'broken',
    });
    expect(failed.status).toBe(201);
    expect(failed.body).toMatchObject({ state: 'scheduled', destination_storage_name: 'broken' });
    expect(await settled(project.id, (failed.body as Json).id as number)).toMatchObject({ state: 'failed' });
    expect(await lsRemote(url)).toBe(refs);
    expect((await gitCli(['push', '--quiet', 'origin', 'HEAD:refs/heads/after-failure'], dir)).ok).toBe(true);

    const moved = await api('POST', `/projects/${project.id}/repository_storage_moves`, {
      destination_storage_name: 'second',
    });
    expect(moved.status).toBe(201);
    expect(await settled(project.id, (moved.body as Json).id as number)).toMatchObject({ state: 'finished' });
    expect((await lsRemote(url)).split('\n')).toContain(
      (await lsRemote(url)).split('\n').find((line) => line.endsWith('refs/heads/after-failure')),
    );
    expect(fs.existsSync(diskPath('default', project.id))).toBe(false);
  });

  it('a move to the storage the project is on copies nothing and finishes', async () => {
    const { project, url, refs } = await pushedProject('same');
    const move = await api('POST', `/projects/${project.id}/repository_storage_moves`, {
      destination_storage_name: 'default',
    });
    expect(move.status).toBe(201);
    expect(await settled(project.id, (move.body as Json).id as number)).toMatchObject({ state: 'finished' });
    expect(await lsRemote(url)).toBe(refs);
    expect(fs.existsSync(diskPath('default', project.id))).toBe(true);
  });

  it('answers 404 for a move of another project and for a missing one', async () => {
    const a = await server.factories.projectWithReadme({ owner: admin });
    const b = await server.factories.projectWithReadme({ owner: admin });
    const move = (await api('POST', `/projects/${a.id}/repository_storage_moves`, {})).body as Json;
    const elsewhere = await api('GET', `/projects/${b.id}/repository_storage_moves/${move.id as number}`);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toEqual({ message: '404 Not found' });
    expect((await api('GET', '/project_repository_storage_moves/2147483647')).status).toBe(404);
    expect((await api('GET', `/group_repository_storage_moves/${move.id as number}`)).status).toBe(404);
    await settled(a.id, move.id as number);
  });
});

describe('fork networks', () => {
  it('a moved lender gives its forks their own objects; a moved fork stays whole', async () => {
    const { project: source, url: sourceUrl } = await pushedProject('lender');
    const forked = await api('POST', `/projects/${source.id}/fork`, {
      path: `fork-${source.id}`,
      name: `fork-${source.id}`,
    });
    expect(forked.status).toBe(201);
    const fork = forked.body as Json;
    const forkId = fork.id as number;
    await until(async () => {
      const state = (await api('GET', `/projects/${forkId}`)).body as Json;
      return state.import_status === 'finished' || state.import_status === 'none';
    }, 'the fork is ready');
    const forkUrl = remoteUrl(server.url, fork.path_with_namespace as string, admin.token);
    const forkRefs = await lsRemote(forkUrl);

    const lenderMove = (
      await api('POST', `/projects/${source.id}/repository_storage_moves`, {
        destination_storage_name: 'second',
      })
    ).body as Json;
    expect(await settled(source.id, lenderMove.id as number)).toMatchObject({ state: 'finished' });
    const forkClone = path.join(work, `fork-clone-${forkId}`);
    expect((await gitCli(['clone', '--quiet', '--mirror', forkUrl, forkClone])).ok).toBe(true);
    expect((await gitCli(['fsck', '--no-progress'], forkClone)).ok).toBe(true);
    expect(await lsRemote(forkUrl)).toBe(forkRefs);

    const forkMove = (
      await api('POST', `/projects/${forkId}/repository_storage_moves`, {
        destination_storage_name: 'second',
      })
    ).body as Json;
    expect(await settled(forkId, forkMove.id as number)).toMatchObject({ state: 'finished' });
    expect(await lsRemote(forkUrl)).toBe(forkRefs);
    const again = path.join(work, `fork-again-${forkId}`);
    expect((await gitCli(['clone', '--quiet', '--mirror', forkUrl, again])).ok).toBe(true);
    expect((await gitCli(['fsck', '--no-progress'], again)).ok).toBe(true);
    expect(await lsRemote(sourceUrl)).toBeTruthy();
  });
});

describe('storage recovery', () => {
  it("removes a dead move's copy, and leaves a live one", async () => {
    const project = await server.factories.projectWithReadme({ owner: admin });
    const target = diskPath('second', project.id);
    const dead = `${target}.moving-deadbeef`;
    const live = `${target}.moving-0123abcd`;
    for (const dir of [dead, live]) fs.mkdirSync(path.join(dir, 'objects'), { recursive: true });
    const past = new Date(Date.now() - 3_600_000);
    for (const item of [path.join(dead, 'objects'), dead]) fs.utimesSync(item, past, past);
    const report = await server.services.storageRecovery.recover({
      staleBefore: new Date(Date.now() - 60_000),
    });
    expect(report.unfinished).toBeGreaterThanOrEqual(1);
    expect(fs.existsSync(dead)).toBe(false);
    expect(fs.existsSync(live)).toBe(true);
    fs.rmSync(live, { recursive: true, force: true });
  });
});

describe('group moves', () => {
  it('a group without a wiki repository moves with nothing to copy', async () => {
    const group = await server.factories.group({ visibility: 'private' });
    const created = await api('POST', `/groups/${group.id}/repository_storage_moves`, {
      destination_storage_name: 'second',
    });
    expect(created.status).toBe(201);
    const move = created.body as Json;
    expect(move).toMatchObject({
      state: 'scheduled',
      source_storage_name: 'default',
      destination_storage_name: 'second',
      group: { id: group.id, name: group.name },
    });
    await until(async () => {
      const now = (await api('GET', `/groups/${group.id}/repository_storage_moves/${move.id as number}`))
        .body as Json;
      return now.state === 'finished';
    }, 'the group move finishes');
    const listed = (await api('GET', `/groups/${group.id}/repository_storage_moves`)).body as Json[];
    expect(listed.map((m) => m.id)).toEqual([move.id]);
    expect((await api('GET', `/group_repository_storage_moves/${move.id as number}`)).status).toBe(200);
    const bulk = await api('POST', '/group_repository_storage_moves', { source_storage_name: 'default' });
    expect(bulk.status).toBe(202);
    expect(bulk.body).toEqual({ message: '202 Accepted' });
  });

  it('is for administrators only', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    for (const route of [
      '/project_repository_storage_moves',
      `/projects/${project.id}/repository_storage_moves`,
      '/group_repository_storage_moves',
    ]) {
      expect((await api('GET', route, undefined, owner.token)).status).toBe(403);
      expect((await server.request('GET', route)).status).toBe(401);
    }
    expect((await api('GET', '/projects/2147483647/repository_storage_moves')).body).toEqual({
      message: '404 Project Not Found',
    });
  });
});

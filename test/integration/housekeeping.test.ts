/** Repository housekeeping: scheduled through the API as GitLab's, and on its own after pushes, on the queue. */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { git } from '../../src/git/git.js';
import { countObjects, repositorySize } from '../../src/git/object-counts.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const dirOf = (project: { id: number; repositoryStorage: string }) =>
  server.services.storage.diskPath(project.repositoryStorage, project.id);
const hasCommitGraph = (dir: string) =>
  fs.existsSync(path.join(dir, 'objects/info/commit-graph')) ||
  fs.existsSync(path.join(dir, 'objects/info/commit-graphs/commit-graph-chain'));
const packs = (dir: string) =>
  fs.readdirSync(path.join(dir, 'objects/pack')).filter((f) => f.endsWith('.pack'));

describe('POST /projects/:id/housekeeping', () => {
  it('answers 201 with null and repacks everything with eager, on the queue', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const dir = dirOf(project);
    for (let i = 0; i < 3; i++)
      await server.request('POST', `/projects/${project.id}/repository/commits`, {
        token: owner.token,
        json: {
          branch: 'main',
          commit_message: `c${i}`,
          actions: [{ action: 'create', file_path: `f${i}`, content: 'x' }],
        },
      });
    const response = await server.request('POST', `/projects/${project.id}/housekeeping`, {
      token: owner.token,
      json: { task: 'eager' },
    });
    expect(response.status).toBe(201);
    expect(response.text).toBe('null');
    await until(() => fs.existsSync(path.join(dir, 'packed-refs')) && packs(dir).length === 1);
    // The pack lands before repack drops the loose copies, and a commit-graph may predate it (written by
    // the housekeeping after the pushes): wait for the loose objects to go.
    const looseCount = async () => (await git(['count-objects', '-v'], { gitDir: dir })).stdout.toString();
    await until(async () => /^count: 0$/m.test(await looseCount()));
    await until(() => hasCommitGraph(dir));
    expect(await looseCount()).toMatch(/^count: 0$/m);
    // The repository still reads the same.
    const tree = await server.request('GET', `/projects/${project.id}/repository/tree`, {
      token: owner.token,
    });
    expect((tree.body as Array<{ name: string }>).map((e) => e.name).sort()).toEqual([
      'README.md',
      'f0',
      'f1',
      'f2',
    ]);
  });

  it('prune removes nothing reachable', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const response = await server.request('POST', `/projects/${project.id}/housekeeping`, {
      token: owner.token,
      form: { task: 'prune' },
    });
    expect(response.status).toBe(201);
    await until(() => packs(dirOf(project)).length === 1);
    const file = await server.request(
      'GET',
      `/projects/${project.id}/repository/files/README.md/raw?ref=main`,
      {
        token: owner.token,
      },
    );
    expect(file.status).toBe(200);
  });

  it.each([
    [AccessLevel.Developer, 403],
    [AccessLevel.Maintainer, 201],
  ])('a member at level %i gets %i', async (level, status) => {
    const { project } = await server.factories.ownedProjectWithReadme();
    const member = await server.factories.memberOf(project, level);
    const response = await server.request('POST', `/projects/${project.id}/housekeeping`, {
      token: member.token,
    });
    expect(response.status).toBe(status);
  });

  it('refuses an unknown task with 400', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const response = await server.request('POST', `/projects/${project.id}/housekeeping`, {
      token: owner.token,
      json: { task: 'everything' },
    });
    expect(response).toMatchObject({ status: 400, body: { error: 'task does not have a valid value' } });
  });
});

/** A project whose main has one commit after its README, adding `file` (through the API: a push). */
async function projectWithCommit(file: string, content: string) {
  const { owner, project } = await server.factories.ownedProjectWithReadme();
  await server.request('POST', `/projects/${project.id}/repository/commits`, {
    token: owner.token,
    json: {
      branch: 'main',
      commit_message: 'more',
      actions: [{ action: 'create', file_path: file, content }],
    },
  });
  return { owner, project, dir: dirOf(project) };
}

describe('housekeeping after a push', () => {
  it('writes the commit-graph with changed-path filters', async () => {
    const { owner, project, dir } = await projectWithCommit('more', 'x');
    await until(() => hasCommitGraph(dir));
    const verify = await git(['commit-graph', 'verify'], { gitDir: dir });
    expect(verify.code).toBe(0);
    const log = await server.request('GET', `/projects/${project.id}/repository/commits?path=more`, {
      token: owner.token,
    });
    expect((log.body as Array<{ title: string }>).map((c) => c.title)).toEqual(['more']);
  });
});

describe('object counts read from the object directory', () => {
  const fromGit = async (dir: string) => {
    const out = (await git(['count-objects', '-v'], { gitDir: dir })).stdout.toString();
    const value = (key: string) => Number(new RegExp(`^${key}: (\\d+)$`, 'm').exec(out)?.[1]);
    return {
      loose: value('count'),
      looseKib: value('size'),
      packs: value('packs'),
      packKib: value('size-pack'),
    };
  };
  const ours = async (dir: string) => {
    const counts = await countObjects(dir);
    return {
      loose: counts.loose,
      looseKib: Math.floor(counts.looseBytes / 1024),
      packs: counts.packs,
      packKib: Math.floor(counts.packBytes / 1024),
    };
  };
  const states: Array<[string, (dir: string) => Promise<unknown>]> = [
    ['loose objects only', async () => undefined],
    ['after a repack', (dir) => git(['repack', '-a', '-d', '-q'], { gitDir: dir })],
    [
      'loose beside a pack',
      (dir) => git(['hash-object', '-w', '--stdin'], { gitDir: dir, input: 'loose\n' }),
    ],
    ['two packs', (dir) => git(['repack', '-q'], { gitDir: dir })],
  ];
  it('agree with git count-objects as a repository is packed', async () => {
    const { dir } = await projectWithCommit('big.txt', 'x'.repeat(20_000));
    for (const [state, reach] of states) {
      await reach(dir);
      const expected = await fromGit(dir);
      expect(await ours(dir), state).toEqual(expected);
      expect(await repositorySize(dir), state).toBe((expected.looseKib + expected.packKib) * 1024);
    }
  });

  it('are remembered per directory only while the directory stays as it was', async () => {
    const { dir } = await projectWithCommit('kept.txt', 'x'.repeat(20_000));
    // Directories last changed long ago are remembered; each change below moves a directory's time.
    const age = async () => {
      const objects = path.join(dir, 'objects');
      const past = new Date(Date.now() - 3_600_000);
      for (const name of fs.readdirSync(objects).filter((n) => /^[0-9a-f]{2}$/.test(n)))
        fs.utimesSync(path.join(objects, name), past, past);
    };
    // A blob whose loose object lands in a directory that already holds one.
    const besideAnother = () => {
      const taken = fs.readdirSync(path.join(dir, 'objects')).filter((n) => /^[0-9a-f]{2}$/.test(n));
      for (let i = 0; ; i++) {
        const content = `beside ${i}\n`;
        const id = crypto.createHash('sha1').update(`blob ${content.length}\0${content}`).digest('hex');
        if (
          taken.includes(id.slice(0, 2)) &&
          !fs.existsSync(path.join(dir, 'objects', id.slice(0, 2), id.slice(2)))
        )
          return git(['hash-object', '-w', '--stdin'], { gitDir: dir, input: content });
      }
    };
    const changes: Array<[string, () => Promise<unknown>]> = [
      ['as they were', async () => undefined],
      ['a loose object beside another', besideAnother],
      ['one more', besideAnother],
      ['packed', () => git(['repack', '-a', '-d', '-q'], { gitDir: dir })],
      ['pruned', () => git(['prune-packed'], { gitDir: dir })],
    ];
    for (const [change, make] of changes) {
      await age();
      expect(await ours(dir), `${change}, before`).toEqual(await fromGit(dir));
      await make();
      expect(await ours(dir), change).toEqual(await fromGit(dir));
    }
  });
});

describe('real clients', () => {
  it.skipIf(!pythonGitlab)('python-gitlab starts housekeeping (needs Debian python3-gitlab)', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const stdout = await runPythonClient('python_gitlab_housekeeping.py', [
      server.url,
      owner.token,
      String(project.id),
    ]);
    expect(JSON.parse(stdout)).toEqual({ started: true, missing: 404 });
    await until(() => hasCommitGraph(dirOf(project)));
  });

  it('@gitbeaker/rest starts eager housekeeping', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const api = new Gitlab({ host: server.url, token: owner.token });
    await api.Projects.housekeeping(project.id, { task: 'eager' });
    await until(() => fs.existsSync(path.join(dirOf(project), 'packed-refs')));
  });
});

/** The shared, long-lived object readers: replaced when they die, never stale, safe to share. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { git } from '../../src/git/git.js';
import { objectBatches } from '../../src/git/object-batch.js';
import { openGitRepository } from '../../src/git/repository.js';
import { setBranch, writeBlob, writeCommit, writeOneFileCommit } from '../helpers/git-plumbing.js';
import { waitFor } from '../helpers/wait.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-batch-'));
let counter = 0;

async function bareRepository(file: string): Promise<{ dir: string; commit: string }> {
  const dir = path.join(root, `r${++counter}.git`);
  await git(['init', '--bare', '-q', '-b', 'main', dir]);
  const commit = await writeOneFileCommit(dir, null, file, '2026-01-01T00:00:00Z');
  await setBranch(dir, 'main', commit);
  return { dir, commit };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

beforeEach(() => objectBatches.stopAll());
afterAll(() => {
  objectBatches.stopAll();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('long-lived cat-file readers', () => {
  it('serve every read of a repository from one process', async () => {
    const { dir, commit } = await bareRepository('a.txt');
    const repository = openGitRepository(dir);
    expect(await repository.resolveCommit('main')).toBe(commit);
    const pid = objectBatches.pids().get(dir);
    expect(pid).toBeDefined();
    for (let i = 0; i < 20; i++) {
      expect((await repository.readBlob((await repository.object('main:a.txt'))!.id)).toString()).toBe(
        'a.txt\n',
      );
    }
    await expect(openGitRepository(dir).resolveCommit('main~0')).resolves.toBe(commit);
    expect(objectBatches.pids().get(dir)).toBe(pid);
  });

  it('resolve what rev-parse resolves, and nothing that is not a commit', async () => {
    const { dir, commit } = await bareRepository('b.txt');
    const repository = openGitRepository(dir);
    expect(await repository.resolveCommit('refs/heads/main')).toBe(commit);
    expect(await repository.resolveCommit(commit.slice(0, 10))).toBe(commit);
    expect(await repository.resolveCommit('main^{tree}')).toBeNull();
    expect(await repository.resolveCommit('nowhere')).toBeNull();
    expect(await repository.resolveCommit('-x')).toBeNull();
    expect(await repository.resolveCommit('main b')).toBeNull();
  });

  it('replace a killed process transparently', async () => {
    const { dir, commit } = await bareRepository('c.txt');
    const repository = openGitRepository(dir);
    expect(await repository.resolveCommit('main')).toBe(commit);
    const pid = objectBatches.pids().get(dir)!;
    process.kill(pid, 'SIGKILL');
    // A read racing the death, and one after it: both are answered. The killed process may stay a
    // zombie for a while on a loaded machine, until Node reaps it.
    expect(await repository.resolveCommit('main')).toBe(commit);
    expect(
      await waitFor(
        async () => alive(pid),
        (living) => !living,
      ),
    ).toBe(false);
    expect(await repository.resolveCommit('main')).toBe(commit);
    expect(objectBatches.pids().get(dir)).not.toBe(pid);
  });

  it('never read a deleted repository through its old process', async () => {
    const { dir, commit } = await bareRepository('d.txt');
    const repository = openGitRepository(dir);
    expect(await repository.resolveCommit('main')).toBe(commit);
    fs.rmSync(dir, { recursive: true });
    await expect(repository.resolveCommit('main')).rejects.toMatchObject({
      status: 404,
      body: { message: '404 Project Not Found' },
    });
    expect(objectBatches.pids().has(dir)).toBe(false);
  });

  it('never read a repository replaced at the same path through its old process', async () => {
    const first = await bareRepository('e.txt');
    expect(await openGitRepository(first.dir).resolveCommit('main')).toBe(first.commit);
    const oldPid = objectBatches.pids().get(first.dir);
    // Another repository moved into the same path, as a reused id or a storage move would.
    const second = await bareRepository('f.txt');
    fs.rmSync(first.dir, { recursive: true });
    fs.renameSync(second.dir, first.dir);
    expect(await openGitRepository(first.dir).resolveCommit('main')).toBe(second.commit);
    expect(objectBatches.pids().get(first.dir)).not.toBe(oldPid);
  });

  it('see objects and refs written after the process started', async () => {
    const { dir, commit } = await bareRepository('g.txt');
    const repository = openGitRepository(dir);
    expect(await repository.resolveCommit('main')).toBe(commit);
    const next = await writeOneFileCommit(dir, commit, 'h.txt', '2026-01-02T00:00:00Z');
    await setBranch(dir, 'main', next);
    await git(['pack-refs', '--all'], { gitDir: dir });
    expect(await repository.resolveCommit('main')).toBe(next);
    await setBranch(dir, 'other', commit);
    expect(await repository.resolveCommit('other')).toBe(commit);
  });

  it('are shared safely by concurrent readers, large blobs included', async () => {
    const { dir, commit } = await bareRepository('i.txt');
    const big = Buffer.alloc(3 * 1024 * 1024 + 17, 'x');
    const small = await writeBlob(dir, 'small\n');
    const large = await writeBlob(dir, big);
    const repository = openGitRepository(dir);
    const reads = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        i % 3 === 0
          ? repository.readBlob(large).then((data) => data.length)
          : i % 3 === 1
            ? repository.readBlob(small).then((data) => data.toString())
            : repository.resolveCommit('main'),
      ),
    );
    reads.forEach((value, i) =>
      expect(value).toEqual(i % 3 === 0 ? big.length : i % 3 === 1 ? 'small\n' : commit),
    );
    expect(objectBatches.pids().size).toBe(1);
  });

  it('list trees from tree objects as ls-tree does', async () => {
    const { dir, commit: first } = await bareRepository('j.txt');
    const commit = await writeCommit(dir, {
      parents: [first],
      files: { 'a/b/c.txt': 'c', 'a/d.txt': 'd', 'a b/é.txt': 'e', 'z.txt': 'z', 'm/n/o/p.txt': 'p' },
      message: 'nested\n',
      date: '2026-01-03T00:00:00Z',
    });
    const repository = openGitRepository(dir);
    const tree = (await repository.object(`${commit}^{tree}`))!;
    const entries = await repository.tree(tree.id, '', true);
    const { stdout } = await git(['ls-tree', '-z', '-r', '-t', tree.id], { gitDir: dir });
    const expected = stdout
      .toString()
      .split('\0')
      .filter(Boolean)
      .map((line) => {
        const [meta, file] = line.split('\t');
        const [mode, type, id] = meta.split(' ');
        return { mode, type, id, path: file, name: path.basename(file) };
      });
    const rank = { tree: 0, blob: 1, commit: 2 } as Record<string, number>;
    expect(entries).toEqual(expected.sort((a, b) => rank[a.type] - rank[b.type]));
    expect(entries.length).toBeGreaterThan(8);
  });
});

describe('refs read from the ref store', () => {
  const forEachRef = async (dir: string) =>
    (await git(['for-each-ref', '--format=%(refname) %(objectname)'], { gitDir: dir })).stdout
      .toString()
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [ref, sha] = line.split(' ');
        return { ref, sha };
      });

  it('match for-each-ref through loose, packed, deleted and symbolic refs, never stale', async () => {
    const { dir, commit } = await bareRepository('k.txt');
    const repository = openGitRepository(dir);
    const next = await writeOneFileCommit(dir, commit, 'l.txt', '2026-01-02T00:00:00Z');
    const steps: Array<() => Promise<unknown>> = [
      () => setBranch(dir, 'feature/a', commit),
      () => git(['tag', 'v1', commit], { gitDir: dir }),
      () => git(['pack-refs', '--all'], { gitDir: dir }),
      () => setBranch(dir, 'main', next),
      () => git(['update-ref', '-d', 'refs/heads/feature/a'], { gitDir: dir }),
      () => git(['symbolic-ref', 'refs/heads/alias', 'refs/heads/main'], { gitDir: dir }),
      () => setBranch(dir, 'zz', commit),
      () => git(['pack-refs', '--all', '--prune'], { gitDir: dir }),
      () => git(['update-ref', 'refs/heads/zz', next], { gitDir: dir }),
    ];
    for (const step of steps) {
      await step();
      expect(await repository.refs()).toEqual(await forEachRef(dir));
    }
    expect(await repository.isEmpty()).toBe(false);
  });

  it('list branches with their committer dates, by prefix as for-each-ref does', async () => {
    const { dir, commit } = await bareRepository('m.txt');
    await setBranch(dir, 'topic/a', commit);
    await setBranch(dir, 'topic/b', commit);
    await setBranch(dir, 'topics', commit);
    const repository = openGitRepository(dir);
    expect((await repository.branches()).map((b) => b.name)).toEqual([
      'main',
      'topic/a',
      'topic/b',
      'topics',
    ]);
    expect((await repository.branches('topic')).map((b) => b.name)).toEqual(['topic/a', 'topic/b']);
    expect(await repository.branch('topics')).toEqual({
      name: 'topics',
      sha: commit,
      date: Date.parse('2026-01-01T00:00:00Z') / 1000,
    });
  });

  it('an empty repository has none', async () => {
    const dir = path.join(root, `empty${++counter}.git`);
    await git(['init', '--bare', '-q', dir]);
    expect(await openGitRepository(dir).isEmpty()).toBe(true);
    expect(await openGitRepository(dir).branches()).toEqual([]);
  });
});

/**
 * The storage recovery's rules, one at a time, in the running server's own process: what is an orphan,
 * what is trash, when git's leftovers are stale, and that a sweep never takes a repository whose row is
 * about to commit. The kill -9 end of it is test/integration/crash-safety.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createDataSource } from '../../src/db/data-source.js';
import { databaseModel } from '../../src/families.js';
import { claimInstance } from '../../src/db/instance.js';
import { git } from '../../src/git/git.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const HOUR = 60 * 60 * 1000;
const repositoryOf = (id: number) => server.services.storage.diskPath('default', id);

/** A directory (with a file in it) last touched `age` ms ago. */
function leave(target: string, age: number): string {
  fs.mkdirSync(target, { recursive: true });
  fs.writeFileSync(path.join(target, 'content'), 'x');
  const when = new Date(Date.now() - age);
  fs.utimesSync(path.join(target, 'content'), when, when);
  fs.utimesSync(target, when, when);
  return target;
}

function touchFile(target: string, age: number): string {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, '');
  const when = new Date(Date.now() - age);
  fs.utimesSync(target, when, when);
  return target;
}

describe('storage recovery', () => {
  it('trashes orphans and unfinished creations, empties the trash, and keeps what projects own', async () => {
    const project = await server.factories.project({ initialize_with_readme: true });
    const own = repositoryOf(project.id);
    const orphan = leave(repositoryOf(900_001), 0);
    const unfinished = leave(`${repositoryOf(900_002)}.creating-0123abcd`, 0);
    const trash = leave(`${repositoryOf(project.id)}.deleting-89abcdef`, 0);
    const foreign = leave(path.join(path.dirname(own), 'not-a-repository'), 0);

    const report = await server.services.storageRecovery.recover({
      staleBefore: new Date(Date.now() - HOUR),
    });
    expect(report).toMatchObject({ orphans: 1, unfinished: 1, trash: 3, missing: [] });
    for (const gone of [orphan, unfinished, trash]) expect(fs.existsSync(gone), gone).toBe(false);
    // Only what names a repository is the storage's to judge.
    expect(fs.existsSync(foreign)).toBe(true);
    await git(['fsck', '--no-progress'], { gitDir: own });
    fs.rmSync(foreign, { recursive: true });
  });

  it("removes git's leftovers once stale, and leaves a push in flight alone", async () => {
    const project = await server.factories.project({ initialize_with_readme: true });
    const dir = repositoryOf(project.id);
    const stale = [
      leave(path.join(dir, 'objects', 'tmp_objdir-incoming-old'), 2 * HOUR),
      touchFile(path.join(dir, 'objects', 'pack', 'tmp_pack_old'), 2 * HOUR),
      touchFile(path.join(dir, 'refs', 'heads', 'main.lock'), 2 * HOUR),
      touchFile(path.join(dir, 'packed-refs.lock'), 2 * HOUR),
    ];
    // A quarantine whose pack is still being written, though its directory is old.
    const live = leave(path.join(dir, 'objects', 'tmp_objdir-incoming-live'), 2 * HOUR);
    touchFile(path.join(live, 'pack', 'tmp_pack_writing'), 0);
    const fresh = touchFile(path.join(dir, 'refs', 'heads', 'topic.lock'), 0);

    const report = await server.services.storageRecovery.recover({
      staleBefore: new Date(Date.now() - HOUR),
    });
    expect(report).toMatchObject({ quarantines: 2, locks: 2 });
    for (const gone of stale) expect(fs.existsSync(gone), gone).toBe(false);
    expect(fs.existsSync(live)).toBe(true);
    expect(fs.existsSync(fresh)).toBe(true);
    // At a start with no other server, anything from before the start is stale.
    const alone = await server.services.storageRecovery.recover({ staleBefore: new Date(Date.now() + 1000) });
    expect(alone).toMatchObject({ quarantines: 1, locks: 1 });
    expect(fs.existsSync(live)).toBe(false);
  });

  it('reports a project whose repository is missing, and creates nothing for it', async () => {
    const project = await server.factories.project();
    fs.rmSync(repositoryOf(project.id), { recursive: true });
    const report = await server.services.storageRecovery.recover({ staleBefore: new Date() });
    expect(report.missing).toEqual([project.id]);
    expect(fs.existsSync(repositoryOf(project.id))).toBe(false);
    await server.dataSource.query('DELETE FROM projects WHERE id = $1', [project.id]);
  });

  it('waits for a creation in flight instead of taking its repository', async () => {
    const owner = await server.factories.user();
    let building!: () => void;
    const built = new Promise<void>((resolve) => (building = resolve));
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    const storage = server.services.storage;
    const original = storage.initializeWithReadme.bind(storage);
    const spy = vi.spyOn(storage, 'initializeWithReadme').mockImplementationOnce(async (...args) => {
      building();
      await held;
      return original(...args);
    });
    const creation = server.request('POST', '/projects', {
      token: owner.token,
      json: { name: 'in-flight', initialize_with_readme: true },
    });
    await built;
    // The sweep finds the creation's `.creating-*` directory, then waits for its transaction.
    const sweep = server.services.storageRecovery.recover({ staleBefore: new Date() });
    await new Promise((resolve) => setTimeout(resolve, 300));
    finish();
    const [created, report] = await Promise.all([creation, sweep]);
    spy.mockRestore();
    expect(created.status).toBe(201);
    expect(report).toMatchObject({ orphans: 0, unfinished: 0, missing: [] });
    const id = (created.body as { id: number }).id;
    await git(['fsck', '--no-progress'], { gitDir: repositoryOf(id) });
  });

  it.runIf(process.env.FORGE_TEST_DATABASE_URL)(
    'knows whether another server holds the instance claim',
    async () => {
      const url = (server.dataSource.options as { url: string }).url;
      const other = await createDataSource({ url }, databaseModel);
      try {
        const first = await claimInstance(server.dataSource, false);
        const second = await claimInstance(other, false);
        expect([first.alone, second.alone]).toEqual([true, false]);
        await first.release();
        await second.release();
        const again = await claimInstance(other, false);
        expect(again.alone).toBe(true);
        await again.release();
      } finally {
        await other.destroy();
      }
    },
  );
});

/**
 * storeThenCommit and sweepOrphans on both backends, with rows in a table of the test database, and a writer process that dies with SIGKILL between its upload and its commit.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectStoreConfig } from '../../src/core/object-store-config.js';
import { freshObjectKey, storeThenCommit, sweepOrphans } from '../../src/core/object-store-lifecycle.js';
import { createObjectStore, type ObjectStore } from '../../src/core/object-store.js';
import { S3ObjectStore } from '../../src/core/object-store-s3.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startS3Server, type S3TestServer } from '../helpers/s3-server.js';

let s3: S3TestServer;
let root: string;
let database: TestDatabase;
const configs: Record<string, ObjectStoreConfig> = {};
const stores: Record<string, ObjectStore> = {};

beforeAll(async () => {
  s3 = await startS3Server();
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-objects-'));
  configs.file = { kind: 'file', dir: root };
  configs.s3 = s3.config();
  for (const kind of ['file', 's3']) stores[kind] = createObjectStore(configs[kind]!);
  database = await openTestDatabase();
  await query(
    'CREATE TABLE lifecycle_objects (id serial PRIMARY KEY, file_key text NOT NULL UNIQUE, size int)',
  );
});

afterAll(async () => {
  await (stores.s3 as S3ObjectStore | undefined)?.close();
  await s3?.stop();
  await database?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

async function query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
  return (await database.dataSource.query(sql, params)) as T[];
}

const body = (value: string) => Readable.from([Buffer.from(value)]);

/** The family's side: an artifact is served only through its row. */
async function serve(store: ObjectStore, id: number): Promise<string | null> {
  const row = await query<{ file_key: string }>('SELECT file_key FROM lifecycle_objects WHERE id = $1', [id]);
  const key = row[0]?.file_key;
  const stream = key ? await store.get(key) : null;
  return stream ? text(stream) : null;
}

/** The rows' side of the sweep: which of these keys a row names. */
async function named(keys: string[]): Promise<string[]> {
  const rows = await query<{ file_key: string }>(
    'SELECT file_key FROM lifecycle_objects WHERE file_key = ANY($1)',
    [keys],
  );
  return rows.map((row) => row.file_key);
}

async function keysUnder(store: ObjectStore, prefix: string): Promise<string[]> {
  const found: string[] = [];
  for await (const object of store.list(prefix)) found.push(object.key);
  return found.sort();
}

/** A writer process that uploads through storeThenCommit and is killed (SIGKILL) inside its commit. */
async function crashBetweenUploadAndCommit(config: ObjectStoreConfig, key: string): Promise<string | null> {
  const src = (name: string) => pathToFileURL(path.resolve(import.meta.dirname, '../../src/core', name)).href;
  const script = path.join(root, '..', `forge-crash-${process.pid}-${Date.now()}.mjs`);
  fs.writeFileSync(
    script,
    `import { Readable } from 'node:stream';
const { createObjectStore } = await import(${JSON.stringify(src('object-store.ts'))});
const { storeThenCommit } = await import(${JSON.stringify(src('object-store-lifecycle.ts'))});
const [config, key] = process.argv.slice(2);
const store = createObjectStore(JSON.parse(config));
await storeThenCommit(store, { key, body: Readable.from([Buffer.from('uploaded, never committed')]) }, async () => {
  // The process dies where the row's INSERT would be: no catch, no clean-up runs.
  process.kill(process.pid, 'SIGKILL');
  await new Promise(() => {});
});
`,
  );
  const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(config), key], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const signal = await new Promise<string | null>((resolve) =>
    child.once('exit', (_code, sig) => resolve(sig)),
  );
  fs.rmSync(script, { force: true });
  return signal;
}

describe.each(['file', 's3'])('%s store: put, then commit', (kind) => {
  const store = () => stores[kind]!;
  const prefix = `${kind}-artifacts`;

  it('keeps the object and answers the transaction when it commits', async () => {
    const key = freshObjectKey(prefix, 'archive.zip');
    const id = await storeThenCommit(store(), { key, body: body('zip bytes') }, ([stored]) =>
      database.dataSource.transaction(async (manager) => {
        const rows = (await manager.query(
          'INSERT INTO lifecycle_objects (file_key, size) VALUES ($1, $2) RETURNING id',
          [stored!.key, stored!.size],
        )) as { id: number }[];
        return rows[0]!.id;
      }),
    );
    expect(await serve(store(), id)).toBe('zip bytes');
    expect(await query('SELECT size FROM lifecycle_objects WHERE id = $1', [id])).toEqual([{ size: 9 }]);
  });

  it('removes the objects when the transaction fails, and throws its error', async () => {
    const taken = freshObjectKey(prefix, 'taken');
    await query('INSERT INTO lifecycle_objects (file_key) VALUES ($1)', [taken]);
    const keys = [freshObjectKey(prefix, 'archive.zip'), freshObjectKey(prefix, 'metadata.gz')];
    await expect(
      storeThenCommit(
        store(),
        keys.map((key) => ({ key, body: body(key) })),
        () =>
          database.dataSource.transaction(async (manager) => {
            await manager.query('INSERT INTO lifecycle_objects (file_key) VALUES ($1)', [keys[0]]);
            // A unique violation: the whole transaction rolls back.
            await manager.query('INSERT INTO lifecycle_objects (file_key) VALUES ($1)', [taken]);
          }),
      ),
    ).rejects.toThrow(/unique/);
    for (const key of keys) expect(await store().head(key)).toBeNull();
    expect((await named(keys)).length).toBe(0);
  });

  it('removes what it wrote when a later write fails, and never commits', async () => {
    const first = freshObjectKey(prefix, 'one');
    const broken = Readable.from(
      (async function* () {
        yield Buffer.from('half');
        throw new Error('upload interrupted');
      })(),
    );
    let committed = false;
    await expect(
      storeThenCommit(
        store(),
        [
          { key: first, body: body('one') },
          { key: freshObjectKey(prefix, 'two'), body: broken },
        ],
        async () => {
          committed = true;
        },
      ),
    ).rejects.toThrow('upload interrupted');
    expect(committed).toBe(false);
    expect(await store().head(first)).toBeNull();
  });

  it('a crash between upload and commit leaves an orphan that nothing serves and the sweep removes', async () => {
    const sweepPrefix = `${kind}-crash/`;
    const orphan = freshObjectKey(sweepPrefix, 'archive.zip');
    expect(await crashBetweenUploadAndCommit(configs[kind]!, orphan)).toBe('SIGKILL');
    // The object is there, but no row names it: no artifact id reaches it.
    expect((await store().head(orphan))?.size).toBe('uploaded, never committed'.length);
    expect(await named([orphan])).toEqual([]);
    // Beside it, a committed object.
    const kept = freshObjectKey(sweepPrefix, 'archive.zip');
    await storeThenCommit(store(), { key: kept, body: body('kept') }, ([stored]) =>
      query('INSERT INTO lifecycle_objects (file_key) VALUES ($1)', [stored!.key]),
    );

    // Within the grace period, an upload may still be about to commit: nothing is removed.
    const early = await sweepOrphans(store(), { prefix: sweepPrefix, graceSeconds: 3600, named });
    expect(early).toEqual({ scanned: 2, removed: [] });
    // Past it, the orphan goes and the named object stays.
    const later = new Date(Date.now() + 2 * 3600 * 1000);
    const swept = await sweepOrphans(store(), { prefix: sweepPrefix, graceSeconds: 3600, named, now: later });
    expect(swept).toEqual({ scanned: 2, removed: [orphan] });
    expect(await keysUnder(store(), sweepPrefix)).toEqual([kept]);
  });

  if (kind === 'file')
    it('sweeps what a write killed halfway left on disk', async () => {
      const partial = path.join(root, 'file-half/1/archive.zip.1234.5678.abcdef.partial');
      fs.mkdirSync(path.dirname(partial), { recursive: true });
      fs.writeFileSync(partial, 'half');
      const swept = await sweepOrphans(store(), {
        prefix: 'file-half/',
        graceSeconds: 3600,
        named,
        now: new Date(Date.now() + 2 * 3600 * 1000),
      });
      expect(swept.removed).toEqual(['file-half/1/archive.zip.1234.5678.abcdef.partial']);
      expect(fs.existsSync(partial)).toBe(false);
    });

  it('sweeps in batches, asking about each batch once, and only under its prefix', async () => {
    const sweepPrefix = `${kind}-batches/`;
    const all = Array.from({ length: 5 }, (_, i) => `${sweepPrefix}${i}`);
    for (const key of all) await store().putStream(key, body(key));
    await store().putStream(`${kind}-batches-other/x`, body('x'));
    await query('INSERT INTO lifecycle_objects (file_key) VALUES ($1), ($2)', [all[1], all[4]]);
    const asked: string[][] = [];
    const swept = await sweepOrphans(store(), {
      prefix: sweepPrefix,
      graceSeconds: 0,
      batchSize: 2,
      now: new Date(Date.now() + 60_000),
      named: async (keys) => {
        asked.push(keys);
        return named(keys);
      },
    });
    expect(asked.map((batch) => batch.length)).toEqual([2, 2, 1]);
    expect(swept.removed.sort()).toEqual([all[0], all[2], all[3]]);
    expect(await keysUnder(store(), sweepPrefix)).toEqual([all[1], all[4]]);
    expect(await store().head(`${kind}-batches-other/x`)).not.toBeNull();
  });
});

describe('freshObjectKey', () => {
  it('puts a unique folder between the prefix and the name', () => {
    const a = freshObjectKey('artifacts/', 'archive.zip');
    expect(a).toMatch(/^artifacts\/[0-9a-f-]{36}\/archive\.zip$/);
    expect(freshObjectKey('artifacts', 'archive.zip')).not.toBe(a);
  });
});

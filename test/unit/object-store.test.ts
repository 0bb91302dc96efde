/**
 * One suite, both backends: the file system and S3 (a real s3rver in a child process,
 * test/helpers/s3-server.ts, which says what s3rver does and lacks).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileObjectStore, checkObjectKey, type ObjectStore } from '../../src/core/object-store.js';
import { S3ObjectStore, attachment } from '../../src/core/object-store-s3.js';
import { startS3Server, type S3TestServer } from '../helpers/s3-server.js';

const MB = 1024 * 1024;

async function bytes(stream: Readable | null): Promise<Buffer> {
  if (!stream) throw new Error('no object');
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function keys(store: ObjectStore, prefix: string): Promise<string[]> {
  const found: string[] = [];
  for await (const object of store.list(prefix)) found.push(object.key);
  return found.sort();
}

/** `size` bytes of a fixed pseudo-random pattern, in chunks of at most 1 MB, then (optionally) an error. */
function pattern(size: number, failWith?: Error): { stream: Readable; digest: string } {
  const block = crypto.createHash('sha512').update(String(size)).digest();
  const whole = Buffer.alloc(size);
  for (let i = 0; i < size; i += block.length) block.copy(whole, i);
  const digest = crypto.createHash('sha256').update(whole).digest('hex');
  async function* chunks() {
    for (let i = 0; i < size; i += MB) yield whole.subarray(i, Math.min(size, i + MB));
    if (failWith) throw failWith;
  }
  return { stream: Readable.from(chunks()), digest };
}

const sha256 = (buffer: Buffer) => crypto.createHash('sha256').update(buffer).digest('hex');

let s3: S3TestServer;
let root: string;
const stores: Record<string, ObjectStore> = {};

beforeAll(async () => {
  s3 = await startS3Server();
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-objects-'));
  stores.file = new FileObjectStore(root);
  // Pages of two keys, so that every listing below crosses pages.
  stores.s3 = new S3ObjectStore(s3.config(), { listPageSize: 2 });
});

afterAll(async () => {
  await (stores.s3 as S3ObjectStore | undefined)?.close();
  await s3?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

describe.each(['file', 's3'])('%s object store', (kind) => {
  const store = () => stores[kind]!;

  it('stores a stream and a file, and answers their bytes and sizes', async () => {
    expect(
      await store().putStream('t1/a.txt', Readable.from([Buffer.from('hello '), Buffer.from('world')])),
    ).toBe(11);
    expect(await text((await store().get('t1/a.txt'))!)).toBe('hello world');
    const file = path.join(root, '..', `forge-src-${kind}-${process.pid}`);
    fs.writeFileSync(file, 'from a file');
    expect(await store().putFile('t1/deep/b.bin', file)).toBe(11);
    expect(fs.existsSync(file)).toBe(true);
    fs.rmSync(file);
    expect(await text((await store().get('t1/deep/b.bin'))!)).toBe('from a file');
    expect(await store().putStream('t1/empty', Readable.from([]))).toBe(0);
    expect((await bytes(await store().get('t1/empty'))).length).toBe(0);
    expect(await store().putStream('t1/a.txt', Readable.from([Buffer.from('replaced')]))).toBe(8);
    expect(await text((await store().get('t1/a.txt'))!)).toBe('replaced');
  });

  it('streams a body larger than a multipart part, unchanged', async () => {
    const { stream, digest } = pattern(12 * MB + 12345);
    expect(await store().putStream('t2/big.bin', stream)).toBe(12 * MB + 12345);
    expect(sha256(await bytes(await store().get('t2/big.bin')))).toBe(digest);
    expect((await store().head('t2/big.bin'))?.size).toBe(12 * MB + 12345);
  });

  it('answers ranges: inclusive, clipped at the end, empty past it', async () => {
    await store().putStream('t3/r', Readable.from([Buffer.from('0123456789')]));
    expect(await text((await store().get('t3/r', { start: 2, end: 5 }))!)).toBe('2345');
    // One byte (not 0-0: s3rver answers `bytes=0-0` with the whole object).
    expect(await text((await store().get('t3/r', { start: 1, end: 1 }))!)).toBe('1');
    expect(await text((await store().get('t3/r', { start: 7, end: 100 }))!)).toBe('789');
    expect(await text((await store().get('t3/r', { start: 10, end: 20 }))!)).toBe('');
    expect(await store().get('t3/missing', { start: 0, end: 1 })).toBeNull();
  });

  it('heads an object and says null of a missing one', async () => {
    const before = Date.now();
    await store().putStream('t4/h', Readable.from([Buffer.from('abc')]));
    const info = await store().head('t4/h');
    expect(info).toMatchObject({ key: 't4/h', size: 3 });
    // S3 keeps whole seconds.
    expect(Math.abs(info!.lastModified.getTime() - before)).toBeLessThan(5_000);
    expect(await store().head('t4/missing')).toBeNull();
    expect(await store().get('t4/missing')).toBeNull();
  });

  it('deletes several objects at once; missing keys are not an error', async () => {
    for (const name of ['a', 'b', 'c'])
      await store().putStream(`t5/${name}`, Readable.from([Buffer.from(name)]));
    await store().delete(['t5/a', 't5/c', 't5/never']);
    await store().delete([]);
    expect(await keys(store(), 't5/')).toEqual(['t5/b']);
    expect(await store().head('t5/a')).toBeNull();
  });

  it('lists every object under a prefix, across pages, and only those', async () => {
    const names = ['t6/1/a', 't6/1/b', 't6/2/c', 't6/10/d', 't6/x', 't60/not-mine'];
    for (const name of names) await store().putStream(name, Readable.from([Buffer.from(name)]));
    expect(await keys(store(), 't6/')).toEqual(['t6/1/a', 't6/1/b', 't6/10/d', 't6/2/c', 't6/x']);
    expect(await keys(store(), 't6/1')).toEqual(['t6/1/a', 't6/1/b', 't6/10/d']);
    expect(await keys(store(), 't6/nothing/')).toEqual([]);
    for await (const object of store().list('t6/2/'))
      expect(object).toMatchObject({ key: 't6/2/c', size: 6 });
  });

  it('leaves nothing when the body fails, small or multipart', async () => {
    const small = pattern(100_000, new Error('client went away'));
    await expect(store().putStream('t7/small', small.stream)).rejects.toThrow('client went away');
    const large = pattern(11 * MB, new Error('client went away late'));
    await expect(store().putStream('t7/large', large.stream)).rejects.toThrow('client went away late');
    expect(await store().head('t7/small')).toBeNull();
    expect(await store().head('t7/large')).toBeNull();
    expect(await keys(store(), 't7/')).toEqual([]);
    if (kind === 'file') expect(fs.readdirSync(path.join(root, 't7'))).toEqual([]);
  });

  it('keeps the object it had when a replacement fails', async () => {
    await store().putStream('t8/kept', Readable.from([Buffer.from('first')]));
    await expect(store().putStream('t8/kept', pattern(1000, new Error('broken')).stream)).rejects.toThrow(
      'broken',
    );
    expect(await text((await store().get('t8/kept'))!)).toBe('first');
  });

  it('refuses keys that are not relative paths', async () => {
    for (const key of ['', '/abs', 'a/../b', 'a//b', './a', 'a\\b', 'a/\n']) {
      await expect(store().putStream(key, Readable.from([Buffer.from('x')]))).rejects.toThrow(
        'bad object key',
      );
      await expect(store().head(key)).rejects.toThrow('bad object key');
    }
  });
});

describe('downloadUrl', () => {
  it('is null for files: the server streams them', async () => {
    expect(await stores.file!.downloadUrl('t1/a.txt', { filename: 'a.txt' })).toBeNull();
  });

  it('presigns a GET that serves the bytes under the file name given', async () => {
    const { stream, digest } = pattern(3 * MB);
    await stores.s3!.putStream('d/archive.zip', stream);
    const url = await stores.s3!.downloadUrl('d/archive.zip', {
      filename: 'artifacts été.zip',
      contentType: 'application/zip',
      expiresIn: 60,
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/forge-test\/d\/archive\.zip\?.*X-Amz-Expires=60/);
    const answer = await fetch(url!);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-disposition')).toBe(attachment('artifacts été.zip'));
    expect(answer.headers.get('content-type')).toBe('application/zip');
    expect(sha256(Buffer.from(await answer.arrayBuffer()))).toBe(digest);
    // A ranged GET of the same URL, as a browser resuming a download.
    const ranged = await fetch(url!, { headers: { Range: 'bytes=10-19' } });
    expect(ranged.status).toBe(206);
    expect((await ranged.arrayBuffer()).byteLength).toBe(10);
  });

  it('is null under proxy_download, and a prefix keeps instances apart in one bucket', async () => {
    const proxied = new S3ObjectStore(s3.config({ proxyDownload: true, prefix: 'node-b/' }));
    await proxied.putStream('d/x', Readable.from([Buffer.from('x')]));
    expect(await proxied.downloadUrl('d/x')).toBeNull();
    expect(await keys(proxied, 'd/')).toEqual(['d/x']);
    expect(await keys(stores.s3!, 'node-b/')).toEqual(['node-b/d/x']);
    await proxied.close();
  });
});

describe('check', () => {
  it('passes for a usable directory and bucket', async () => {
    await stores.file!.check();
    await stores.s3!.check();
  });

  it('says why a store cannot be used', async () => {
    await expect(new FileObjectStore('/dev/null/objects').check()).rejects.toThrow(
      "the object store's directory /dev/null/objects cannot be written",
    );
    const missing = new S3ObjectStore(s3.config({ bucket: 'no-such-bucket' }));
    await expect(missing.check()).rejects.toThrow(
      `the object store's bucket no-such-bucket at ${s3.endpoint} cannot be used: it does not exist`,
    );
    await missing.close();
    // Port 9 (discard): nothing listens on it here.
    const closed = new S3ObjectStore(s3.config({ endpoint: 'http://127.0.0.1:9' }));
    await expect(closed.check()).rejects.toThrow(
      /bucket forge-test at http:\/\/127.0.0.1:9 cannot be used: no answer/,
    );
    await closed.close();
  });
});

describe('attachment and keys', () => {
  it('gives an ASCII fallback and the UTF-8 name', () => {
    expect(attachment('a "b".zip')).toBe(
      `attachment; filename="a _b_.zip"; filename*=UTF-8''a%20%22b%22.zip`,
    );
    expect(attachment('été.txt')).toBe(`attachment; filename="_t_.txt"; filename*=UTF-8''%C3%A9t%C3%A9.txt`);
  });

  it('accepts relative paths', () => {
    expect(checkObjectKey('artifacts/1/2/archive.zip')).toBe('artifacts/1/2/archive.zip');
    expect(() => checkObjectKey('x'.repeat(1025))).toThrow('bad object key');
  });
});

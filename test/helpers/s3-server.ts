/**
 * A real S3-compatible server for tests and the bench: s3rver 3.7 (npm) in a child process, its objects in
 * a temporary directory, one bucket made at start.
 *
 * What s3rver 3.7.1 does and does not do (checked against its routes, and by hand, on Node 20):
 * - PutObject, GetObject with `Range` (206 and Content-Range), HeadObject, DeleteObjects, presigned GET
 *   URLs with `response-content-disposition`: yes.
 * - CreateMultipartUpload, UploadPart, CompleteMultipartUpload: yes (parts of any size are accepted).
 * - AbortMultipartUpload: no (405 MethodNotAllowed), nor ListMultipartUploads (501): an aborted upload's
 *   parts stay in its hidden `._S3rver_uploads` folder. Tests see that no object appears, never that the
 *   parts are gone.
 * - ListObjectsV2 continuation tokens are DES-encrypted, which Node 20's OpenSSL 3 refuses unless its
 *   legacy provider is loaded: hence a child process started with `--openssl-legacy-provider` (which
 *   also keeps the server's work out of the test's own process, as a real bucket would be).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { S3ObjectStoreConfig } from '../../src/core/object-store-config.js';

export interface S3TestServer {
  endpoint: string;
  bucket: string;
  /** Where s3rver keeps the bucket's files. */
  directory: string;
  /** A store configuration for this server (path style, s3rver's fixed credentials). */
  config(overrides?: Partial<S3ObjectStoreConfig>): S3ObjectStoreConfig;
  stop(): Promise<void>;
}

// s3rver's only account; it checks signatures with it.
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

const CHILD = `
const S3rver = require('s3rver');
const [directory, bucket] = process.argv.slice(1);
new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket }] })
  .run()
  .then(({ port }) => process.stdout.write(JSON.stringify({ port }) + '\\n'));
// The test that started it is gone: so is the server.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
`;

export async function startS3Server(bucket = 'forge-test'): Promise<S3TestServer> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-s3rver-'));
  const child: ChildProcess = spawn(
    process.execPath,
    ['--openssl-legacy-provider', '-e', CHILD, directory, bucket],
    { cwd: path.resolve(import.meta.dirname, '../..'), stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('s3rver did not start within 15 s')), 15_000);
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code} before it listened`)));
    createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { port: number }).port);
    });
  });
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    directory,
    config: (overrides = {}) => ({
      kind: 's3',
      bucket,
      prefix: '',
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: CREDENTIALS,
      proxyDownload: false,
      urlExpirySeconds: 300,
      partSizeBytes: 5 * 1024 * 1024,
      queueSize: 4,
      ...overrides,
    }),
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.stdin!.end();
        await exited;
      }
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}

import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { parseObjectStoreConfig } from '../../src/core/object-store-config.js';
import { createObjectStore } from '../../src/core/object-store.js';

const parse = (env: NodeJS.ProcessEnv) => parseObjectStoreConfig(env, '/data');
const s3 = { FORGE_OBJECT_STORE: 's3', FORGE_S3_BUCKET: 'forge-objects' };

describe('object store configuration', () => {
  it('keeps objects under DATA_DIR by default', () => {
    expect(parse({})).toEqual({ kind: 'file', dir: '/data/objects' });
    expect(parse({ FORGE_OBJECT_STORE: 'FILE' })).toEqual({ kind: 'file', dir: '/data/objects' });
    expect(loadConfig({ DATA_DIR: '/srv/forge' }).objectStore).toEqual({
      kind: 'file',
      dir: '/srv/forge/objects',
    });
    expect(createObjectStore(parse({})).kind).toBe('file');
  });

  it('reads an S3 bucket with its defaults', () => {
    expect(parse(s3)).toEqual({
      kind: 's3',
      bucket: 'forge-objects',
      prefix: '',
      endpoint: undefined,
      region: 'us-east-1',
      forcePathStyle: false,
      credentials: undefined,
      proxyDownload: false,
      urlExpirySeconds: 300,
      partSizeBytes: 8 * 1024 * 1024,
      queueSize: 4,
    });
    expect(parse({ ...s3, AWS_REGION: 'eu-west-3' })).toMatchObject({ region: 'eu-west-3' });
    expect(createObjectStore(parse(s3)).kind).toBe('s3');
  });

  it('reads every S3 setting', () => {
    expect(
      parse({
        ...s3,
        FORGE_S3_PREFIX: 'node-a/',
        FORGE_S3_ENDPOINT: 'https://minio.internal:9000',
        FORGE_S3_REGION: 'auto',
        AWS_REGION: 'ignored',
        FORGE_S3_FORCE_PATH_STYLE: 'true',
        FORGE_S3_ACCESS_KEY_ID: 'AKID',
        FORGE_S3_SECRET_ACCESS_KEY: 'secret',
        FORGE_S3_SESSION_TOKEN: 'session',
        FORGE_S3_PROXY_DOWNLOAD: 'yes',
        FORGE_S3_URL_EXPIRY: '3600',
        FORGE_S3_PART_SIZE_MB: '64',
        FORGE_S3_CONCURRENCY: '2',
      }),
    ).toEqual({
      kind: 's3',
      bucket: 'forge-objects',
      prefix: 'node-a/',
      endpoint: 'https://minio.internal:9000',
      region: 'auto',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret', sessionToken: 'session' },
      proxyDownload: true,
      urlExpirySeconds: 3600,
      partSizeBytes: 64 * 1024 * 1024,
      queueSize: 2,
    });
  });

  it.each([
    [{ FORGE_OBJECT_STORE: 'gcs' }, 'FORGE_OBJECT_STORE must be file or s3: gcs'],
    [{ FORGE_OBJECT_STORE: 's3' }, 'FORGE_OBJECT_STORE=s3 needs FORGE_S3_BUCKET'],
    [{ ...s3, FORGE_S3_BUCKET: 'Bad_Bucket' }, 'FORGE_S3_BUCKET is not a valid bucket name'],
    [{ ...s3, FORGE_S3_PREFIX: 'node-a' }, "FORGE_S3_PREFIX must end with '/'"],
    [{ ...s3, FORGE_S3_ENDPOINT: 'minio:9000' }, 'FORGE_S3_ENDPOINT must be an http:// or https:// URL'],
    [{ ...s3, FORGE_S3_ENDPOINT: 'ftp://minio' }, 'FORGE_S3_ENDPOINT must be an http:// or https:// URL'],
    [
      { ...s3, FORGE_S3_ACCESS_KEY_ID: 'AKID' },
      'FORGE_S3_ACCESS_KEY_ID and FORGE_S3_SECRET_ACCESS_KEY go together',
    ],
    [
      { ...s3, FORGE_S3_SECRET_ACCESS_KEY: 'x' },
      'FORGE_S3_ACCESS_KEY_ID and FORGE_S3_SECRET_ACCESS_KEY go together',
    ],
    [{ ...s3, FORGE_S3_FORCE_PATH_STYLE: 'maybe' }, 'FORGE_S3_FORCE_PATH_STYLE must be true or false: maybe'],
    [{ ...s3, FORGE_S3_PROXY_DOWNLOAD: '2' }, 'FORGE_S3_PROXY_DOWNLOAD must be true or false'],
    [{ ...s3, FORGE_S3_URL_EXPIRY: '0' }, 'FORGE_S3_URL_EXPIRY must be a whole number from 1 to 604800: 0'],
    [{ ...s3, FORGE_S3_URL_EXPIRY: '604801' }, 'FORGE_S3_URL_EXPIRY must be a whole number from 1 to 604800'],
    [{ ...s3, FORGE_S3_PART_SIZE_MB: '4' }, 'FORGE_S3_PART_SIZE_MB must be a whole number from 5 to 5120: 4'],
    [{ ...s3, FORGE_S3_PART_SIZE_MB: '5.5' }, 'FORGE_S3_PART_SIZE_MB must be a whole number from 5 to 5120'],
    [{ ...s3, FORGE_S3_CONCURRENCY: '0' }, 'FORGE_S3_CONCURRENCY must be a whole number from 1 to 16'],
  ])('refuses %j at start', (env, message) => {
    expect(() => parse(env as NodeJS.ProcessEnv)).toThrow(message);
    expect(() => loadConfig(env as NodeJS.ProcessEnv)).toThrow(message);
  });
});

/**
 * `config.objectStore` from the environment: the file system under DATA_DIR unless FORGE_OBJECT_STORE=s3.
 * Every mistake stops the start with the variable's name and what it accepts (see the README's table).
 */
import path from 'node:path';

export interface FileObjectStoreConfig {
  kind: 'file';
  dir: string;
}

export interface S3ObjectStoreConfig {
  kind: 's3';
  bucket: string;
  /** Prepended to every key (`forge/`), so that one bucket can hold more than one instance's objects. */
  prefix: string;
  /** An S3-compatible service's URL (MinIO, Ceph, R2, …); AWS itself when absent. */
  endpoint?: string;
  region: string;
  /** `bucket` in the path (`https://host/bucket/key`) rather than in the host name. */
  forcePathStyle: boolean;
  /** Absent: the SDK's own chain (AWS_ACCESS_KEY_ID…, ~/.aws, the instance's role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** GitLab's `proxy_download`: the server streams the bytes instead of redirecting to the bucket. */
  proxyDownload: boolean;
  /** Seconds a presigned download URL stays valid. */
  urlExpirySeconds: number;
  /** Bytes per multipart part; a body that fits in one part is sent with one PutObject. */
  partSizeBytes: number;
  /** Parts in flight per upload: an upload holds at most partSizeBytes × this in memory. */
  queueSize: number;
}

export type ObjectStoreConfig = FileObjectStoreConfig | S3ObjectStoreConfig;

const MB = 1024 * 1024;
/** S3's bounds: parts of 5 MiB to 5 GiB; presigned SigV4 URLs live at most 7 days. */
const PART_MB = { min: 5, max: 5 * 1024 };
const MAX_URL_EXPIRY = 7 * 24 * 3600;

export function parseObjectStoreConfig(env: NodeJS.ProcessEnv, dataDir: string): ObjectStoreConfig {
  const kind = (env.FORGE_OBJECT_STORE || 'file').toLowerCase();
  if (kind === 'file') return { kind: 'file', dir: path.join(dataDir, 'objects') };
  if (kind !== 's3') throw new Error(`FORGE_OBJECT_STORE must be file or s3: ${env.FORGE_OBJECT_STORE}`);

  const bucket = env.FORGE_S3_BUCKET ?? '';
  // S3's bucket naming rules (lower case, digits, dots, hyphens; 3 to 63 characters).
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new Error(
      bucket
        ? `FORGE_S3_BUCKET is not a valid bucket name (3 to 63 of a-z, 0-9, '.', '-'): ${bucket}`
        : 'FORGE_OBJECT_STORE=s3 needs FORGE_S3_BUCKET (the bucket objects are kept in)',
    );
  const prefix = (env.FORGE_S3_PREFIX ?? '').replace(/^\/+/, '');
  if (prefix && !prefix.endsWith('/'))
    throw new Error(`FORGE_S3_PREFIX must end with '/' (a folder of the bucket): ${prefix}`);

  const endpoint = env.FORGE_S3_ENDPOINT || undefined;
  if (endpoint) {
    let url: URL | undefined;
    try {
      url = new URL(endpoint);
    } catch {
      url = undefined;
    }
    if (!url || !['http:', 'https:'].includes(url.protocol))
      throw new Error(`FORGE_S3_ENDPOINT must be an http:// or https:// URL: ${endpoint}`);
  }

  const accessKeyId = env.FORGE_S3_ACCESS_KEY_ID || undefined;
  const secretAccessKey = env.FORGE_S3_SECRET_ACCESS_KEY || undefined;
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey))
    throw new Error(
      'FORGE_S3_ACCESS_KEY_ID and FORGE_S3_SECRET_ACCESS_KEY go together (or set neither, to use AWS_ACCESS_KEY_ID and the SDK defaults)',
    );

  return {
    kind: 's3',
    bucket,
    prefix,
    endpoint,
    region: env.FORGE_S3_REGION || env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    forcePathStyle: flag(env, 'FORGE_S3_FORCE_PATH_STYLE', false),
    credentials:
      accessKeyId && secretAccessKey
        ? { accessKeyId, secretAccessKey, sessionToken: env.FORGE_S3_SESSION_TOKEN || undefined }
        : undefined,
    proxyDownload: flag(env, 'FORGE_S3_PROXY_DOWNLOAD', false),
    urlExpirySeconds: integer(env, 'FORGE_S3_URL_EXPIRY', 300, 1, MAX_URL_EXPIRY),
    partSizeBytes: integer(env, 'FORGE_S3_PART_SIZE_MB', 8, PART_MB.min, PART_MB.max) * MB,
    queueSize: integer(env, 'FORGE_S3_CONCURRENCY', 4, 1, 16),
  };
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const text = env[name];
  if (!text) return fallback;
  if (/^(1|true|yes)$/i.test(text)) return true;
  if (/^(0|false|no)$/i.test(text)) return false;
  throw new Error(`${name} must be true or false: ${text}`);
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const text = env[name];
  if (!text) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max}: ${text}`);
  return value;
}

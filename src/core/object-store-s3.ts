/**
 * The S3-compatible backend (AWS S3, MinIO, Ceph RGW, Cloudflare R2, …) through the AWS SDK v3, the
 * maintained client every one of them documents. The SDK is imported on first use, so a server that keeps
 * its objects on disk never loads it.
 *
 * Writes stream: lib-storage's `Upload` sends a body that fits in one part with one PutObject, a larger one
 * as a multipart upload whose parts are at most `partSizeBytes` each, `queueSize` at a time; a failed
 * upload is aborted, so no object appears. Downloads are presigned GET URLs (with the file name the
 * browser saves), or null under proxy_download, when the server streams the bytes itself.
 */
import { createReadStream } from 'node:fs';
import { PassThrough, pipeline, Transform, type Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3ObjectStoreConfig } from './object-store-config.js';
import {
  checkObjectKey,
  type DownloadOptions,
  type ObjectInfo,
  type ObjectStore,
} from './object-store-types.js';

type Sdk = typeof import('@aws-sdk/client-s3') & {
  Upload: typeof import('@aws-sdk/lib-storage').Upload;
  getSignedUrl: typeof import('@aws-sdk/s3-request-presigner').getSignedUrl;
};

/** DeleteObjects takes at most 1,000 keys a request. */
const DELETE_BATCH = 1000;

export interface S3ObjectStoreOptions {
  /** Keys per ListObjectsV2 page (at most 1,000); smaller only in tests, to cross pages. */
  listPageSize?: number;
}

export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  private loaded?: Promise<{ sdk: Sdk; client: S3Client }>;

  constructor(
    readonly config: S3ObjectStoreConfig,
    private readonly options: S3ObjectStoreOptions = {},
  ) {}

  private sdk(): Promise<{ sdk: Sdk; client: S3Client }> {
    this.loaded ??= (async () => {
      const [s3, storage, presigner] = await Promise.all([
        import('@aws-sdk/client-s3'),
        import('@aws-sdk/lib-storage'),
        import('@aws-sdk/s3-request-presigner'),
      ]);
      const sdk: Sdk = { ...s3, Upload: storage.Upload, getSignedUrl: presigner.getSignedUrl };
      const client = new s3.S3Client({
        region: this.config.region,
        endpoint: this.config.endpoint,
        forcePathStyle: this.config.forcePathStyle,
        credentials: this.config.credentials,
        // Checksums only where S3 requires them (DeleteObjects): the newer default sends streamed bodies
        // with aws-chunked trailers, which many S3-compatible servers store verbatim or refuse.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
      return { sdk, client };
    })();
    return this.loaded;
  }

  private name(key: string): string {
    return this.config.prefix + checkObjectKey(key);
  }

  async putFile(key: string, file: string): Promise<number> {
    return this.putStream(key, createReadStream(file));
  }

  async putStream(key: string, body: Readable): Promise<number> {
    const { sdk, client } = await this.sdk();
    let size = 0;
    let bodyError: Error | undefined;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        size += chunk.length;
        callback(null, chunk);
      },
    });
    // A body that fails fails the upload (its iteration throws); the upload then aborts what it began.
    pipeline(body, counted, (err) => {
      if (err) bodyError = err;
    });
    const upload = new sdk.Upload({
      client,
      params: { Bucket: this.config.bucket, Key: this.name(key), Body: counted },
      partSize: this.config.partSizeBytes,
      queueSize: this.config.queueSize,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      counted.destroy();
      // When aborting the multipart upload fails too, that error replaces the cause: report the body's.
      throw bodyError ?? err;
    }
    return size;
  }

  async get(key: string, range?: { start: number; end: number }): Promise<Readable | null> {
    const { sdk, client } = await this.sdk();
    try {
      const answer = await client.send(
        new sdk.GetObjectCommand({
          Bucket: this.config.bucket,
          Key: this.name(key),
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
      );
      return answer.Body as Readable;
    } catch (err) {
      if (notFound(err)) return null;
      // A range that starts past the end: as the file backend, no bytes (the object exists).
      if (range && errorName(err) === 'InvalidRange') {
        const empty = new PassThrough();
        empty.end();
        return empty;
      }
      throw err;
    }
  }

  async head(key: string): Promise<ObjectInfo | null> {
    const { sdk, client } = await this.sdk();
    try {
      const answer = await client.send(
        new sdk.HeadObjectCommand({ Bucket: this.config.bucket, Key: this.name(key) }),
      );
      return { key, size: answer.ContentLength ?? 0, lastModified: answer.LastModified ?? new Date(0) };
    } catch (err) {
      if (notFound(err)) return null;
      throw err;
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    const { sdk, client } = await this.sdk();
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      const answer = await client.send(
        new sdk.DeleteObjectsCommand({
          Bucket: this.config.bucket,
          Delete: { Objects: batch.map((key) => ({ Key: this.name(key) })), Quiet: true },
        }),
      );
      const failed = (answer.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failed.length > 0)
        throw new Error(
          `could not delete ${failed.length} object(s) from bucket ${this.config.bucket}: ${failed
            .slice(0, 3)
            .map((e) => `${e.Key} (${e.Code})`)
            .join(', ')}`,
        );
    }
  }

  async downloadUrl(key: string, options: DownloadOptions = {}): Promise<string | null> {
    if (this.config.proxyDownload) return null;
    const { sdk, client } = await this.sdk();
    const command = new sdk.GetObjectCommand({
      Bucket: this.config.bucket,
      Key: this.name(key),
      ResponseContentDisposition: options.filename ? attachment(options.filename) : undefined,
      ResponseContentType: options.contentType,
    });
    return sdk.getSignedUrl(client, command, {
      expiresIn: options.expiresIn ?? this.config.urlExpirySeconds,
    });
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    const { sdk, client } = await this.sdk();
    let token: string | undefined;
    do {
      const page = await client.send(
        new sdk.ListObjectsV2Command({
          Bucket: this.config.bucket,
          Prefix: this.config.prefix + prefix,
          ContinuationToken: token,
          MaxKeys: this.options.listPageSize,
        }),
      );
      for (const object of page.Contents ?? []) {
        if (!object.Key) continue;
        yield {
          key: object.Key.slice(this.config.prefix.length),
          size: object.Size ?? 0,
          lastModified: object.LastModified ?? new Date(0),
        };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async check(): Promise<void> {
    const { sdk, client } = await this.sdk();
    const where = `bucket ${this.config.bucket} at ${this.config.endpoint ?? `AWS S3 (${this.config.region})`}`;
    try {
      await client.send(new sdk.HeadBucketCommand({ Bucket: this.config.bucket }));
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      const reason =
        status === 404
          ? 'it does not exist (FORGE_S3_BUCKET; the server does not create it)'
          : status === 403
            ? 'the credentials may not use it (FORGE_S3_ACCESS_KEY_ID, or the SDK defaults)'
            : status === 301
              ? 'it is in another region (FORGE_S3_REGION)'
              : status
                ? `it answered ${status} ${errorName(err) ?? ''}`.trim()
                : `no answer: ${(err as Error).message} (FORGE_S3_ENDPOINT)`;
      throw new Error(`the object store's ${where} cannot be used: ${reason}`);
    }
  }

  /** Closes the client's sockets (tests, and a server that stops). */
  async close(): Promise<void> {
    if (this.loaded) (await this.loaded).client.destroy();
  }
}

function errorName(err: unknown): string | undefined {
  return (err as { name?: string; Code?: string }).name;
}

function notFound(err: unknown): boolean {
  const name = errorName(err);
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  // A missing bucket is a misconfiguration, not a missing object.
  return name === 'NoSuchKey' || name === 'NotFound' || (status === 404 && name !== 'NoSuchBucket');
}

/** `Content-Disposition: attachment` with an ASCII fallback and the UTF-8 name (RFC 6266). */
export function attachment(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

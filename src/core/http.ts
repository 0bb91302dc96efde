import crypto from 'node:crypto';
import fs from 'node:fs';
import http, { type IncomingMessage, type RequestListener, type Server } from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { pipeline, type Readable } from 'node:stream';
import type { Context, Middleware } from 'koa';
import busboy from 'busboy';
import { ApiError, badParameter } from './errors.js';
import { parseBracketPairs, type ParamObject } from './params.js';
import { assertCleanParams, decodeComponent, decodeUtf8, formPairs } from './strings.js';

const BODY_LIMIT = 10 * 1024 * 1024;
/** Beyond this, a body over the limit is not read to its end to answer 413: the connection is dropped. */
const DRAIN_LIMIT = 16 * BODY_LIMIT;
const tooLarge = () => new ApiError(413, { message: '413 Request Entity Too Large' });
/** Node's default, stated: larger request headers get 431. */
const HEADER_LIMIT = 16 * 1024;

/**
 * The HTTP server with its limits: headers must arrive within the body timeout and fit HEADER_LIMIT.
 * Node's own whole-request timeout is off, as it would cut long git pushes; `bodyDeadline` bounds the
 * rest per route.
 */
export function createHttpServer(handler: RequestListener, bodyTimeoutSeconds: number): Server {
  const server = http.createServer(
    // Node looks for expired header deadlines every 30 s by default: too coarse for a 30 s deadline.
    { maxHeaderSize: HEADER_LIMIT, requestTimeout: 0, connectionsCheckingInterval: 1000 },
    handler,
  );
  server.headersTimeout = bodyTimeoutSeconds * 1000;
  return server;
}

/** A git fetch negotiation or push: its body is as long as the pack. */
const isGitRpc = (ctx: Context) => ctx.method === 'POST' && /\/git-(upload|receive)-pack$/.test(ctx.path);

/**
 * Drops a connection whose request body does not arrive in time: an API body must be complete within
 * the timeout; a git body may take any time but may not stall for that long. A dropped request gets no
 * answer, as there is no one left to read it.
 */
export function bodyDeadline(bodyTimeoutSeconds: number): Middleware {
  const ms = bodyTimeoutSeconds * 1000;
  return (ctx, next) => {
    const { req } = ctx;
    if (req.complete || !hasBody(req)) return next();
    const socket = req.socket;
    if (isGitRpc(ctx)) {
      const stalled = () => socket.destroy();
      socket.setTimeout(ms);
      socket.once('timeout', stalled);
      req.once('end', () => {
        socket.setTimeout(0);
        socket.off('timeout', stalled);
      });
    } else {
      const timer = setTimeout(() => {
        if (!req.complete) socket.destroy();
      }, ms);
      const clear = () => clearTimeout(timer);
      req.once('end', clear);
      req.once('close', clear);
    }
    return next();
  };
}

/** A JSON body serialized already (a cached answer, say): written as it is, not stringified again. */
export class SerializedJson<T> {
  /** The type of what `text` holds, for the handler's typing only. */
  declare readonly shape?: T;

  constructor(readonly text: string) {}
}

/**
 * Writes a JSON response. The Content-Type is exactly `application/json`: python-gitlab compares it
 * as a string and fails on a charset suffix.
 */
export function writeJson(
  ctx: Context,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  ctx.status = status;
  for (const [name, value] of Object.entries(headers)) ctx.set(name, value);
  // A JSON `null` is a body too (GitLab answers some actions with it); only 204 and undefined have none.
  if (status === 204 || status === 304 || body === undefined) {
    ctx.body = null;
    ctx.status = status;
    return;
  }
  ctx.body = body instanceof SerializedJson ? body.text : JSON.stringify(body);
  ctx.set('Content-Type', 'application/json');
}

/** The body stopped arriving (the deadline dropped the connection, or the client left). */
const requestTimeout = () => new ApiError(408, { message: '408 Request Timeout' });

function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * The request body, decompressed as its Content-Encoding says. The pipeline owns both streams' errors:
 * a body that is not valid gzip or deflate fails the decoder for its reader, never the process.
 */
export function decodedStream(req: IncomingMessage): Readable {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? zlib.createGunzip()
      : encoding === 'deflate'
        ? zlib.createInflate()
        : undefined;
  if (!decoder) return req;
  return pipeline(req, decoder, () => undefined);
}

const BAD_ENCODING = 'body is not valid for its Content-Encoding';

/** zlib's refusals of a corrupt or truncated body. */
const isDecodingError = (err: unknown) =>
  typeof (err as { code?: unknown }).code === 'string' &&
  /^(Z_|ERR_ZLIB|ERR_BUFFER)/.test((err as { code: string }).code);

/**
 * Reads the whole body. Past BODY_LIMIT the rest is read and dropped, so the client, still sending,
 * gets its 413; past DRAIN_LIMIT (an abuse, not a mistake) the connection is dropped instead.
 */
function readRaw(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stream = decodedStream(req);
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= BODY_LIMIT) chunks.push(chunk);
      else {
        chunks.length = 0;
        if (size > DRAIN_LIMIT) req.destroy();
      }
    });
    stream.on('end', () => (size > BODY_LIMIT ? reject(tooLarge()) : resolve(Buffer.concat(chunks))));
    stream.on('error', (err) => {
      if (isDecodingError(err)) reject(badParameter(BAD_ENCODING));
      else reject(req.destroyed ? requestTimeout() : err);
    });
  });
}

/** A file part of a multipart body, written to disk as it arrived; the request's handler owns it. */
export interface UploadedFile {
  /** Where the bytes are, in the upload directory; removed after the request unless moved away. */
  path: string;
  /** As the client named it, decoded from UTF-8. */
  filename: string;
  mimeType: string;
  size: number;
}

/** Operations that take files (`x-max-upload-bytes`): where to write them, and how large they may be. */
export interface UploadSpool {
  dir: string;
  maxBytes: number;
}

/**
 * A multipart body: fields as parameters, and, for an operation that takes files, each file part
 * streamed to `spool.dir` (its parameter holds the file name, for validation). Past `spool.maxBytes`
 * the answer is 413, with whatever was written removed. Without a spool, files are drained.
 */
function readMultipart(
  req: IncomingMessage,
  spool?: UploadSpool,
  files: Record<string, UploadedFile> = {},
): Promise<ParamObject> {
  return new Promise((resolve, reject) => {
    const pairs: Array<[string, unknown]> = [];
    const writes: Array<Promise<void>> = [];
    let tooBig = false;
    let parser: busboy.Busboy;
    if (spool) fs.mkdirSync(spool.dir, { recursive: true });
    try {
      // Fields arrive as latin1, byte for byte, so invalid UTF-8 is refused rather than replaced.
      parser = busboy({
        headers: req.headers,
        defCharset: 'latin1',
        defParamCharset: 'latin1',
        limits: { fieldSize: BODY_LIMIT, ...(spool ? { fileSize: spool.maxBytes } : {}) },
      });
    } catch {
      reject(badParameter('multipart body is malformed'));
      return;
    }
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) {
        reject(tooLarge());
        return;
      }
      try {
        pairs.push([decodeUtf8(Buffer.from(name, 'latin1')), decodeUtf8(Buffer.from(value, 'latin1'))]);
      } catch (err) {
        reject(err);
      }
    });
    parser.on('file', (rawName, stream, info) => {
      let name: string;
      let filename: string;
      try {
        name = decodeUtf8(Buffer.from(rawName, 'latin1'));
        filename = decodeUtf8(Buffer.from(info.filename ?? '', 'latin1'));
      } catch (err) {
        stream.resume();
        reject(err);
        return;
      }
      // Only operations that take files keep them, and only the first part of each name.
      if (!spool || files[name]) {
        stream.resume();
        return;
      }
      const target = path.join(spool.dir, `upload-${crypto.randomBytes(8).toString('hex')}`);
      const file: UploadedFile = { path: target, filename, mimeType: info.mimeType, size: 0 };
      files[name] = file;
      pairs.push([name, filename]);
      stream.on('limit', () => (tooBig = true));
      // Piped at once: a stream that started flowing before its reader was attached would lose bytes.
      writes.push(
        new Promise<void>((done, failed) =>
          pipeline(stream, fs.createWriteStream(target), (err) => (err ? failed(err) : done())),
        ).then(async () => {
          file.size = (await fs.promises.stat(target)).size;
        }),
      );
    });
    parser.on('error', () => reject(badParameter('multipart body is malformed')));
    parser.on('close', () => {
      Promise.all(writes)
        .then(() => {
          if (tooBig) throw tooLarge();
          const params = parseBracketPairs(pairs);
          assertCleanParams(params);
          resolve(params);
        })
        .catch(reject);
    });
    pipeline(decodedStream(req), parser, (err) => {
      if (!err) return;
      if (isDecodingError(err)) reject(badParameter(BAD_ENCODING));
      else reject(req.destroyed ? requestTimeout() : badParameter('multipart body is malformed'));
    });
  });
}

/**
 * Removes spooled files older than `staleBefore`: what requests of a killed process left (a living
 * request discards its own). Returns how many.
 */
export async function sweepUploadSpool(dir: string, staleBefore: Date): Promise<number> {
  let removed = 0;
  for (const name of await fs.promises.readdir(dir).catch(() => [] as string[])) {
    const target = path.join(dir, name);
    const stat = await fs.promises.stat(target).catch(() => undefined);
    if (!stat || stat.mtimeMs >= staleBefore.getTime()) continue;
    await fs.promises.rm(target, { force: true });
    removed++;
  }
  return removed;
}

/** Removes what a request spooled; a file its handler moved away is gone already. */
export async function discardUploads(files: Record<string, UploadedFile>): Promise<void> {
  await Promise.all(Object.values(files).map((file) => fs.promises.rm(file.path, { force: true })));
}

/**
 * The body's parameters, from JSON, a form, or multipart. An empty body, or `{}`, gives none. With a
 * spool, the multipart files land in `files` (the caller discards them after the request, whatever
 * happens, and here when reading fails).
 */
export async function readBodyParams(
  ctx: Context,
  spool?: UploadSpool,
  files: Record<string, UploadedFile> = {},
): Promise<ParamObject> {
  if (!hasBody(ctx.req)) return {};
  const type = (ctx.request.type || '').toLowerCase();
  if (type === 'multipart/form-data') return readMultipart(ctx.req, spool, files);
  const raw = await readRaw(ctx.req);
  if (type === 'application/x-www-form-urlencoded')
    return parseBracketPairs(formPairs(raw.toString('latin1')));
  const text = decodeUtf8(raw);
  if (text.trim() === '') return {};
  if (type === '' || type === 'application/json' || type.endsWith('+json') || type === 'text/plain') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      if (type === 'text/plain' || type === '') return {};
      throw badParameter('body is not valid JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw badParameter('body must be a JSON object');
    }
    assertCleanParams(parsed);
    return parsed as ParamObject;
  }
  return {};
}

/**
 * A path or query string with broken percent escapes (`%zz`), bytes that are not UTF-8 (`%ff%fe`, an
 * encoded surrogate) or a NUL names nothing: 400 before any route reads it, for the API and git alike.
 */
export const rejectMalformedStrings: Middleware = (ctx, next) => {
  decodeComponent(ctx.path, false);
  formPairs(ctx.querystring);
  return next();
};

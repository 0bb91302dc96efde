import http, { type IncomingMessage, type RequestListener, type Server } from 'node:http';
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
  ctx.body = JSON.stringify(body);
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

function readMultipart(req: IncomingMessage): Promise<ParamObject> {
  return new Promise((resolve, reject) => {
    const pairs: Array<[string, unknown]> = [];
    let parser: busboy.Busboy;
    try {
      // Fields arrive as latin1, byte for byte, so invalid UTF-8 is refused rather than replaced.
      parser = busboy({ headers: req.headers, defCharset: 'latin1', limits: { fieldSize: BODY_LIMIT } });
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
    // Uploaded files are not parameters of any operation yet: drain them.
    parser.on('file', (_name, stream) => stream.resume());
    parser.on('error', () => reject(badParameter('multipart body is malformed')));
    parser.on('close', () => {
      try {
        const params = parseBracketPairs(pairs);
        assertCleanParams(params);
        resolve(params);
      } catch (err) {
        reject(err);
      }
    });
    pipeline(decodedStream(req), parser, (err) => {
      if (!err) return;
      if (isDecodingError(err)) reject(badParameter(BAD_ENCODING));
      else reject(req.destroyed ? requestTimeout() : badParameter('multipart body is malformed'));
    });
  });
}

/** The body's parameters, from JSON, a form, or multipart. An empty body, or `{}`, gives none. */
export async function readBodyParams(ctx: Context): Promise<ParamObject> {
  if (!hasBody(ctx.req)) return {};
  const type = (ctx.request.type || '').toLowerCase();
  if (type === 'multipart/form-data') return readMultipart(ctx.req);
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

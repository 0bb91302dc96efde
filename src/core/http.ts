import type { IncomingMessage } from 'node:http';
import zlib from 'node:zlib';
import { pipeline, type Readable } from 'node:stream';
import type { Context, Middleware } from 'koa';
import busboy from 'busboy';
import { ApiError, badParameter } from './errors.js';
import { parseBracketPairs, type ParamObject } from './params.js';

const BODY_LIMIT = 10 * 1024 * 1024;

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
  if (status === 204 || body === undefined) {
    ctx.body = null;
    ctx.status = status;
    return;
  }
  ctx.body = JSON.stringify(body);
  ctx.set('Content-Type', 'application/json');
}

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

async function readRaw(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of decodedStream(req)) {
      size += (chunk as Buffer).length;
      if (size > BODY_LIMIT) throw new ApiError(413, { message: '413 Request Entity Too Large' });
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (isDecodingError(err)) throw badParameter(BAD_ENCODING);
    throw err;
  }
  return Buffer.concat(chunks);
}

function readMultipart(req: IncomingMessage): Promise<ParamObject> {
  return new Promise((resolve, reject) => {
    const pairs: Array<[string, unknown]> = [];
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fieldSize: BODY_LIMIT } });
    } catch {
      reject(badParameter('multipart body is malformed'));
      return;
    }
    parser.on('field', (name, value) => pairs.push([name, value]));
    // Uploaded files are not parameters of any operation yet: drain them.
    parser.on('file', (_name, stream) => stream.resume());
    parser.on('error', () => reject(badParameter('multipart body is malformed')));
    parser.on('close', () => resolve(parseBracketPairs(pairs)));
    pipeline(decodedStream(req), parser, (err) => {
      if (err) reject(badParameter(isDecodingError(err) ? BAD_ENCODING : 'multipart body is malformed'));
    });
  });
}

/** The body's parameters, from JSON, a form, or multipart. An empty body, or `{}`, gives none. */
export async function readBodyParams(ctx: Context): Promise<ParamObject> {
  if (!hasBody(ctx.req)) return {};
  const type = (ctx.request.type || '').toLowerCase();
  if (type === 'multipart/form-data') return readMultipart(ctx.req);
  const raw = await readRaw(ctx.req);
  const text = raw.toString('utf8');
  if (type === 'application/x-www-form-urlencoded') return parseBracketPairs(new URLSearchParams(text));
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
    return parsed as ParamObject;
  }
  return {};
}

/**
 * A path whose percent escapes do not decode (`%zz`, `%ff%fe`) names nothing: 400 before any route reads
 * it, as GitLab's malformed-strings middleware answers.
 */
export const rejectMalformedPath: Middleware = (ctx, next) => {
  try {
    decodeURIComponent(ctx.path);
  } catch {
    throw badParameter('400 Bad Request - malformed percent-encoding in the path');
  }
  return next();
};

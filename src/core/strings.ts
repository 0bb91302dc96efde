/**
 * Strings no handler, database or git call should ever see: NUL bytes, bytes that are not UTF-8 (lone
 * surrogates included) and broken percent escapes. They are refused once, as requests arrive, with 400,
 * as GitLab's malformed-strings middleware refuses them.
 */
import { badParameter } from './errors.js';

/** Rack's limit on `a[b][c]` nesting, applied to JSON bodies too. */
export const MAX_PARAM_DEPTH = 32;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const ESCAPES = /(?:%[0-9a-fA-F]{2})+/g;
const BROKEN_ESCAPE = /%(?![0-9a-fA-F]{2})/;
/** What needs decoding or refusing: escapes, bytes beyond ASCII, NUL. */
const NOT_PLAIN = /[^\x01-\x7f]|%/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const malformed = (what: string) => badParameter(`400 Bad Request - ${what}`);

/**
 * Decodes a raw URL or form component: `+` as space (forms and queries only), percent escapes as bytes,
 * the bytes as UTF-8. Node reads the request line as latin1, so the raw text maps back to its bytes.
 */
export function decodeComponent(raw: string, plusIsSpace: boolean): string {
  const text = plusIsSpace ? raw.replace(/\+/g, ' ') : raw;
  // Plain ASCII is its own decoding, as most paths and queries are.
  if (!NOT_PLAIN.test(text)) return text;
  if (BROKEN_ESCAPE.test(text)) throw malformed('malformed percent-encoding');
  const parts: Buffer[] = [];
  let last = 0;
  for (const match of text.matchAll(ESCAPES)) {
    parts.push(Buffer.from(text.slice(last, match.index), 'latin1'));
    parts.push(Buffer.from(match[0].replace(/%/g, ''), 'hex'));
    last = match.index + match[0].length;
  }
  parts.push(Buffer.from(text.slice(last), 'latin1'));
  const decoded = decodeUtf8(Buffer.concat(parts));
  if (decoded.includes('\0')) throw malformed('null byte in a parameter');
  return decoded;
}

export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw malformed('invalid byte sequence in UTF-8');
  }
}

/** `name=value&…` pairs of a query string or form body, strictly decoded. */
export function formPairs(raw: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decodeComponent(eq < 0 ? part : part.slice(0, eq), true);
    pairs.push([name, eq < 0 ? '' : decodeComponent(part.slice(eq + 1), true)]);
  }
  return pairs;
}

/** A string that PostgreSQL and git can hold: no NUL, no lone UTF-16 surrogate. */
export function assertCleanString(value: string): string {
  if (value.includes('\0')) throw malformed('null byte in a parameter');
  if (LONE_SURROGATE.test(value)) throw malformed('invalid byte sequence in UTF-8');
  return value;
}

/**
 * Checks every key and string of parsed parameters (a JSON body, multipart fields), without recursion:
 * nesting deeper than MAX_PARAM_DEPTH is refused rather than walked.
 */
export function assertCleanParams(params: unknown): void {
  const stack: Array<[unknown, number]> = [[params, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'string') assertCleanString(value);
    else if (typeof value === 'object' && value !== null) {
      if (depth >= MAX_PARAM_DEPTH) throw malformed('parameters nested too deeply');
      if (Array.isArray(value)) for (const item of value) stack.push([item, depth + 1]);
      else
        for (const [key, child] of Object.entries(value)) {
          assertCleanString(key);
          stack.push([child, depth + 1]);
        }
    }
  }
}

/**
 * GitLab's file path check (`should be a valid file path`): no `..` component, in either slash
 * direction, nor its percent-encoded form; a path must stay inside the repository.
 */
export function isFilePath(path: string): boolean {
  const decoded = path.replace(/%2e/gi, '.').replace(/%2f/gi, '/').replace(/%5c/gi, '\\');
  return !decoded.split(/[/\\]/).includes('..');
}

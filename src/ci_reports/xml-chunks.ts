/**
 * A bounded-memory reader of big XML reports (JUnit, Cobertura): it cuts the text stream into the
 * start and end tags of container elements and whole "item" elements (`<testcase>…</testcase>`), which
 * fast-xml-parser then parses one at a time. Only the current item is ever held, so a report of any
 * size is read in the memory of its largest item. Comments, processing instructions, DOCTYPE and
 * CDATA sections are skipped outside items and kept whole inside them.
 */
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';

export type XmlChunk =
  | { kind: 'open'; name: string; xml: string; selfClosing: boolean }
  | { kind: 'close'; name: string }
  | { kind: 'item'; name: string; xml: string };

export class XmlChunkError extends Error {}

/** The uploaded file as UTF-8 text, gunzipped when it was sent gzip-compressed (concatenated members too). */
export function readText(path: string, gzip: boolean): AsyncIterable<string> {
  const file = createReadStream(path);
  const stream = gzip ? file.pipe(createGunzip()) : file;
  if (gzip) file.on('error', (err) => stream.destroy(err));
  stream.setEncoding('utf8');
  return stream as AsyncIterable<string>;
}

const NAME = /^[A-Za-z_:][-\w.:]*/;

/** Where the tag that starts at `from` (a `<`) ends (the index after `>`), quotes respected; -1: not yet. */
function tagEnd(buf: string, from: number): number {
  let quote = '';
  for (let i = from + 1; i < buf.length; i++) {
    const c = buf[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return i + 1;
  }
  return -1;
}

/** Where the item opened at `from` closes (after `</name>`), CDATA and comments skipped; -1: not yet. */
function itemEnd(buf: string, from: number, name: string): number {
  let i = from;
  const close = `</${name}`;
  for (;;) {
    const next = buf.indexOf('<', i);
    if (next < 0) return -1;
    if (buf.startsWith('<![CDATA[', next)) {
      const end = buf.indexOf(']]>', next);
      if (end < 0) return -1;
      i = end + 3;
    } else if (buf.startsWith('<!--', next)) {
      const end = buf.indexOf('-->', next);
      if (end < 0) return -1;
      i = end + 3;
    } else if (buf.startsWith(close, next) && /[\s>]/.test(buf[next + close.length] ?? '')) {
      const end = buf.indexOf('>', next);
      return end < 0 ? -1 : end + 1;
    } else if (next + close.length >= buf.length) return -1;
    else i = next + 1;
  }
}

const SKIPPED: Array<[string, string]> = [
  ['<!--', '-->'],
  ['<![CDATA[', ']]>'],
  ['<?', '?>'],
  ['<!', '>'],
];

/**
 * The chunks of the XML text, in document order. `items` are the elements returned whole;
 * an item (or any tag) longer than `maxChunk` characters throws an XmlChunkError.
 */
export async function* xmlChunks(
  source: AsyncIterable<string>,
  items: ReadonlySet<string>,
  maxChunk: number,
): AsyncGenerator<XmlChunk> {
  let buf = '';
  let pos = 0;
  let ended = false;
  const iterator = source[Symbol.asyncIterator]();
  const more = async () => {
    buf = buf.slice(pos);
    pos = 0;
    if (buf.length > maxChunk) throw new XmlChunkError(`an element is longer than ${maxChunk} characters`);
    const next = await iterator.next();
    if (next.done) ended = true;
    else buf += next.value;
  };
  for (;;) {
    const lt = buf.indexOf('<', pos);
    if (lt < 0) {
      pos = buf.length;
      if (ended) return;
      await more();
      continue;
    }
    pos = lt;
    const chunk = scan(buf, pos, items);
    if (chunk === 'more') {
      if (ended) throw new XmlChunkError('unexpected end of file');
      await more();
      continue;
    }
    pos = chunk.end;
    if (chunk.chunk) yield chunk.chunk;
  }
}

/** The construct at `at` (a `<`): where it ends and its chunk, or 'more' when it is incomplete. */
function scan(
  buf: string,
  at: number,
  items: ReadonlySet<string>,
): 'more' | { end: number; chunk?: XmlChunk } {
  for (const [open, close] of SKIPPED) {
    if (buf.startsWith(open, at)) {
      const end = buf.indexOf(close, at + open.length);
      return end < 0 ? 'more' : { end: end + close.length };
    }
    if (buf.length - at < open.length && open.startsWith(buf.slice(at))) return 'more';
  }
  if (buf.length - at < 2) return 'more';
  if (buf[at + 1] === '/') {
    const end = buf.indexOf('>', at);
    if (end < 0) return 'more';
    const name = NAME.exec(buf.slice(at + 2, end))?.[0];
    if (!name) throw new XmlChunkError('invalid end tag');
    return { end: end + 1, chunk: { kind: 'close', name } };
  }
  const end = tagEnd(buf, at);
  if (end < 0) return 'more';
  const xml = buf.slice(at, end);
  const name = NAME.exec(xml.slice(1))?.[0];
  if (!name) throw new XmlChunkError('invalid start tag');
  const selfClosing = xml.endsWith('/>');
  if (!items.has(name)) return { end, chunk: { kind: 'open', name, xml, selfClosing } };
  if (selfClosing) return { end, chunk: { kind: 'item', name, xml } };
  const close = itemEnd(buf, end, name);
  if (close < 0) return 'more';
  return { end: close, chunk: { kind: 'item', name, xml: buf.slice(at, close) } };
}

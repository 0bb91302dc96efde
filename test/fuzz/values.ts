/** Hostile values, and how each is written into a URL, a form, multipart and JSON. */

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }
}

export type Category =
  | 'valid'
  | 'missing'
  | 'type'
  | 'range'
  | 'huge'
  | 'encoding'
  | 'traversal'
  | 'option'
  | 'escape'
  | 'body'
  | 'compressed'
  | 'nesting'
  | 'auth'
  | 'pollution'
  | 'mixed';

export interface FuzzValue {
  label: string;
  category: Category;
  /** The value's bytes, as a string parameter carries them. */
  text?: Buffer;
  /** Already percent-encoded: goes into a URL or a form body exactly so. */
  raw?: string;
  /** The value as JSON text (it may hold bytes that are not UTF-8). */
  json?: Buffer;
  /** Bracket notation for query and form: `[name, value]` pairs, both percent-encoded. */
  pairs?: (name: string) => Array<[string, string]>;
  /** Too long for a URL (Node refuses request heads over 16 KB). */
  big?: boolean;
  /** NUL, a lone surrogate or invalid UTF-8: a parameter holding it must be refused (400), never stored. */
  refuse?: boolean;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Percent-encodes every byte but the unreserved ones, so `/` and `%` stay inside one segment. */
export function percent(bytes: Buffer | string): string {
  const buffer = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  let out = '';
  for (const byte of buffer) {
    const char = String.fromCharCode(byte);
    out +=
      byte < 0x80 && UNRESERVED.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Decodes `%XX` to bytes and keeps malformed escapes as they are. */
export function unpercent(raw: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const hex = raw.slice(i + 1, i + 3);
    if (raw[i] === '%' && /^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(raw[i], 'utf8'));
  }
  return Buffer.from(bytes);
}

/** In a URL; a structure, which has no single string, goes as its JSON text. */
export const urlValue = (value: FuzzValue): string => value.raw ?? percent(value.text ?? value.json ?? '');

export function jsonValue(value: FuzzValue): Buffer {
  if (value.json) return value.json;
  const text = value.text ?? unpercent(value.raw ?? '');
  const decoded = text.toString('utf8');
  // Bytes that are not UTF-8 go into the JSON string as they are.
  if (Buffer.from(decoded, 'utf8').equals(text)) return Buffer.from(JSON.stringify(decoded));
  return Buffer.concat([Buffer.from('"'), text, Buffer.from('"')]);
}

export function valuePairs(name: string, value: FuzzValue): Array<[string, string]> {
  return value.pairs ? value.pairs(name) : [[percent(name), urlValue(value)]];
}

export const str = (
  category: Category,
  text: string,
  label = JSON.stringify(text).slice(0, 60),
): FuzzValue => ({
  label,
  category,
  text: Buffer.from(text, 'utf8'),
  big: text.length > 12_000,
});

/** Bytes as a string parameter, with their JSON spelling (an escape, or the bytes inside quotes). */
const bytes = (category: Category, label: string, value: number[], json?: string): FuzzValue => ({
  label,
  category,
  text: Buffer.from(value),
  json: json === undefined ? undefined : Buffer.from(json),
  refuse: true,
});

/** A number literal: the same text in a URL and, when JSON allows it, unquoted in JSON. */
const num = (literal: string): FuzzValue => {
  let json = literal;
  try {
    JSON.parse(literal);
  } catch {
    json = JSON.stringify(literal);
  }
  return { label: literal, category: 'range', text: Buffer.from(literal), json: Buffer.from(json) };
};

/** Escapes that decode, but to NUL or to bytes that are not UTF-8. */
const REFUSED_ESCAPE = /%00|%C0|%ED|%ff|%E2%82$/i;

const raw = (category: Category, value: string, label = value): FuzzValue => ({
  label,
  category,
  raw: value,
  refuse: REFUSED_ESCAPE.test(value),
});

/** A structured value: bracket pairs in a URL or form, the JSON text in JSON. */
const structure = (
  category: Category,
  label: string,
  json: string,
  pairs: (name: string) => Array<[string, string]>,
  big = false,
): FuzzValue => ({ label, category, json: Buffer.from(json), pairs, big });

/**
 * The edges of PostgreSQL's `integer` and `bigint` and one past each (±2^31, ±2^31±1, ±2^63, ±2^63±1):
 * a value beyond the contract's bounds is a 400 (or a path id's 404), one within them an ordinary answer.
 */
export const INTEGER_EDGES: FuzzValue[] = [
  '2147483648',
  '-2147483648',
  '2147483647',
  '2147483649',
  '-2147483647',
  '-2147483649',
  '9223372036854775808',
  '-9223372036854775808',
  '9223372036854775807',
  '9223372036854775809',
  '-9223372036854775807',
  '-9223372036854775809',
].map(num);

/** Pages far past the end, up to the contract's bounds (`page`, `per_page`): empty pages, not errors. */
export const FAR_PAGES: Array<[page: string, perPage?: string]> = [
  ['1000000000', '100'],
  ['1000000000'],
  ['2147483647', '100'],
  ['2147483647', '2147483647'],
];

export const RANGE: FuzzValue[] = [
  ...INTEGER_EDGES,
  ...[
    '4294967296',
    '99999999999999999999',
    '9007199254740993',
    '1e308',
    '1e309',
    '-1e308',
    'Infinity',
    '-Infinity',
    'NaN',
    '-1',
    '0',
    '-0',
    '1.5',
    '0x10',
    '1e3',
    '1e9',
    '000000000000000000000000',
  ].map(num),
];

export const MEGABYTE = 1024 * 1024;

export const HUGE: FuzzValue[] = [
  str('huge', 'a'.repeat(MEGABYTE), '1 MB of "a"'),
  str('huge', 'é'.repeat(MEGABYTE / 2), '1 MB of "é"'),
  str('huge', 'a/'.repeat(MEGABYTE / 2), '1 MB of "a/"'),
  str('huge', 'x'.repeat(65_536), '64 KB of "x"'),
  str('huge', 'b'.repeat(8_000), '8 KB of "b"'),
  str('huge', 'a'.repeat(256), '256 "a"'),
];

export const ENCODING: FuzzValue[] = [
  bytes('encoding', 'NUL inside', [0x61, 0x00, 0x62], '"a\\u0000b"'),
  bytes('encoding', 'NUL alone', [0x00], '"\\u0000"'),
  bytes('encoding', 'lone high surrogate', [0xed, 0xa0, 0x80], '"\\ud800"'),
  bytes('encoding', 'lone low surrogate', [0x6d, 0xed, 0xb0, 0x80], '"m\\udc00"'),
  bytes('encoding', 'invalid UTF-8 ff fe', [0xff, 0xfe]),
  bytes('encoding', 'overlong slash c0 af', [0xc0, 0xaf]),
  bytes('encoding', 'truncated sequence e2 82', [0x6d, 0xe2, 0x82]),
  bytes('encoding', 'CESU-8 pair', [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]),
  str('encoding', 'main\nHEAD'),
  str('encoding', 'a\r\nX-Injected: 1'),
  str('encoding', '\u001b[31mred'),
  str('encoding', '\u007f'),
  str('encoding', '\ufeffmain'),
  str('encoding', 'ma\u200bin'),
  str('encoding', '\u202eevil'),
  str('encoding', '😀/ü/中'),
  str('encoding', ' '),
  str('encoding', ''),
];

export const TRAVERSAL: FuzzValue[] = [
  '../..',
  '../../../../../../../../etc/passwd',
  '..',
  '.',
  '/',
  '//',
  '/etc/passwd',
  'a/../../b',
  'README.md/..',
  '.git',
  '.git/config',
  '..\\..\\windows',
  'refs/heads/../../config',
  'HEAD',
  'HEAD~99999',
  'main@{-1}',
  'main^{tree}',
  ':/',
  'main:README.md',
  '*',
  '[',
  'a..b',
  'main...HEAD',
  '@',
  'main.lock',
  'refs/heads/main',
  '~',
].map((text) => str('traversal', text));

export function optionValues(marker: string): FuzzValue[] {
  return [
    `--output=${marker}`,
    `--upload-pack=touch ${marker}`,
    '-',
    '--',
    '-n',
    '-main',
    '--help',
    '--end-of-options',
    '--all',
    `--exec=touch ${marker}`,
    `-c core.pager=touch ${marker}`,
    `--format=%(refname)`,
  ].map((text) => str('option', text));
}

export const ESCAPE: FuzzValue[] = [
  '%zz',
  '%',
  '%f',
  '%%',
  '%2',
  '%u0041',
  '%C0%80',
  '%ED%A0%80',
  '%ff%fe',
  '%2e%2e%2f%2e%2e',
  '%252e%252e%252f',
  'a%00b',
  '%E2%82',
].map((value) => raw('escape', value));

const brackets = (levels: number, leaf: string) => '[a]'.repeat(levels) + leaf;
const deepJson = (levels: number, open: string, close: string, leaf = '1') =>
  open.repeat(levels) + leaf + close.repeat(levels);

const nesting = new Map<boolean, FuzzValue[]>();

/** Deep bracket parameters and deep JSON. `small` keeps a URL under Node's 16 KB head limit. */
export function nestingValues(small: boolean): FuzzValue[] {
  if (!nesting.has(small)) nesting.set(small, makeNesting(small));
  return nesting.get(small)!;
}

function makeNesting(small: boolean): FuzzValue[] {
  const levels = small ? 4_000 : 100_000;
  return [
    structure(
      'nesting',
      `${levels} levels of [a]`,
      deepJson(levels, '{"a":', '}'),
      (name) => [[`${percent(name)}${brackets(levels, '')}`, '1']],
      !small,
    ),
    structure(
      'nesting',
      `${levels} levels of []`,
      deepJson(levels, '[', ']'),
      (name) => [[`${percent(name)}${'[]'.repeat(levels)}`, '1']],
      !small,
    ),
    structure(
      'nesting',
      `${levels} levels of [][a]`,
      deepJson(levels, '[{"a":', '}]'),
      (name) => [[`${percent(name)}${'[][a]'.repeat(levels / 2)}`, '1']],
      !small,
    ),
    structure('nesting', '64 levels of [a]', deepJson(64, '{"a":', '}'), (name) => [
      [`${percent(name)}${brackets(64, '')}`, '1'],
    ]),
  ];
}

/** Values of the wrong type for a parameter whose schema admits `types`. */
export function wrongTypes(types: Set<string>, enumValues?: unknown[]): FuzzValue[] {
  const values: FuzzValue[] = [
    structure('type', 'array', '["a","b"]', (name) => [
      [`${percent(name)}[]`, 'a'],
      [`${percent(name)}[]`, 'b'],
    ]),
    structure('type', 'object', '{"x":"1"}', (name) => [[`${percent(name)}[x]`, '1']]),
    structure('type', 'empty array', '[]', (name) => [[`${percent(name)}[]`, '']]),
    structure('type', 'indexed object', '{"0":"a","7":"b"}', (name) => [
      [`${percent(name)}[0]`, 'a'],
      [`${percent(name)}[7]`, 'b'],
    ]),
    structure('type', 'null', 'null', (name) => [[percent(name), '']]),
    structure('type', 'array of objects', '[{"a":[{"b":null}]}]', (name) => [
      [`${percent(name)}[][a][][b]`, ''],
    ]),
  ];
  if (types.has('integer') || types.has('number'))
    values.push(str('type', 'abc'), str('type', '1abc'), str('type', '1,5'), {
      ...str('type', 'true'),
      json: Buffer.from('true'),
    });
  if (types.has('boolean'))
    values.push(str('type', 'maybe'), str('type', '2'), { ...str('type', 'True'), json: Buffer.from('2') });
  if (types.has('string') || types.size === 0)
    values.push(
      { ...str('type', '123'), json: Buffer.from('123') },
      { ...str('type', 'true'), json: Buffer.from('true') },
      { ...str('type', '1e308'), json: Buffer.from('1e308') },
    );
  if (types.has('array')) values.push(str('type', 'scalar'));
  if (types.has('object')) values.push(str('type', 'not an object'));
  if (enumValues?.length) {
    values.push(str('type', 'not-in-enum'));
    const first = String(enumValues[0]);
    values.push(str('type', first.toUpperCase() === first ? first.toLowerCase() : first.toUpperCase()));
    values.push(str('type', ` ${first}`));
  }
  values.push(
    str('type', 'not-a-date'),
    str('type', '2026-13-45T99:99:99Z'),
    str('type', '0000-00-00'),
    str('type', '275760-09-14'),
    str('type', '-271821-04-19T00:00:00Z'),
  );
  return values;
}

/** Near misses of a valid value: whitespace, signs, leading zeros, exponents. */
export function nearMisses(valid: string): FuzzValue[] {
  return [
    ` ${valid}`,
    `${valid} `,
    `+${valid}`,
    `0${valid}`,
    `${valid}.0`,
    `${valid}e0`,
    `${valid}/`,
    `${valid}%`,
  ].map((text) => str('type', text));
}

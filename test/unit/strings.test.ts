import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors.js';
import { KeyedLock } from '../../src/core/keyed-lock.js';
import { parseBracketPairs, queryPairs } from '../../src/core/params.js';
import { assertCleanParams, decodeComponent, isFilePath } from '../../src/core/strings.js';
import {
  isValidBranchName,
  isValidRefName,
  isValidTagName,
  looksLikeObjectId,
} from '../../src/git/ref-names.js';

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof ApiError ? { status: err.status, body: err.body } : err;
  }
  return undefined;
};

describe('malformed strings are refused once, with 400', () => {
  it.each([
    ['a broken escape', '%zz'],
    ['a truncated escape', 'a%f'],
    ['bytes that are not UTF-8', '%ff%fe'],
    ['an encoded surrogate', '%ed%a0%80'],
    ['a NUL byte', 'a%00b'],
    ['a raw latin1 byte', 'caf\xe9'],
  ])('%s', (_name, raw) => {
    expect(refusal(() => decodeComponent(raw, true))).toEqual({
      status: 400,
      body: { error: expect.stringMatching(/^400 Bad Request - /) },
    });
  });

  it.each([
    ['plain text', 'main', 'main'],
    ['plus as space', 'a+b', 'a b'],
    ['UTF-8 escapes', 'caf%C3%A9', 'café'],
    ['raw UTF-8 bytes read as latin1', Buffer.from('café').toString('latin1'), 'café'],
    ['an escaped percent sign', '100%25', '100%'],
  ])('accepts %s', (_name, raw, expected) => {
    expect(decodeComponent(raw, true)).toBe(expected);
  });

  it.each([
    ['a NUL in a value', { a: 'x\u0000' }],
    ['a NUL in a key', { ['k\u0000']: 'x' }],
    ['a lone high surrogate', { a: 'x\ud800' }],
    ['a lone low surrogate', { a: ['\udc00y'] }],
    ['nesting deeper than 32', JSON.parse(`${'['.repeat(40)}${']'.repeat(40)}`)],
  ])('parsed params with %s', (_name, params) => {
    expect(refusal(() => assertCleanParams(params))).toMatchObject({ status: 400 });
  });

  it('keeps well-formed pairs of surrogates', () => {
    expect(() => assertCleanParams({ a: '😀', b: { c: ['ok'] } })).not.toThrow();
  });

  it('refuses 100,000 levels of brackets without walking them', () => {
    const query = `a${'[a]'.repeat(100_000)}=1`;
    expect(refusal(() => parseBracketPairs(queryPairs(query)))).toMatchObject({ status: 400 });
  });

  it('accepts nesting up to the limit', () => {
    expect(parseBracketPairs(queryPairs(`a${'[a]'.repeat(32)}=1`))).toHaveProperty('a.a.a');
  });
});

describe('file paths stay inside the repository', () => {
  it.each([
    ['lib/parser.rb', true],
    ['a..b/c', true],
    ['.hidden/..x', true],
    ['', true],
    ['..', false],
    ['../..', false],
    ['a/../../b', false],
    ['a\\..\\b', false],
    ['%2e%2e/x', false],
    ['a%2F..%2Fb', false],
  ])('%j → %s', (path, valid) => {
    expect(isFilePath(path)).toBe(valid);
  });
});

describe('ref names, without a git process', () => {
  it.each([
    ['refs/heads/main', true],
    ['refs/heads/feature/x-1', true],
    ['refs/heads/café', true],
    ['refs/heads/a..b', false],
    ['refs/heads/a b', false],
    ['refs/heads/a~1', false],
    ['refs/heads/a^', false],
    ['refs/heads/a:b', false],
    ['refs/heads/a?', false],
    ['refs/heads/a*', false],
    ['refs/heads/a[', false],
    ['refs/heads/a\\b', false],
    ['refs/heads/a@{1}', false],
    ['refs/heads/.hidden', false],
    ['refs/heads/a.lock', false],
    ['refs/heads/a.', false],
    ['refs/heads/a//b', false],
    ['refs/heads/a/', false],
    ['refs/heads/a\nb', false],
    ['refs/heads/a\u0000b', false],
    ['refs/heads/a\u007f', false],
    [`refs/heads/${'x'.repeat(255)}`, true],
    [`refs/heads/${'x'.repeat(256)}`, false],
    [`refs/heads/${'b'.repeat(1 << 20)}`, false],
    ['main', false],
    ['@', false],
  ])('%j → %s', (ref, valid) => {
    expect(isValidRefName(ref)).toBe(valid);
  });

  it.each([
    ['main', true],
    ['', false],
    ['HEAD', false],
    ['-x', false],
    ['refs/heads/x', false],
    ['refs/tags/x', false],
  ])('branch %j → %s', (name, valid) => {
    expect(isValidBranchName(name)).toBe(valid);
  });

  it('tells a name that looks like an object id', () => {
    expect(looksLikeObjectId('f'.repeat(40))).toBe(true);
    expect(looksLikeObjectId('f'.repeat(64))).toBe(true);
    expect(looksLikeObjectId('f'.repeat(41))).toBe(false);
  });

  it.each([
    ['v1.0', true],
    ['HEAD', false],
    ['-v1', false],
    ['refs/tags/v1', false],
  ])('tag %j → %s', (name, valid) => {
    expect(isValidTagName(name)).toBe(valid);
  });
});

describe('KeyedLock', () => {
  it('runs tasks of one key one at a time, in order, and of other keys freely', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const task = (name: string, ms: number) => async () => {
      log.push(`start ${name}`);
      await new Promise((resolve) => setTimeout(resolve, ms));
      log.push(`end ${name}`);
      return name;
    };
    const results = await Promise.all([
      lock.run('a', task('a1', 20)),
      lock.run('a', task('a2', 1)),
      lock.run('b', task('b1', 1)),
    ]);
    expect(results).toEqual(['a1', 'a2', 'b1']);
    expect(log.indexOf('end a1')).toBeLessThan(log.indexOf('start a2'));
    expect(log.indexOf('start b1')).toBeLessThan(log.indexOf('end a1'));
  });

  it('goes on after a task fails', async () => {
    const lock = new KeyedLock();
    await expect(lock.run('a', () => Promise.reject(new Error('x')))).rejects.toThrow('x');
    await expect(lock.run('a', () => Promise.resolve(1))).resolves.toBe(1);
  });
});

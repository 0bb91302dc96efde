import { describe, expect, it } from 'vitest';
import { Crc32 } from '../../src/runner/crc32.js';
import { Masker } from '../../src/runner/masker.js';

/** Feeds `chunks` through a masker and returns everything it let out, the end included. */
function mask(values: string[], chunks: Buffer[]): string {
  const masker = new Masker(values);
  const out = chunks.map((chunk) => masker.write(chunk));
  out.push(masker.end());
  return Buffer.concat(out).toString();
}

/** Every way of cutting `text` in two, and in three around its middle, plus one byte at a time. */
function splits(text: string): Buffer[][] {
  const bytes = Buffer.from(text);
  const result: Buffer[][] = [[bytes], [...bytes].map((b) => Buffer.from([b]))];
  for (let i = 0; i <= bytes.length; i++) {
    result.push([bytes.subarray(0, i), bytes.subarray(i)]);
    const j = Math.floor((i + bytes.length) / 2);
    result.push([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]);
  }
  return result;
}

describe('the runner masks variable values in the trace', () => {
  it.each([
    ['one value', ['s3cr3t-value'], 'token=s3cr3t-value\n', 'token=[MASKED]\n'],
    ['a value twice', ['hunter22'], 'hunter22 and hunter22', '[MASKED] and [MASKED]'],
    ['no value in the output', ['hunter22'], 'nothing to see\n', 'nothing to see\n'],
    ['a prefix only, at the end', ['hunter22'], 'ends with hunter2', 'ends with hunter2'],
    ['a prefix then something else', ['hunter22'], 'hunterhunter22!', 'hunter[MASKED]!'],
    ['a repeated start', ['aab'], 'aaab', 'a[MASKED]'],
    ['two values', ['alpha-secret', 'beta-secret'], 'alpha-secret/beta-secret', '[MASKED]/[MASKED]'],
    ['the longer value wins', ['secret', 'secret-long'], 'x secret-long y', 'x [MASKED] y'],
    ['the shorter one alone', ['secret', 'secret-long'], 'x secret-lo', 'x [MASKED]-lo'],
    ['overlapping values', ['abcdef', 'cd'], 'xxabcdefxx abcdxx', 'xx[MASKED]xx ab[MASKED]xx'],
    ['multi-byte characters', ['pässwörd'], 'pw: pässwörd ✓', 'pw: [MASKED] ✓'],
    ['an empty value is ignored', ['', 'tok'], 'a tok b', 'a [MASKED] b'],
    ['no values at all', [], 'plain output', 'plain output'],
    ['the mask text itself', ['MASKED'], '[MASKED] MASKED', '[[MASKED]] [MASKED]'],
  ])('%s, however the output is cut', (_name, values, input, expected) => {
    for (const chunks of splits(input)) expect(mask(values, chunks)).toBe(expected);
  });

  it('holds back at most the longest value less one byte', () => {
    const masker = new Masker(['0123456789']);
    expect(masker.write(Buffer.from('output 012345678')).toString()).toBe('output ');
    expect(masker.write(Buffer.from('9 done')).toString()).toBe('[MASKED] done');
    expect(masker.write(Buffer.from('abc')).toString()).toBe('abc');
    expect(masker.end().toString()).toBe('');
  });
});

describe('the trace checksum', () => {
  it.each([
    ['', 'crc32:00000000'],
    ['a', 'crc32:e8b7be43'],
    ['123456789', 'crc32:cbf43926'],
    ['The quick brown fox jumps over the lazy dog', 'crc32:414fa339'],
  ])('of %j is %s, in one piece or many', (text, expected) => {
    const whole = new Crc32();
    whole.update(Buffer.from(text));
    expect(whole.digest()).toBe(expected);
    const parts = new Crc32();
    for (const byte of Buffer.from(text)) parts.update(Buffer.from([byte]));
    expect(parts.digest()).toBe(expected);
  });
});

/** dotenv reports: GitLab's line format, key rules, limits and messages. */
import { describe, expect, it } from 'vitest';
import { checkDotenvSize, parseDotenv } from '../../src/ci_reports/dotenv.js';
import { ApiError } from '../../src/core/errors.js';

const limits = { size: 5120, variables: 20 };

function refusal(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    return (err as ApiError).body;
  }
  throw new Error('not refused');
}

describe('parseDotenv', () => {
  const accepted: Array<[string, string, Array<[string, string]>]> = [
    ['one variable', 'KEY=value\n', [['KEY', 'value']]],
    [
      'no final newline',
      'A=1\nB=2',
      [
        ['A', '1'],
        ['B', '2'],
      ],
    ],
    [
      'CRLF lines',
      'A=1\r\nB=2\r\n',
      [
        ['A', '1'],
        ['B', '2'],
      ],
    ],
    ['spaces around', '  A =  spaced value  \n', [['A', 'spaced value']]],
    ['the first = splits', 'URL=https://x.test/?a=b\n', [['URL', 'https://x.test/?a=b']]],
    ['an empty value', 'EMPTY=\n', [['EMPTY', '']]],
    [
      'quotes kept',
      `Q="quoted"\nS='single'\n`,
      [
        ['Q', '"quoted"'],
        ['S', "'single'"],
      ],
    ],
    ['no expansion', 'A=$HOME\n', [['A', '$HOME']]],
    [
      'a later key wins in place',
      'A=1\nB=2\nA=3\n',
      [
        ['A', '3'],
        ['B', '2'],
      ],
    ],
    ['a byte order mark', '\uFEFFA=1\n', [['A', '1']]],
    ['an empty file', '', []],
    [
      'digits and underscores',
      '_1=x\n9A=y\n',
      [
        ['_1', 'x'],
        ['9A', 'y'],
      ],
    ],
  ];
  it.each(accepted)('accepts %s', (_name, content, expected) => {
    expect(parseDotenv(content, limits).map((v) => [v.key, v.value])).toEqual(expected);
  });

  const refused: Array<[string, string, string]> = [
    ['an empty line', 'A=1\n\nB=2\n', 'Invalid Format'],
    ['a line without =', 'export\n', 'Invalid Format'],
    ['a comment', '# note\nA=1\n', 'Invalid Format'],
    ['a multiline value', 'A="one\ntwo"\n', 'Invalid Format'],
    ['a key with a dash', 'MY-KEY=1\n', "Validation failed: Key can contain only letters, digits and '_'."],
    ['export KEY=', 'export A=1\n', "Validation failed: Key can contain only letters, digits and '_'."],
    ['a key with a #', '#A=1\n', "Validation failed: Key can contain only letters, digits and '_'."],
    [
      'an empty key',
      '=value\n',
      "Validation failed: Key can't be blank, Key can contain only letters, digits and '_'.",
    ],
    [
      'a long key',
      `${'K'.repeat(256)}=1\n`,
      'Validation failed: Key is too long (maximum is 255 characters)',
    ],
  ];
  it.each(refused)('refuses %s', (_name, content, message) => {
    expect(refusal(() => parseDotenv(content, limits))).toEqual({ message });
  });

  it('counts distinct keys against dotenv_variables, before checking keys', () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `K${i}=v`).join('\n');
    expect(parseDotenv(lines(20), limits)).toHaveLength(20);
    expect(parseDotenv(`${lines(20)}\nK0=again`, limits)).toHaveLength(20);
    expect(refusal(() => parseDotenv(lines(21), limits))).toEqual({
      message: 'Dotenv files cannot have more than 20 variables',
    });
    expect(refusal(() => parseDotenv(`${lines(21)}\nBAD-KEY=1`, limits))).toEqual({
      message: 'Dotenv files cannot have more than 20 variables',
    });
    expect(parseDotenv(lines(50), { size: 0, variables: 0 })).toHaveLength(50);
  });
});

describe('checkDotenvSize', () => {
  it.each([
    [5119, null],
    [5120, 'Dotenv Artifact Too Big. Maximum Allowable Size: 5120'],
    [10000, 'Dotenv Artifact Too Big. Maximum Allowable Size: 5120'],
  ])('a file of %i bytes', (size, message) => {
    if (message === null) expect(() => checkDotenvSize(size, limits)).not.toThrow();
    else expect(refusal(() => checkDotenvSize(size, limits))).toEqual({ message });
  });

  it('has no limit at 0', () => {
    expect(() => checkDotenvSize(10_000_000, { size: 0, variables: 0 })).not.toThrow();
  });
});

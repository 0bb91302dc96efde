import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { diffLines, isImagePath, lineCode, positionLineCode } from '../../src/notes/diff-position.js';
import type { FileDiff } from '../../src/git/diffs.js';

const PATCH = ['@@ -1,3 +1,4 @@', ' a', '-b', '+B', ' c', '+d', '\\ No newline at end of file'].join('\n');
const file = { newPath: 'lib.txt', oldPath: 'lib.txt', diff: PATCH } as FileDiff;
const code = (old: number, now: number) =>
  `${createHash('sha1').update('lib.txt').digest('hex')}_${old}_${now}`;

describe('diff lines', () => {
  it('counts each side as GitLab does: added lines carry the next old number, removed the next new', () => {
    expect(diffLines(PATCH)).toEqual([
      { kind: 'context', oldLine: 1, newLine: 1 },
      { kind: 'removed', oldLine: 2, newLine: 2 },
      { kind: 'added', oldLine: 3, newLine: 2 },
      { kind: 'context', oldLine: 3, newLine: 3 },
      { kind: 'added', oldLine: 4, newLine: 4 },
    ]);
  });

  it('numbers a new file from old line 0', () => {
    expect(diffLines('@@ -0,0 +1,2 @@\n+x\n+y')).toEqual([
      { kind: 'added', oldLine: 0, newLine: 1 },
      { kind: 'added', oldLine: 0, newLine: 2 },
    ]);
    expect(lineCode('new.txt', 0, 1)).toBe(`${createHash('sha1').update('new.txt').digest('hex')}_0_1`);
  });

  it.each([
    [null, 2, code(3, 2)],
    [2, null, code(2, 2)],
    [3, 3, code(3, 3)],
    [null, 3, null],
    [3, null, null],
    [1, 2, null],
    [null, null, null],
    [null, 99, null],
  ])('old %s, new %s: %s', (oldLine, newLine, expected) => {
    expect(positionLineCode(file, oldLine, newLine)).toBe(expected);
  });
});

describe('image paths', () => {
  it.each([
    ['logo.png', true],
    ['docs/Photo.JPEG', true],
    ['a/b/c.webp', true],
    ['icon.ico', true],
    ['scan.tiff', true],
    ['drawing.svg', false],
    ['png', false],
    ['dir.png/readme', false],
    ['.png', false],
    ['dir/.gif', false],
    ['lib.txt', false],
  ])('%s: %s', (path, image) => {
    expect(isImagePath(path)).toBe(image);
  });
});

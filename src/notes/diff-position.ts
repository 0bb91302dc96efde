import { createHash } from 'node:crypto';
import type { FileDiff } from '../git/diffs.js';

/** One line of a diff with its numbers on each side, counted as GitLab's diff parser counts them. */
interface DiffLine {
  kind: 'added' | 'removed' | 'context';
  oldLine: number;
  newLine: number;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

/** The lines of a file's hunks: an added line carries the old side's next number, a removed one the new side's. */
export function diffLines(patch: string): DiffLine[] {
  const lines: DiffLine[] = [];
  let oldLine = 0;
  let newLine = 0;
  for (const text of patch.split('\n')) {
    const hunk = HUNK.exec(text);
    if (hunk) {
      oldLine = Number(hunk[1]);
      newLine = Number(hunk[2]);
      continue;
    }
    if (oldLine === 0 && newLine === 0) continue;
    if (text.startsWith('+')) lines.push({ kind: 'added', oldLine, newLine: newLine++ });
    else if (text.startsWith('-')) lines.push({ kind: 'removed', oldLine: oldLine++, newLine });
    else if (text.startsWith(' ')) lines.push({ kind: 'context', oldLine: oldLine++, newLine: newLine++ });
  }
  return lines;
}

/** GitLab's line code: the SHA-1 of the file's path, then the old and new line numbers. */
export const lineCode = (path: string, oldLine: number, newLine: number) =>
  `${createHash('sha1').update(path).digest('hex')}_${oldLine}_${newLine}`;

/** A line a position names on a file's diff: GitLab's line code and which side it is on. */
export interface PositionLine {
  lineCode: string;
  /** `new` for an added line, `old` for a removed one, null for an unchanged one (GitLab's line types). */
  type: 'new' | 'old' | null;
}

/**
 * The line a position names on a file's diff, or null when it names no line the diff shows: a new line
 * alone is an added line, an old line alone a removed one, both an unchanged line.
 */
export function positionLine(
  file: FileDiff,
  oldLine: number | null | undefined,
  newLine: number | null | undefined,
): PositionLine | null {
  if (!oldLine && !newLine) return null;
  const line = diffLines(file.diff).find((candidate) =>
    oldLine && newLine
      ? candidate.kind === 'context' && candidate.oldLine === oldLine && candidate.newLine === newLine
      : newLine
        ? candidate.kind === 'added' && candidate.newLine === newLine
        : candidate.kind === 'removed' && candidate.oldLine === oldLine,
  );
  if (!line) return null;
  const type = line.kind === 'added' ? 'new' : line.kind === 'removed' ? 'old' : null;
  return { lineCode: lineCode(file.newPath, line.oldLine, line.newLine), type };
}

/** The line code of a position on a file's diff, or null when it names no line the diff shows. */
export const positionLineCode = (
  file: FileDiff,
  oldLine: number | null | undefined,
  newLine: number | null | undefined,
): string | null => positionLine(file, oldLine, newLine)?.lineCode ?? null;

/** The extensions GitLab's image diff viewer shows as images (its safe image extensions). */
const IMAGE_EXTENSIONS = new Set(['png', 'jpg', 'jpeg', 'gif', 'bmp', 'tiff', 'ico', 'webp']);

/** Whether a diff shows this file as an image, on which an image position can sit; a dot file has no extension. */
export function isImagePath(path: string): boolean {
  const dot = path.lastIndexOf('.');
  return dot > path.lastIndexOf('/') + 1 && IMAGE_EXTENSIONS.has(path.slice(dot + 1).toLowerCase());
}

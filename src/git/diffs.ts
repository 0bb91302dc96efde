/**
 * The file diffs between two commits, read as GitLab's compare reads them: one entry per changed file,
 * its patch without the git headers, and GitLab's default diff limits. The patch output is parsed as it
 * streams, one file at a time, so a huge diff never sits in memory.
 */
import { objectBatches } from './object-batch.js';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { git, spawnGit } from './git.js';

/** The tree of an empty repository: the base of a comparison between unrelated histories. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

export interface DiffLimits {
  /** At most this many files are listed. */
  maxFiles: number;
  /** The list stops before the total line count reaches this. */
  maxLines: number;
  /** The list stops before the total patch size reaches this. */
  maxBytes: number;
  /** A single file's patch above this is left empty. */
  maxPatchBytes: number;
}

/** GitLab's defaults: Commit.max_diff_options (1000 files, 50,000 lines, 5 KiB a file) and a 200 KiB patch. */
export const DEFAULT_DIFF_LIMITS: DiffLimits = {
  maxFiles: 1000,
  maxLines: 50_000,
  maxBytes: 1000 * 5 * 1024,
  maxPatchBytes: 200 * 1024,
};

export interface FileDiff {
  oldPath: string;
  newPath: string;
  /** Octal, `0` when the file did not exist on that side. */
  aMode: string;
  bMode: string;
  newFile: boolean;
  renamedFile: boolean;
  deletedFile: boolean;
  /** The hunks, or git's `Binary files ... differ` line; empty when too large or nothing but a rename or mode change. */
  diff: string;
  tooLarge: boolean;
}

export interface DiffResult {
  diffs: FileDiff[];
  /** The limits cut the list short. */
  overflow: boolean;
}

/** Renames are found as GitLab's Gitaly finds them. */
const DIFF_OPTIONS = ['--no-color', '--no-ext-diff', '--no-textconv', '--find-renames=30%'];

interface RawEntry {
  aMode: string;
  bMode: string;
  status: string;
  oldPath: string;
  newPath: string;
}

const octal = (mode: string) => parseInt(mode, 8).toString(8);

/**
 * `git diff --raw -z` records, `:<mode> <mode> <sha> <sha> <status>\0<path>\0[<path>\0]` each, read from
 * the front of `buffer`. Returns the entries and where they stop: at the empty field that ends them (the
 * patch follows it), or null when the buffer ends before that.
 */
function parseRaw(buffer: Buffer, entries: RawEntry[]): { used: number; end: number | null } {
  let at = 0;
  for (;;) {
    if (at >= buffer.length) return { used: at, end: null };
    if (buffer[at] === 0) return { used: at + 1, end: at + 1 };
    const metaEnd = buffer.indexOf(0, at);
    if (metaEnd === -1) return { used: at, end: null };
    const [aMode, bMode, , , status] = buffer.toString('latin1', at + 1, metaEnd).split(' ');
    const twoPaths = status.startsWith('R') || status.startsWith('C');
    const oldEnd = buffer.indexOf(0, metaEnd + 1);
    const newEnd = oldEnd === -1 || !twoPaths ? oldEnd : buffer.indexOf(0, oldEnd + 1);
    if (newEnd === -1) return { used: at, end: null };
    const oldPath = buffer.toString('utf8', metaEnd + 1, oldEnd);
    const newPath = twoPaths ? buffer.toString('utf8', oldEnd + 1, newEnd) : oldPath;
    entries.push({ aMode: octal(aMode), bMode: octal(bMode), status: status[0], oldPath, newPath });
    at = newEnd + 1;
  }
}

const HEADER_LINES = [
  'diff --git ',
  'old mode ',
  'new mode ',
  'deleted file mode ',
  'new file mode ',
  'copy from ',
  'copy to ',
  'rename from ',
  'rename to ',
  'similarity index ',
  'dissimilarity index ',
  'index ',
  '--- ',
  '+++ ',
];

/** Where a file's patch leaves its git headers and its hunks (or binary notice) begin. */
function hunksOffset(section: Buffer): number {
  let offset = 0;
  while (offset < section.length) {
    const end = section.indexOf(10, offset);
    const line = section.toString('utf8', offset, end === -1 ? section.length : Math.min(end, offset + 32));
    if (!HEADER_LINES.some((prefix) => line.startsWith(prefix))) return offset;
    if (end === -1) return section.length;
    offset = end + 1;
  }
  return offset;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodePatch(bytes: Buffer, entry: RawEntry): string {
  try {
    return utf8.decode(bytes);
  } catch {
    // GitLab's json_safe_diff: a patch that is not text is reported, not sent.
    return `Binary files ${entry.oldPath} and ${entry.newPath} differ\n`;
  }
}

const countLines = (text: string) => {
  let lines = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
  return lines;
};

const MARKER = Buffer.from('\ndiff --git ');
/** Room for a file's git headers on top of its patch, when deciding whether the patch is too large. */
const HEADER_ROOM = 64 * 1024;

/** The diffs from `base` (a commit or EMPTY_TREE) to `head`, within `limits`. */
export async function readDiffs(
  dir: string,
  base: string,
  head: string,
  limits: DiffLimits = DEFAULT_DIFF_LIMITS,
): Promise<DiffResult> {
  // One process: the raw records (which file, its modes and status) come first, then the patches.
  const child = spawnGit(
    [
      'diff',
      '--raw',
      '-z',
      '--no-abbrev',
      '--patch',
      '--src-prefix=a/',
      '--dst-prefix=b/',
      ...DIFF_OPTIONS,
      '--end-of-options',
      base,
      head,
      '--',
    ],
    { gitDir: dir },
  );
  child.stdin!.end();
  child.stderr!.resume();
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const entries: RawEntry[] = [];
  const result: DiffResult = { diffs: [], overflow: false };
  const cap = limits.maxPatchBytes + HEADER_ROOM;
  let kept: Buffer[] = [];
  let keptSize = 0;
  let sectionSize = 0;
  let lines = 0;
  let bytes = 0;
  let done = false;

  const append = (part: Buffer) => {
    if (keptSize < cap) {
      const room = cap - keptSize;
      const slice = part.length > room ? part.subarray(0, room) : part;
      kept.push(slice);
      keptSize += slice.length;
    }
    sectionSize += part.length;
  };

  const finishSection = () => {
    if (sectionSize === 0) return;
    const entry = entries[result.diffs.length];
    const section = Buffer.concat(kept);
    kept = [];
    keptSize = 0;
    const wholeSize = sectionSize;
    sectionSize = 0;
    if (!entry) return;
    if (result.diffs.length >= limits.maxFiles) {
      result.overflow = true;
      done = true;
      return;
    }
    const start = hunksOffset(section);
    const tooLarge = wholeSize > cap || wholeSize - start > limits.maxPatchBytes;
    const diff = tooLarge ? '' : decodePatch(section.subarray(start), entry);
    const diffLines = countLines(diff);
    const diffBytes = Buffer.byteLength(diff);
    if (lines + diffLines >= limits.maxLines || bytes + diffBytes >= limits.maxBytes) {
      result.overflow = true;
      done = true;
      return;
    }
    lines += diffLines;
    bytes += diffBytes;
    result.diffs.push({
      oldPath: entry.oldPath,
      newPath: entry.newPath,
      aMode: entry.aMode,
      bMode: entry.bMode,
      newFile: entry.status === 'A',
      renamedFile: entry.status === 'R',
      deletedFile: entry.status === 'D',
      diff,
      tooLarge,
    });
  };

  let pending: Buffer = Buffer.alloc(0);
  let inPatch = false;
  try {
    for await (const chunk of child.stdout!) {
      pending = pending.length ? Buffer.concat([pending, chunk as Buffer]) : (chunk as Buffer);
      if (!inPatch) {
        const { used, end } = parseRaw(pending, entries);
        pending = pending.subarray(used);
        if (end === null) continue;
        inPatch = true;
      }
      for (;;) {
        const at = pending.indexOf(MARKER);
        if (at === -1) {
          // Keep what could be the start of the next marker; the rest belongs to this file.
          const keep = pending.length - (MARKER.length - 1);
          if (keep > 0) {
            append(pending.subarray(0, keep));
            pending = pending.subarray(keep);
          }
          break;
        }
        append(pending.subarray(0, at + 1));
        finishSection();
        pending = pending.subarray(at + 1);
        if (done) break;
      }
      if (done) break;
    }
    if (!done && inPatch) {
      append(pending);
      finishSection();
    }
  } finally {
    if (child.exitCode === null) child.kill();
  }
  const code = await exited;
  if (!done && code !== 0) throw new Error(`git diff exited with ${code}`);
  return result;
}

/** Lock files and minified assets: GitLab knows these as generated unless .gitattributes says otherwise. */
const KNOWN_GENERATED =
  /(^|\/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|npm-shrinkwrap\.json|Gemfile\.lock|Cargo\.lock|composer\.lock|poetry\.lock|Pipfile\.lock|go\.sum)$|\.min\.(js|css)$/;

/**
 * Which of `paths` are generated at `commit`: `.gitattributes` (`gitlab-generated`, read as git reads
 * it, from a throw-away index of that commit) wins; otherwise the well-known names.
 */
export async function generatedPaths(dir: string, commit: string, paths: string[]): Promise<Set<string>> {
  const generated = new Set<string>();
  if (paths.length === 0) return generated;
  // Only the .gitattributes files on the way to each path can say anything: found through the shared
  // object reader, and only they go into the temporary index, never the whole tree.
  const dirs = new Set<string>(['']);
  for (const file of paths)
    for (let slash = file.indexOf('/'); slash > 0; slash = file.indexOf('/', slash + 1))
      dirs.add(file.slice(0, slash));
  const attributes = (
    await Promise.all(
      [...dirs].map(async (parent) => {
        const name = parent ? `${parent}/.gitattributes` : '.gitattributes';
        const found = await objectBatches.ask(dir, `${commit}:${name}`, false);
        return found?.object.type === 'blob' ? `100644 ${found.object.id}\t${name}` : null;
      }),
    )
  ).filter((line): line is string => line !== null);
  if (attributes.length === 0) {
    for (const file of paths) if (KNOWN_GENERATED.test(file)) generated.add(file);
    return generated;
  }
  const index = path.join(os.tmpdir(), `forge-attr-${crypto.randomBytes(8).toString('hex')}`);
  try {
    const env = { GIT_INDEX_FILE: index };
    await git(['update-index', '--index-info'], { gitDir: dir, env, input: `${attributes.join('\n')}\n` });
    const { stdout } = await git(['check-attr', '-z', '--cached', '--stdin', 'gitlab-generated'], {
      gitDir: dir,
      env,
      input: `${paths.join('\0')}\0`,
    });
    const fields = stdout.toString('utf8').split('\0');
    for (let i = 0; i + 2 < fields.length; i += 3) {
      const [file, , value] = fields.slice(i, i + 3);
      if (value === 'unset' || value === 'false') continue;
      if (value === 'unspecified' ? KNOWN_GENERATED.test(file) : true) generated.add(file);
    }
  } finally {
    await fs.rm(index, { force: true });
  }
  return generated;
}

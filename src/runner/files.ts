/**
 * The files a job hands on: artifact and cache paths matched as GitLab Runner's file archiver does
 * (`paths` and `exclude` are doublestar globs relative to the project directory, a matched directory
 * brings its contents, `untracked` adds git's untracked files), written as zip (yazl), gzip or raw, and
 * zips extracted (yauzl) for dependencies and caches.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import picomatch from 'picomatch';
import yauzl from 'yauzl';
import yazl from 'yazl';

export interface FileSelection {
  paths?: string[];
  exclude?: string[];
  /** Git's untracked files, relative to the project directory. */
  untracked?: string[];
}

/** Every file and symlink under `root`, relative, with `/` separators; `.git` is left out. */
async function walk(root: string, dir = ''): Promise<string[]> {
  const out: string[] = [];
  let entries: fs.Dirent[];
  try {
    entries = await fs.promises.readdir(path.join(root, dir), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const rel = dir ? `${dir}/${entry.name}` : entry.name;
    if (rel === '.git') continue;
    if (entry.isDirectory()) out.push(...(await walk(root, rel)));
    else if (entry.isFile() || entry.isSymbolicLink()) out.push(rel);
  }
  return out;
}

const clean = (pattern: string) => pattern.replace(/^\.\//, '').replace(/\/+$/, '');

/** A pattern that leaves the project directory matches nothing (GitLab Runner refuses it too). */
const outside = (pattern: string) => path.isAbsolute(pattern) || clean(pattern).split('/').includes('..');

/** The selected files, sorted; `warnings` names the patterns that matched nothing. */
export async function selectFiles(
  root: string,
  selection: FileSelection,
): Promise<{ files: string[]; warnings: string[] }> {
  const all = await walk(root);
  const chosen = new Set<string>();
  const warnings: string[] = [];
  for (const raw of selection.paths ?? []) {
    if (outside(raw)) {
      warnings.push(`${raw}: artifact path is not a subpath of project directory`);
      continue;
    }
    const pattern = clean(raw);
    const matches = pattern === '' || pattern === '.' ? () => true : picomatch(pattern, { dot: true });
    let found = 0;
    for (const file of all) {
      // A matched directory brings everything under it.
      const parts = file.split('/');
      for (let i = 1; i <= parts.length; i++)
        if (matches(parts.slice(0, i).join('/'))) {
          chosen.add(file);
          found++;
          break;
        }
    }
    if (!found)
      warnings.push(
        `${raw}: no matching files. Ensure that the artifact path is relative to the working directory`,
      );
  }
  for (const file of selection.untracked ?? []) chosen.add(file);
  const excludes = (selection.exclude ?? [])
    .filter((p) => !outside(p))
    .map((p) => picomatch(clean(p), { dot: true }));
  const files = [...chosen]
    .filter((file) => {
      const parts = file.split('/');
      for (let i = 1; i <= parts.length; i++)
        if (excludes.some((m) => m(parts.slice(0, i).join('/')))) return false;
      return true;
    })
    .sort();
  return { files, warnings };
}

/** A zip of `files` (relative to `root`) at `target`. */
export async function writeZip(root: string, files: string[], target: string): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const file of files) {
    const full = path.join(root, file);
    const stat = await fs.promises.lstat(full);
    if (stat.isSymbolicLink()) {
      zip.addBuffer(Buffer.from(await fs.promises.readlink(full)), file, {
        mode: stat.mode,
        mtime: stat.mtime,
      });
    } else zip.addFile(full, file, { mode: stat.mode, mtime: stat.mtime });
  }
  zip.end();
  await pipeline(zip.outputStream, fs.createWriteStream(target));
}

/**
 * The file's real path when it is inside `root`: a report read by content (gzip, raw) is never a
 * symlink to something of the runner's machine (the runner may run as root).
 */
export async function contentPath(root: string, file: string): Promise<string> {
  const base = await fs.promises.realpath(root);
  const real = await fs.promises.realpath(path.join(root, file));
  if (!real.startsWith(`${base}${path.sep}`))
    throw new Error(`${file}: points outside the project directory`);
  return real;
}

/** GitLab Runner's gzip format: one gzip member per file, concatenated. */
export async function writeGzip(root: string, files: string[], target: string): Promise<void> {
  const out = fs.createWriteStream(target);
  for (const file of files)
    await pipeline(fs.createReadStream(await contentPath(root, file)), zlib.createGzip(), out, {
      end: false,
    });
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
}

/**
 * Extracts a zip into `root`; entries that would leave it are skipped. With `owner`, what it creates
 * belongs to the job's user (the runner may run as root). Returns the number of files.
 */
export async function extractZip(
  archive: string,
  root: string,
  owner?: { uid: number; gid: number },
): Promise<number> {
  const zip = await yauzl.openPromise(archive);
  const base = await fs.promises.realpath(root);
  const inside = (p: string) => p === base || p.startsWith(`${base}${path.sep}`);
  let count = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      const target = path.resolve(base, entry.fileName);
      if (!inside(target)) continue;
      const isDir = entry.fileName.endsWith('/');
      const dir = isDir ? target : path.dirname(target);
      const made = await fs.promises.mkdir(dir, { recursive: true });
      // An earlier entry may be a symlink out of the directory: nothing is written through one.
      if (!inside(await fs.promises.realpath(dir))) continue;
      if (owner && made) await chownDown(made, dir, owner);
      if (isDir) continue;
      const mode = (entry.externalFileAttributes >>> 16) & 0o170777;
      await fs.promises.rm(target, { force: true });
      const stream = await zip.openReadStreamPromise(entry);
      if ((mode & 0o170000) === 0o120000) {
        const chunks: Buffer[] = [];
        for await (const chunk of stream) chunks.push(chunk as Buffer);
        await fs.promises.symlink(Buffer.concat(chunks).toString(), target);
      } else {
        await pipeline(stream, fs.createWriteStream(target, { mode: mode & 0o777 || 0o644 }));
      }
      if (owner) await fs.promises.lchown(target, owner.uid, owner.gid);
      count++;
    }
  } finally {
    zip.close();
  }
  return count;
}

/** Gives `owner` the directories mkdir made: the first one it made down to `last`. */
async function chownDown(first: string, last: string, owner: { uid: number; gid: number }): Promise<void> {
  let dir = first;
  await fs.promises.chown(dir, owner.uid, owner.gid);
  for (const part of path.relative(first, last).split(path.sep).filter(Boolean)) {
    dir = path.join(dir, part);
    await fs.promises.chown(dir, owner.uid, owner.gid);
  }
}

/**
 * The benchmark's repository, built locally with one `git fast-import` stream (seconds, where
 * committing through a work tree would take minutes): 10,000 files, 2,000 commits, 50 branches
 * (main and 49 topic branches) and 1,000 tags (half annotated), with deterministic content.
 */
import { spawn, execFileSync } from 'node:child_process';

export interface RepoShape {
  files: number;
  commits: number;
  branches: number;
  tags: number;
}

/** `BENCH_TAGS` changes the tag count alone, to see how tag pages scale (10,000 against 1,000). */
export const DEFAULT_SHAPE: RepoShape = {
  files: 10_000,
  commits: 2_000,
  branches: 50,
  tags: Number(process.env.BENCH_TAGS ?? 1_000),
};

/** A small seeded PRNG (mulberry32), so every run builds the same repository. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Paths: README.md, docs/pageNN.md, and the rest under src/modNN/fileNNN.ts, 100 per directory. */
export function filePaths(count: number): string[] {
  const paths = ['README.md'];
  for (let i = 0; paths.length < Math.min(count, 100); i++) paths.push(`docs/page${pad(i, 2)}.md`);
  for (let i = 0; paths.length < count; i++)
    paths.push(`src/mod${pad(Math.floor(i / 100), 2)}/file${pad(i % 100, 3)}.ts`);
  return paths;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

function content(path: string, revision: number): string {
  const lines = [`// ${path}, revision ${revision}`];
  for (let i = 0; i < 30; i++)
    lines.push(`export const value${i} = ${(i * 7919 + revision) % 10007}; // ${path}`);
  return `${lines.join('\n')}\n`;
}

export const tagName = (i: number) => `v${Math.floor(i / 100)}.${Math.floor(i / 10) % 10}.${i % 10}`;
export const branchName = (i: number) => `feature/topic-${pad(i, 2)}`;

/** Writes the fast-import stream for `shape` to `write`. */
export function* fastImportStream(shape: RepoShape): Generator<string> {
  const rnd = random(42);
  const paths = filePaths(shape.files);
  const revisions = new Array<number>(paths.length).fill(0);
  const topicBranches = shape.branches - 1;
  const topicCommits = 2;
  const mainCommits = shape.commits - topicBranches * topicCommits;
  const base = 1_700_000_000;
  let mark = 0;
  let time = base;
  const who = (t: number) => `Bench Author <bench@example.com> ${t} +0000`;
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;

  const mainMarks: number[] = [];
  let branchesMade = 0;
  let tagsMade = 0;
  for (let c = 0; c < mainCommits; c++) {
    const m = ++mark;
    mainMarks.push(m);
    time += 3600;
    let out = `commit refs/heads/main\nmark :${m}\nauthor ${who(time)}\ncommitter ${who(time)}\n`;
    if (c === 0) {
      out += data('Initial import\n');
      for (let f = 0; f < paths.length; f++)
        out += `M 100644 inline ${paths[f]}\n${data(content(paths[f], 0))}`;
    } else {
      out += data(`Change ${c}: update a few files\n\nMore detail about change ${c}.\n`);
      out += `from :${mainMarks[c - 1]}\n`;
      const touched = 1 + Math.floor(rnd() * 3);
      for (let k = 0; k < touched; k++) {
        const f = Math.floor(rnd() * paths.length);
        revisions[f]++;
        out += `M 100644 inline ${paths[f]}\n${data(content(paths[f], revisions[f]))}`;
      }
    }
    yield out;

    // Topic branches fork from main at evenly spread points.
    if (branchesMade < topicBranches && c > 0 && c % Math.floor(mainCommits / topicBranches) === 0) {
      const name = branchName(branchesMade++);
      let parent = m;
      for (let t = 0; t < topicCommits; t++) {
        const b = ++mark;
        let topic = `commit refs/heads/${name}\nmark :${b}\nauthor ${who(time + t + 1)}\ncommitter ${who(time + t + 1)}\n`;
        topic += data(`Work on ${name}, step ${t + 1}\n`);
        topic += `from :${parent}\n`;
        const f = Math.floor(rnd() * paths.length);
        topic += `M 100644 inline ${paths[f]}\n${data(content(paths[f], 100_000 + b))}`;
        parent = b;
        yield topic;
      }
    }
    // Tags on main, spread evenly; every other one annotated.
    const tagEvery = mainCommits / shape.tags;
    while (tagsMade < shape.tags && tagsMade * tagEvery <= c) {
      const name = tagName(tagsMade);
      if (tagsMade % 2 === 0) {
        yield `tag ${name}\nfrom :${m}\ntagger ${who(time)}\n${data(`Release ${name}\n`)}`;
      } else {
        yield `reset refs/tags/${name}\nfrom :${m}\n\n`;
      }
      tagsMade++;
    }
  }
  // Any branches the spread did not reach fork from the tip.
  while (branchesMade < topicBranches) {
    yield `reset refs/heads/${branchName(branchesMade++)}\nfrom :${mainMarks[mainMarks.length - 1]}\n\n`;
  }
}

/** Builds the repository as a bare repository at `dir`. */
export async function buildRepository(dir: string, shape: RepoShape = DEFAULT_SHAPE): Promise<void> {
  execFileSync('git', ['init', '--bare', '--quiet', '--initial-branch=main', dir]);
  const child = spawn('git', ['--git-dir', dir, 'fast-import', '--quiet'], {
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  const done = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`git fast-import exited ${code}`)),
    );
  });
  for (const chunk of fastImportStream(shape)) {
    if (!child.stdin.write(chunk)) await new Promise((resolve) => child.stdin.once('drain', resolve));
  }
  child.stdin.end();
  await done;
}

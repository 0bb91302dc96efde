/**
 * Long-lived `git cat-file --batch-command` processes, one per repository, shared by every request:
 * object reads and revision resolution cost a line on a pipe instead of a process each (as Gitaly and
 * Gitea read objects).
 *
 * - A process starts on first use of its repository and stops after IDLE_MS without use, or when the
 *   pool is full and it is the least recently used.
 * - Commands are answered in order, so concurrent callers share one process safely by queueing.
 * - A process that dies is replaced on the next read; a read it took down with it is retried once.
 * - A repository deleted or replaced under a process (its directory's inode changed) is never read
 *   through the old process: the old one stops and a new one starts, or the read fails as git would.
 */
import fs from 'node:fs';
import { GitError, repositoryGone, spawnGit, type GitProcess } from './git.js';

export interface BatchObject {
  id: string;
  type: string;
  size: number;
}

const IDLE_MS = 30_000;
const MAX_PROCESSES = 32;

/** The process ended (killed, crashed, stopped by the pool) while a command waited for its answer. */
class BatchGone extends Error {}

interface Pending {
  contents: boolean;
  resolve: (value: { object: BatchObject; data?: Buffer } | null) => void;
  reject: (err: Error) => void;
}

const HEADER = /^([0-9a-f]{40,64}) (\w+) (\d+)$/;

class ObjectBatch {
  private readonly child: GitProcess;
  private readonly queue: Pending[] = [];
  private buffer: Buffer = Buffer.alloc(0);
  private gone = false;
  lastUsed = Date.now();

  constructor(
    readonly dir: string,
    readonly inode: number,
  ) {
    this.child = spawnGit(['cat-file', '--batch-command'], { gitDir: dir });
    this.child.stdout!.on('data', (chunk: Buffer) => this.receive(chunk));
    this.child.stdin!.on('error', () => this.end());
    this.child.on('error', () => this.end());
    // 'close' also waits for the pipes to reach end of file, which another holder of their write end
    // could delay: the exit alone ends the process's commands, and an answer lost with it is retried.
    this.child.on('exit', () => this.end());
    this.child.on('close', () => this.end());
    // stderr is drained so git never blocks on a full pipe; its warnings carry nothing we answer with.
    this.child.stderr!.resume();
    // An idle reader never keeps the server process alive; git exits when its stdin closes.
    this.child.unref();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr])
      (stream as unknown as { unref?: () => void }).unref?.();
  }

  get alive(): boolean {
    return !this.gone;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** `info <name>`: the object a name resolves to, or null. `contents` also reads its bytes. */
  ask(name: string, contents: boolean): Promise<{ object: BatchObject; data?: Buffer } | null> {
    if (this.gone) return Promise.reject(new BatchGone());
    this.lastUsed = Date.now();
    return new Promise((resolve, reject) => {
      this.queue.push({ contents, resolve, reject });
      this.child.stdin!.write(`${contents ? 'contents' : 'info'} ${name}\n`);
    });
  }

  stop(): void {
    if (!this.gone) this.child.kill();
    this.end();
  }

  /** The object whose bytes are arriving, and how many of them (with git's trailing newline) are in. */
  private body: { object: BatchObject; data: Buffer; filled: number } | undefined;

  private receive(chunk: Buffer): void {
    let rest: Buffer = chunk;
    while (rest.length > 0 || (!this.body && this.buffer.indexOf(10) >= 0)) {
      if (this.body) {
        const { data } = this.body;
        const taken = rest.copy(data, this.body.filled, 0, data.length - this.body.filled);
        this.body.filled += taken;
        rest = rest.subarray(taken);
        if (this.body.filled < data.length) return;
        const { object } = this.body;
        this.body = undefined;
        this.queue.shift()?.resolve({ object, data: data.subarray(0, object.size) });
        continue;
      }
      // Header lines are short: only they are gathered across chunks.
      this.buffer = this.buffer.length ? Buffer.concat([this.buffer, rest]) : rest;
      rest = Buffer.alloc(0);
      const newline = this.buffer.indexOf(10);
      if (newline < 0 || this.queue.length === 0) return;
      const line = this.buffer.subarray(0, newline).toString('utf8');
      rest = this.buffer.subarray(newline + 1);
      this.buffer = Buffer.alloc(0);
      const match = HEADER.exec(line);
      const pending = this.queue[0];
      if (!match) {
        // `<name> missing`, `<name> ambiguous`, ...: nothing follows the line.
        this.queue.shift();
        pending.resolve(null);
      } else {
        const object = { id: match[1], type: match[2], size: Number(match[3]) };
        if (pending.contents) this.body = { object, data: Buffer.allocUnsafe(object.size + 1), filled: 0 };
        else {
          this.queue.shift();
          pending.resolve({ object });
        }
      }
    }
  }

  private end(): void {
    if (this.gone) return;
    this.gone = true;
    for (const pending of this.queue.splice(0)) pending.reject(new BatchGone());
  }
}

/** A reader that died twice in a row for one read: git itself fails here, not the request. */
const readerFailed = (dir: string) =>
  new GitError(['cat-file'], 128, `fatal: cat-file died reading '${dir}'`);

/** The repositories' batch processes, least recently used first. */
class ObjectBatchPool {
  private readonly batches = new Map<string, ObjectBatch>();
  private sweeper: NodeJS.Timeout | undefined;

  /** Asks the repository's process, starting or replacing it as needed; retried once if it dies. */
  async ask(dir: string, name: string, contents: boolean) {
    for (let attempt = 1; ; attempt++) {
      const batch = this.acquire(dir);
      try {
        const found = await batch.ask(name, contents);
        // As for a failed git command: a name missing from a repository moved away meanwhile (its
        // project deleted) is the project's 404, not an answer about the name.
        if (!found && !fs.existsSync(dir)) {
          this.forget(dir);
          throw repositoryGone();
        }
        return found;
      } catch (err) {
        if (!(err instanceof BatchGone) || attempt >= 2)
          throw err instanceof BatchGone ? readerFailed(dir) : err;
      }
    }
  }

  /** Stops the process of a repository that moves or goes away. */
  forget(dir: string): void {
    this.batches.get(dir)?.stop();
    this.batches.delete(dir);
  }

  /** The process ids of the live processes, for tests. */
  pids(): Map<string, number | undefined> {
    return new Map([...this.batches].filter(([, b]) => b.alive).map(([dir, b]) => [dir, b.pid]));
  }

  stopAll(): void {
    for (const dir of [...this.batches.keys()]) this.forget(dir);
  }

  private acquire(dir: string): ObjectBatch {
    let inode: number;
    try {
      inode = fs.statSync(dir).ino;
    } catch {
      this.forget(dir);
      throw repositoryGone();
    }
    const current = this.batches.get(dir);
    if (current?.alive && current.inode === inode) {
      // Map order is recency order: move it to the end.
      this.batches.delete(dir);
      this.batches.set(dir, current);
      return current;
    }
    current?.stop();
    this.batches.delete(dir);
    while (this.batches.size >= MAX_PROCESSES) this.forget(this.batches.keys().next().value!);
    const batch = new ObjectBatch(dir, inode);
    this.batches.set(dir, batch);
    this.scheduleSweep();
    return batch;
  }

  private scheduleSweep(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [dir, batch] of this.batches)
        if (!batch.alive || now - batch.lastUsed > IDLE_MS) this.forget(dir);
      if (this.batches.size === 0) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, IDLE_MS / 3);
    // Idle readers never keep the process alive.
    this.sweeper.unref();
  }
}

/** One pool per server process: its readers are shared by every request. */
export const objectBatches = new ObjectBatchPool();

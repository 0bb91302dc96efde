/**
 * Streaming a git process's output to a client without holding it in memory, while still being able
 * to refuse the request with a JSON error when git fails before its first byte.
 */
import { PassThrough, type Readable } from 'node:stream';
import type { GitProcess } from './launcher.js';

export interface ProcessOutput {
  /** The first bytes git wrote (at least `want` of them unless the output is shorter). */
  head: Buffer;
  /** The whole output, head included, ending when git exits; an error if git fails later on. */
  stream: Readable;
}

/** Fails when git exits with an error before it wrote the head: nothing has been sent yet. */
export class ProcessFailed extends Error {
  constructor(
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(`git exited with ${code}: ${stderr.trim().split('\n')[0] ?? ''}`);
  }
}

/**
 * Waits for the first `want` bytes of `child`'s stdout (or its exit), then hands back those bytes and a
 * stream of the whole output. The stream errors if git exits non-zero, so a truncated body is never
 * taken for a complete one, and destroying the stream (the client went away) stops git.
 */
export function streamProcess(child: GitProcess, want: number): Promise<ProcessOutput> {
  const stdout = child.stdout!;
  const stderrChunks: Buffer[] = [];
  let stderrSize = 0;
  child.stderr!.on('data', (chunk: Buffer) => {
    // Only the start of stderr matters for an error message.
    if (stderrSize < 4096) stderrChunks.push(chunk);
    stderrSize += chunk.length;
  });
  const exited = new Promise<number | null>((resolve) => {
    child.on('close', (code) => resolve(code));
    child.on('error', () => resolve(-1));
  });
  const stderrText = () => Buffer.concat(stderrChunks).toString('utf8');

  return new Promise<ProcessOutput>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;

    const handOver = () => {
      if (settled) return;
      settled = true;
      stdout.off('data', onData);
      stdout.pause();
      const head = Buffer.concat(chunks);
      const out = new PassThrough();
      out.write(head);
      stdout.pipe(out, { end: false });
      void exited.then((code) => {
        if (code === 0) out.end();
        else out.destroy(new ProcessFailed(code, stderrText()));
      });
      out.on('close', () => {
        if (child.exitCode === null && child.signalCode === null) child.kill();
      });
      resolve({ head, stream: out });
    };

    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= want) handOver();
    };
    stdout.on('data', onData);
    void exited.then((code) => {
      if (settled) return;
      if (code === 0) handOver();
      else {
        settled = true;
        reject(new ProcessFailed(code, stderrText()));
      }
    });
  });
}

/**
 * Processes started by the launcher (launcher.mjs), so that starting one never forks the server: a
 * fork copies the page tables of the server's whole heap and holds its event loop for ~10 ms at 200 MB
 * and ~50 ms at 650 MB. Here a start costs three Unix-socket connections and a message. The streams
 * handed back are the process's own stdio sockets; only stdin is held back until the process exists,
 * so that no input byte reaches the launcher.
 *
 * The launcher starts with the first process, is restarted when it dies, never keeps this process
 * alive while nothing runs, and exits with it. Only when it cannot be started at all are processes
 * spawned directly (with a warning, once).
 */
import { spawn } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable, type Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

/** What callers use of a child process; a directly spawned ChildProcess is one too. */
export interface GitProcess extends EventEmitter {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Known once the process has started ('spawn'). */
  readonly pid?: number;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  kill(signal?: NodeJS.Signals | number): boolean;
  /** Whether it keeps this process's event loop alive while it runs, as ChildProcess's. */
  ref(): void;
  unref(): void;
}

/** Beside this module in the sources; from dist, the sources' copy (as the git hooks are found). */
const SCRIPT = [
  new URL('./launcher.mjs', import.meta.url),
  new URL('../../../src/git/launcher.mjs', import.meta.url),
]
  .map((url) => fileURLToPath(url))
  .find((candidate) => fs.existsSync(candidate));

/** Launchers that died before they were ready, in a row, before processes are spawned directly. */
const MAX_FAILED_STARTS = 3;

type LauncherMessage =
  | { type: 'ready' }
  | { type: 'spawned'; id: number; pid: number }
  | {
      type: 'failed';
      id: number;
      error: { message: string; code?: string; errno?: number; syscall?: string };
    }
  | { type: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null };

interface StartRequest {
  type: 'start';
  id: number;
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * stdin: writes wait until the process has started. Until then the launcher holds its end of the
 * socket, and whatever it read there would be lost to the process.
 */
class HeldInput extends Writable {
  private open = false;
  private held: (() => void) | undefined;

  constructor(readonly socket: net.Socket) {
    super();
    socket.on('error', (err) => this.destroy(err));
    // The process closed its stdin (it exited): later input has nowhere to go.
    socket.on('close', () => this.destroy());
  }

  release(): void {
    this.open = true;
    const held = this.held;
    this.held = undefined;
    held?.();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (!this.open) {
      this.held = () => this._write(chunk, encoding, callback);
      return;
    }
    if (this.socket.write(chunk)) callback();
    else this.socket.once('drain', () => callback());
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.open) {
      this.held = () => this._final(callback);
      return;
    }
    // A half-close: the process reads end of file and can still write its output.
    this.socket.end(() => callback());
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.socket.destroy();
    callback(err);
  }
}

class LaunchedProcess extends EventEmitter implements GitProcess {
  pid: number | undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  killed = false;
  readonly stdin: HeldInput;
  readonly stdout = new net.Socket();
  readonly stderr = new net.Socket();
  /** Whether the launcher has answered for it (started it, or reported it over). */
  private settled = false;
  private exited = false;
  private openStreams = 2;
  private referenced = true;
  /** Whether it holds the launcher's channel, which keeps this process's event loop alive. */
  private holding = true;
  /** Whether its start request went to the launcher. */
  private asked = false;

  constructor(
    readonly id: number,
    private readonly owner: Launcher,
  ) {
    super();
    this.stdin = new HeldInput(new net.Socket());
    // A stream closed before the start (by the caller, or a refused connection) never reaches the
    // launcher, which would wait for it: the start is called off instead.
    for (const socket of this.sockets) socket.once('close', () => this.callOffIfUnstarted());
    for (const stream of [this.stdout, this.stderr]) {
      // A connection the launcher refused (it died meanwhile) ends the stream; the exit says why.
      stream.on('error', () => stream.destroy());
      stream.once('close', () => {
        this.openStreams--;
        this.maybeClose();
      });
    }
  }

  private get sockets(): net.Socket[] {
    return [this.stdin.socket, this.stdout, this.stderr];
  }

  /** The three connections, each naming its stream; nothing else is sent before the process starts. */
  connect(address: string): void {
    this.sockets.forEach((socket, fd) => {
      if (socket.destroyed) return;
      socket.connect(address);
      socket.write(`${this.id} ${fd}\n`);
    });
    // Its end of file is how a closed stdin is seen; the process never writes there.
    this.stdin.socket.resume();
  }

  /** After its request went to the launcher: a stream already gone calls the start off. */
  requested(): void {
    this.asked = true;
    this.callOffIfUnstarted();
  }

  private callOffIfUnstarted(): void {
    if (this.asked && !this.settled && this.sockets.some((socket) => socket.destroyed)) this.kill('SIGKILL');
  }

  started(pid: number): void {
    this.settled = true;
    this.pid = pid;
    this.stdin.release();
    this.updateHold();
    this.emit('spawn');
  }

  failed(error: Error): void {
    this.settled = true;
    this.destroyStreams();
    this.emit('error', error);
    this.finish((error as NodeJS.ErrnoException).errno ?? -1, null);
  }

  finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited) return;
    this.settled = true;
    this.exited = true;
    this.exitCode = code;
    this.signalCode = signal;
    // Never started, or its launcher died: the streams have no process behind them.
    if (this.pid === undefined || this.owner.lost(this)) this.destroyStreams();
    // As ChildProcess does at exit: input has nowhere to go, and output nobody reads is drained so
    // that the streams reach their end and 'close' comes.
    this.stdin.destroy();
    for (const stream of [this.stdout, this.stderr])
      if (stream.listenerCount('data') + stream.listenerCount('readable') === 0 && !isPiped(stream))
        stream.resume();
    this.owner.release(this);
    this.updateHold();
    this.emit('exit', code, signal);
    this.maybeClose();
  }

  kill(signal: NodeJS.Signals | number = 'SIGTERM'): boolean {
    if (this.exited) return false;
    this.killed = true;
    this.owner.signal(this, typeof signal === 'number' ? signalName(signal) : signal);
    return true;
  }

  get isSettled(): boolean {
    return this.settled;
  }

  ref(): void {
    this.referenced = true;
    for (const stream of [this.stdin.socket, this.stdout, this.stderr]) stream.ref();
    this.updateHold();
  }

  unref(): void {
    this.referenced = false;
    for (const stream of [this.stdin.socket, this.stdout, this.stderr]) stream.unref();
    this.updateHold();
  }

  /** Held while referenced, and until it has started in any case: a spawn is synchronous for node. */
  private updateHold(): void {
    const wanted = !this.exited && (this.referenced || !this.settled);
    if (wanted === this.holding) return;
    this.holding = wanted;
    if (wanted) this.owner.hold();
    else this.owner.letGo();
  }

  private destroyStreams(): void {
    this.stdin.destroy();
    this.stdout.destroy();
    this.stderr.destroy();
  }

  private maybeClose(): void {
    if (this.exited && this.openStreams === 0) this.emit('close', this.exitCode, this.signalCode);
  }
}

const isPiped = (stream: Readable) =>
  ((stream as unknown as { _readableState?: { pipes?: unknown[] } })._readableState?.pipes?.length ?? 0) > 0;

const signalName = (number: number) =>
  (Object.entries(os.constants.signals).find(([, value]) => value === number)?.[0] ??
    'SIGTERM') as NodeJS.Signals;

class Launcher {
  private child: ReturnType<typeof spawn> | undefined;
  private address: string | undefined;
  private ready = false;
  /** Processes asked for before the launcher was ready: connected once it is. */
  private queue: Array<{ launched: LaunchedProcess; request: StartRequest }> = [];
  private readonly processes = new Map<number, LaunchedProcess>();
  /** Processes of a launcher that died: their exit codes are lost with it. */
  private readonly orphans = new WeakSet<LaunchedProcess>();
  private nextId = 1;
  private failedStarts = 0;
  private unusable = SCRIPT === undefined;
  private references = 0;

  /** Whether processes go through a launcher; false once it could not be started at all. */
  get usable(): boolean {
    return !this.unusable;
  }

  /** The launcher's process id, while one runs (for tests). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  launch(file: string, args: string[], env: NodeJS.ProcessEnv): LaunchedProcess {
    const id = this.nextId++;
    const launched = new LaunchedProcess(id, this);
    this.processes.set(id, launched);
    this.hold();
    const request: StartRequest = { type: 'start', id, file, args, env };
    if (this.ready) this.begin(launched, request);
    else {
      this.queue.push({ launched, request });
      if (!this.child) this.start();
    }
    return launched;
  }

  signal(launched: LaunchedProcess, signal: NodeJS.Signals): void {
    const queued = this.queue.findIndex((entry) => entry.launched === launched);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      launched.finish(null, signal);
    } else this.child?.send({ type: 'kill', id: launched.id, signal });
  }

  /** Whether the process outlived its launcher. */
  lost(launched: LaunchedProcess): boolean {
    return this.orphans.has(launched);
  }

  release(launched: LaunchedProcess): void {
    this.processes.delete(launched.id);
  }

  /** The channel keeps this process alive while a referenced process runs, and only then. */
  hold(): void {
    if (this.references++ === 0) this.channel()?.ref();
  }

  letGo(): void {
    if (--this.references === 0) this.channel()?.unref();
  }

  private channel() {
    return this.child?.channel as { ref(): void; unref(): void } | null | undefined;
  }

  private begin(launched: LaunchedProcess, request: StartRequest): void {
    launched.connect(this.address!);
    this.child!.send(request);
    launched.requested();
  }

  private start(): void {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-launcher-'));
    const address = path.join(dir, 'socket');
    // Only PATH: node's own options (a test runner's loaders, a profiler) are not for the launcher.
    const child = spawn(process.execPath, [SCRIPT!, address], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      env: { PATH: process.env.PATH },
    });
    if (child.pid === undefined) {
      child.on('error', () => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
      this.giveUp(new Error('the process launcher could not be started'));
      return;
    }
    this.child = child;
    this.address = address;
    child.unref();
    if (this.references === 0) this.channel()?.unref();
    child.on('message', (message: LauncherMessage) => this.receive(message));
    child.on('error', () => undefined);
    child.once('exit', () => {
      fs.rmSync(dir, { recursive: true, force: true });
      this.died(child);
    });
  }

  private receive(message: LauncherMessage): void {
    if (message.type === 'ready') {
      this.ready = true;
      this.failedStarts = 0;
      const queue = this.queue;
      this.queue = [];
      for (const { launched, request } of queue) this.begin(launched, request);
      return;
    }
    const launched = this.processes.get(message.id);
    if (!launched) return;
    if (message.type === 'spawned') launched.started(message.pid);
    else if (message.type === 'exit') launched.finish(message.code, message.signal);
    else launched.failed(Object.assign(new Error(message.error.message), message.error));
  }

  /** In-flight processes end as killed; queued ones wait for the next launcher. */
  private died(child: ReturnType<typeof spawn>): void {
    if (this.child !== child) return;
    const wasReady = this.ready;
    this.child = undefined;
    this.ready = false;
    for (const launched of [...this.processes.values()]) {
      if (this.queue.some((entry) => entry.launched === launched)) continue;
      this.orphans.add(launched);
      launched.finish(null, 'SIGKILL');
    }
    if (!wasReady && ++this.failedStarts >= MAX_FAILED_STARTS) {
      this.giveUp(new Error('the process launcher exited before it was ready'));
      return;
    }
    if (this.queue.length > 0) this.start();
  }

  /** Processes waiting for it fail as a spawn fails; later ones are spawned directly. */
  private giveUp(reason: Error): void {
    this.unusable = true;
    process.emitWarning(`${reason.message}; processes are spawned directly`, { code: 'FORGE_LAUNCHER' });
    const queue = this.queue;
    this.queue = [];
    for (const { launched } of queue) if (!launched.isSettled) launched.failed(reason);
  }
}

const launcher = new Launcher();

/** Each start, so that a benchmark can count them and time what they hold the event loop. */
const launchChannel = diagnostics.tracingChannel('forge:process:launch');

/**
 * Starts `file` with `args` and exactly `env`, with piped stdio, through the launcher; spawned directly
 * when there is none.
 */
export function launch(file: string, args: string[], env: NodeJS.ProcessEnv): GitProcess {
  const start = (): GitProcess =>
    launcher.usable
      ? launcher.launch(file, args, env)
      : spawn(file, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  return launchChannel.hasSubscribers ? launchChannel.traceSync(start, { file, args }) : start();
}

/** The launcher's process id, while one runs. */
export const launcherPid = (): number | undefined => launcher.pid;

/**
 * The process launcher: a small Node process that starts git (and the other programs src/git/ runs) on
 * the server's behalf. Node forks a child from its parent's whole address space, which holds the
 * parent's event loop for milliseconds per 100 MB of memory; forked from this small process instead,
 * git costs the server nothing but a few socket calls.
 *
 * launcher.ts starts it with an IPC channel and the path of a Unix socket in a private directory. For
 * each process the server connects three times, sends a one-line header (`<id> <fd>\n`) on each
 * connection, and then the start request on the channel. The accepted sockets become the process's
 * stdin, stdout and stderr, so no byte of its input or output passes through here; this process only
 * closes its copies and reports the pid and the exit on the channel. The server writes nothing after a
 * stdin header until it is told the process started, so nothing meant for the process is read here.
 * Plain JavaScript, so that node runs it as it is, from the sources and from dist alike.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const address = process.argv[2];
/** The longest header: two numbers and a space. */
const HEADER_LIMIT = 32;

/** Started processes by id, and requests still waiting for their connections or their request. */
const running = new Map();
const waiting = new Map();
/** Requests answered before all their connections came (killed meanwhile): late ones are closed. */
const abandoned = new Set();

const send = (message) => {
  // The server may be gone already: 'disconnect' follows and ends this process.
  if (process.connected) process.send(message, undefined, {}, () => undefined);
};

function slot(id) {
  let entry = waiting.get(id);
  if (!entry) {
    entry = { request: undefined, sockets: [undefined, undefined, undefined] };
    waiting.set(id, entry);
  }
  return entry;
}

function discard(entry) {
  for (const socket of entry.sockets) socket?.destroy();
}

/** Starts a process once its request and its three connections are all here. */
function startIfComplete(id) {
  const entry = waiting.get(id);
  if (!entry?.request || entry.sockets.some((socket) => socket === undefined)) return;
  waiting.delete(id);
  if (entry.sockets.some((socket) => socket.destroyed)) {
    discard(entry);
    send({ type: 'failed', id, error: { message: 'a stdio connection closed before the start' } });
    return;
  }
  const { file, args, env } = entry.request;
  let child;
  try {
    child = spawn(file, args, { env, stdio: entry.sockets });
  } catch (err) {
    discard(entry);
    send({ type: 'failed', id, error: describe(err) });
    return;
  }
  // The child holds its own copies of the sockets now.
  discard(entry);
  if (child.pid === undefined) {
    child.once('error', (err) => send({ type: 'failed', id, error: describe(err) }));
    return;
  }
  // A failed kill is reported on the child; the process runs on and its exit is reported as usual.
  child.on('error', () => undefined);
  running.set(id, child);
  send({ type: 'spawned', id, pid: child.pid });
  child.once('exit', (code, signal) => {
    running.delete(id);
    send({ type: 'exit', id, code, signal });
  });
}

const describe = (err) => ({
  message: err.message,
  code: err.code,
  errno: err.errno,
  syscall: err.syscall,
  path: err.path,
});

const listener = net.createServer((socket) => {
  let header = '';
  socket.on('error', () => socket.destroy());
  const onData = (chunk) => {
    header += chunk.toString('latin1');
    const end = header.indexOf('\n');
    if (end < 0) {
      if (header.length > HEADER_LIMIT) socket.destroy();
      return;
    }
    socket.off('data', onData);
    socket.pause();
    const match = /^(\d+) ([012])$/.exec(header.slice(0, end));
    // Nothing may follow a header before the process has started: it would be lost here.
    if (!match || end !== header.length - 1) {
      socket.destroy();
      return;
    }
    const id = Number(match[1]);
    if (abandoned.has(id) || running.has(id)) {
      socket.destroy();
      return;
    }
    const entry = slot(id);
    entry.sockets[Number(match[2])]?.destroy();
    entry.sockets[Number(match[2])] = socket;
    startIfComplete(id);
  };
  socket.on('data', onData);
});

process.on('message', (message) => {
  if (message.type === 'start') {
    slot(message.id).request = message;
    startIfComplete(message.id);
  } else if (message.type === 'kill') {
    const child = running.get(message.id);
    if (child) child.kill(message.signal);
    else if (waiting.has(message.id)) {
      // A connection the server gave up on may never come: answer now rather than never.
      const entry = waiting.get(message.id);
      waiting.delete(message.id);
      abandoned.add(message.id);
      // Its late connections come within moments, if at all: the id need not be kept for ever.
      setTimeout(() => abandoned.delete(message.id), 60_000).unref();
      discard(entry);
      send({ type: 'exit', id: message.id, code: null, signal: message.signal });
    }
  }
});

/** The server is gone: its processes' output has nowhere to go. */
function shutDown() {
  for (const child of running.values()) child.kill('SIGKILL');
  for (const entry of waiting.values()) discard(entry);
  listener.close();
  fs.rmSync(address, { force: true });
  try {
    // The private directory the server made for the socket, now empty.
    fs.rmdirSync(path.dirname(address));
  } catch {
    // already gone, or not empty: not ours to clear
  }
  process.exit(0);
}
process.on('disconnect', shutDown);
process.on('SIGTERM', shutDown);
process.on('SIGINT', () => {
  // A terminal's Ctrl-C reaches the whole process group; the server decides when this one goes.
});

listener.listen(address, () => send({ type: 'ready' }));

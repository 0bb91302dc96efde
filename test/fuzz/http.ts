/** Raw HTTP over node:http: paths, headers and bodies reach the server byte for byte. */
import http from 'node:http';
import net from 'node:net';

export interface RawRequest {
  method: string;
  /** The path and query, already percent-encoded as the server shall see them. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface RawAnswer {
  /** 0 when no answer came: `error` says why. */
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The first BODY_KEPT bytes. */
  body: Buffer;
  error?: string;
  ms: number;
}

const BODY_KEPT = 256 * 1024;

export async function sendRaw(
  base: URL,
  request: RawRequest,
  options: { agent?: http.Agent; timeoutMs: number },
): Promise<RawAnswer> {
  const answer = await sendOnce(base, request, options);
  // A kept-alive socket the server closed while it sat in the pool: the request never reached the
  // server, so it is sent again on a new connection.
  if (answer.reused && answer.status === 0 && /^(ECONNRESET|EPIPE)$/.test(answer.error ?? ''))
    return sendOnce(base, request, { ...options, agent: undefined });
  return answer;
}

function sendOnce(
  base: URL,
  request: RawRequest,
  options: { agent?: http.Agent; timeoutMs: number },
): Promise<RawAnswer & { reused?: boolean }> {
  const started = Date.now();
  return new Promise((resolve) => {
    let settled = false;
    let outgoing: http.ClientRequest | undefined;
    const finish = (answer: Omit<RawAnswer, 'ms'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...answer, ms: Date.now() - started, reused: outgoing?.reusedSocket });
    };
    const headers: Record<string, string> = { ...request.headers };
    if (request.body) headers['Content-Length'] = String(request.body.length);
    try {
      outgoing = http.request({
        host: base.hostname,
        port: base.port,
        method: request.method,
        path: request.path,
        headers,
        // Without the pool's agent, a connection of its own.
        agent: options.agent ?? false,
        // Link headers echo the query: a long query makes a long answer head, which is not the point here.
        maxHeaderSize: 1024 * 1024,
      });
    } catch (err) {
      // Node refused to send it (a character it does not allow in a path or header).
      finish({ status: 0, headers: {}, body: Buffer.alloc(0), error: `client: ${(err as Error).message}` });
      return;
    }
    if (!outgoing) return;
    const sent = outgoing;
    sent.setTimeout(options.timeoutMs, () => {
      finish({
        status: 0,
        headers: {},
        body: Buffer.alloc(0),
        error: `no answer within ${options.timeoutMs} ms`,
      });
      sent.destroy();
    });
    sent.on('response', (response) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      response.on('data', (chunk: Buffer) => {
        if (kept < BODY_KEPT) chunks.push(chunk.subarray(0, BODY_KEPT - kept));
        kept += chunk.length;
      });
      const done = (error?: string) =>
        finish({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks),
          error,
        });
      response.on('end', () => done());
      response.on('error', (err) => done(`response: ${err.message}`));
      response.on('aborted', () => done('response aborted'));
    });
    sent.on('error', (err: NodeJS.ErrnoException) =>
      finish({ status: 0, headers: {}, body: Buffer.alloc(0), error: err.code ?? err.message }),
    );
    sent.end(request.body);
  });
}

/** JSON helper for setting up data: throws unless the status is the expected one. */
export async function callJson<T = Record<string, unknown>>(
  base: URL,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  expected: number[] = [200, 201, 204],
): Promise<T> {
  const answer = await sendRaw(
    base,
    {
      method,
      path: `/api/v4${path}`,
      headers: {
        'PRIVATE-TOKEN': token,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
    },
    { timeoutMs: 60_000 },
  );
  if (!expected.includes(answer.status))
    throw new Error(`${method} ${path}: ${answer.status} ${answer.error ?? ''} ${answer.body.toString()}`);
  const text = answer.body.toString();
  return (text ? JSON.parse(text) : null) as T;
}

/**
 * Announces `announced` body bytes, sends `sent`, and waits: resolves with how long the server kept the
 * connection before answering or closing it, or `undefined` if it still held it after `deadlineMs`.
 */
export function sendTruncated(
  base: URL,
  head: string,
  sent: Buffer,
  deadlineMs: number,
): Promise<{ heldMs?: number; answer: string }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(Number(base.port), base.hostname);
    let answer = '';
    let settled = false;
    const finish = (heldMs?: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ heldMs, answer: answer.slice(0, 300) });
    };
    const timer = setTimeout(() => finish(undefined), deadlineMs);
    socket.on('connect', () => socket.write(Buffer.concat([Buffer.from(head, 'latin1'), sent])));
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      // An answer (a 408 or 400) counts as letting go; the server may close just after.
      if (/\r\n\r\n/.test(answer)) finish(Date.now() - started);
    });
    socket.on('close', () => finish(Date.now() - started));
    socket.on('error', () => finish(Date.now() - started));
  });
}

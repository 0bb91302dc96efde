/** What the fuzzer asserts about each answer, and the summary it prints. */
import { operationById, type Backend } from '../../src/core/contract.js';
import type { FuzzCase } from './cases.js';
import type { RawAnswer } from './http.js';

export type Verdict = '5xx' | 'undeclared' | 'shape' | 'contract' | 'no answer' | 'accepted';

export interface ServerLog {
  type?: string;
  message: string;
  code?: string;
}

export interface Finding {
  verdict: Verdict;
  operationId: string;
  category: string;
  label: string;
  request: { method: string; path: string; headers: Record<string, string>; bodyBytes: number; body: string };
  status: number;
  response: string;
  detail?: string;
  log: ServerLog[];
}

/** Statuses Node's HTTP parser answers before the application sees the request. */
const PARSER_STATUSES = new Set([400, 413, 414, 431]);
const ERROR_KEYS = new Set(['message', 'error', 'error_description', 'scope']);

export interface Judged {
  /** The app never saw it: Node's parser refused the request head. */
  parserRefusal: boolean;
  verdict?: Verdict;
  detail?: string;
}

/** Checks one answer: no 5xx, a status the operation declares, GitLab's error shape, the contract's body. */
export function judge(
  request: FuzzCase,
  answer: RawAnswer,
  backend: Backend,
  anyRouteStatuses: Set<number>,
  declared: Set<number>,
): Judged {
  if (answer.status === 0) {
    // A request head over Node's 16 KB, or a body over the 10 MB limit, may be cut off before the
    // client reads the early refusal.
    const head = request.path.length + Object.values(request.headers).reduce((n, v) => n + v.length, 0);
    const early = head > 16_000 || (request.body?.length ?? 0) > 10 * 1024 * 1024;
    if (early && /^(ECONNRESET|EPIPE)$/.test(answer.error ?? '')) return { parserRefusal: true };
    return { parserRefusal: false, verdict: 'no answer', detail: answer.error };
  }
  // The first middleware names every request the app sees; without it, the answer is Node's own.
  const reachedApp = answer.headers['x-request-id'] !== undefined;
  if (!reachedApp) {
    if (answer.status >= 500) return { parserRefusal: false, verdict: '5xx' };
    if (PARSER_STATUSES.has(answer.status)) return { parserRefusal: true };
    return { parserRefusal: false, verdict: 'undeclared', detail: 'answered outside the application' };
  }
  if (answer.status >= 500) return { parserRefusal: false, verdict: '5xx' };
  const statuses = request.anyRoute ? anyRouteStatuses : declared;
  if (!statuses.has(answer.status))
    return { parserRefusal: false, verdict: 'undeclared', detail: `declared: ${[...statuses].join(', ')}` };
  if (request.mustRefuse && answer.status < 300)
    return {
      parserRefusal: false,
      verdict: 'accepted',
      detail: 'NUL, a lone surrogate or invalid UTF-8 in a parameter was accepted, not refused with 400',
    };
  if (request.method === 'HEAD' || answer.status === 204) return { parserRefusal: false };
  const complete = Number(answer.headers['content-length'] ?? answer.body.length) <= answer.body.length;
  const json = answer.headers['content-type'] === 'application/json';
  if (answer.status >= 400 && !complete) {
    // Only the beginning was kept: it must open GitLab's object.
    if (!json || !/^\{"(message|error)":/.test(answer.body.subarray(0, 20).toString('utf8')))
      return { parserRefusal: false, verdict: 'shape', detail: 'not {"message": …} or {"error": …}' };
  } else if (answer.status >= 400) {
    let body: unknown;
    try {
      body = json ? JSON.parse(answer.body.toString('utf8')) : undefined;
    } catch {
      body = undefined;
    }
    const keys = typeof body === 'object' && body !== null && !Array.isArray(body) ? Object.keys(body) : [];
    if (
      !keys.some((key) => key === 'message' || key === 'error') ||
      !keys.every((key) => ERROR_KEYS.has(key))
    )
      return { parserRefusal: false, verdict: 'shape', detail: 'not {"message": …} or {"error": …}' };
  }
  // Bodies of the answer are checked against the contract, as the in-process tests do.
  if (json && complete && !request.anyRoute) {
    const operation = operationById(backend, request.operationId);
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.body.toString('utf8'));
    } catch {
      return { parserRefusal: false, verdict: 'contract', detail: 'body is not JSON' };
    }
    const result = backend.validator.validateResponse(parsed, operation!, answer.status);
    if (result.errors?.length)
      return {
        parserRefusal: false,
        verdict: 'contract',
        detail: result.errors
          .slice(0, 3)
          .map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`)
          .join('; '),
      };
  }
  return { parserRefusal: false };
}

const clip = (text: string, length: number) =>
  text.length > length ? `${text.slice(0, length)}… (${text.length} characters)` : text;

/** Bytes shown as text, with what is not printable escaped. */
export function printable(bytes: Buffer, length: number): string {
  const text = bytes.subarray(0, length).toString('latin1');
  const escaped = text.replace(/[^\x20-\x7e]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return bytes.length > length ? `${escaped}… (${bytes.length} bytes)` : escaped;
}

/** The request as a report shows it; tokens are not written out. */
export function describeRequest(request: FuzzCase, headers: Record<string, string>): Finding['request'] {
  const shown: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name === 'X-Request-Id') continue;
    shown[name] = /^(private-token|authorization|job-token)$/i.test(name)
      ? `<${request.auth} token>`
      : clip(value, 120);
  }
  return {
    method: request.method,
    path: clip(request.path, 400),
    headers: shown,
    bodyBytes: request.body?.length ?? 0,
    body: request.body ? printable(request.body, 300) : '',
  };
}

/** A server log message with its variable parts replaced, so one cause makes one group. */
export function causeOf(finding: Finding): string {
  // A status the operation does not declare is one gap in the contract, whatever the message.
  if (finding.verdict === 'undeclared') return `status ${finding.status} not declared by the operation`;
  const log = finding.log[0];
  if (!log)
    return `${finding.verdict} ${finding.status}${finding.detail ? `: ${finding.detail}` : ''} (no server log)`;
  const message = log.message
    .replace(/"[^"]*"/g, '"…"')
    .replace(/'[^']*'/g, "'…'")
    .replace(/\b[0-9a-f]{40}\b/g, '<sha>')
    .replace(/\d+/g, 'N')
    .slice(0, 200);
  return `${log.type ?? 'Error'}${log.code ? ` [${log.code}]` : ''}: ${message}`;
}

export interface Tally {
  requests: number;
  byStatus: Map<number, number>;
  byCategory: Map<string, number>;
  parserRefusals: Map<number, number>;
  /** Requests sent again on a new connection after a reset that an answer then followed. */
  resentAfterReset: number;
  /** A few of them, to see where resets come from. */
  resetExamples: string[];
  findings: Finding[];
  crashes: string[];
  unattributedLogs: ServerLog[];
  heldBodies: string[];
  operations: number;
}

const count = (map: Map<string | number, number>) =>
  [...map]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, n]) => `${key}: ${n}`)
    .join(', ');

export function groupFindings(findings: Finding[]) {
  const groups = new Map<string, Finding[]>();
  for (const finding of findings) {
    const key = `${finding.verdict} | ${causeOf(finding)}`;
    groups.set(key, [...(groups.get(key) ?? []), finding]);
  }
  return [...groups].sort((a, b) => b[1].length - a[1].length);
}

export function oneLine(finding: Finding): string {
  const r = finding.request;
  const body = r.bodyBytes ? ` body(${r.bodyBytes} B)=${clip(r.body, 120)}` : '';
  const headers = Object.entries(r.headers)
    .map(([n, v]) => `${n}: ${clip(v, 60)}`)
    .join('; ');
  const log = finding.log.map((l) => `${l.type ?? ''} ${clip(l.message, 160)}`).join(' | ');
  return (
    `${finding.status || '---'} ${finding.verdict} ${finding.operationId} [${finding.category}] ${r.method} ${clip(r.path, 200)}` +
    `${headers ? ` {${headers}}` : ''}${body} → ${clip(finding.response, 160)}` +
    `${finding.detail ? ` (${clip(finding.detail, 200)})` : ''}${log ? ` log: ${log}` : ''}`
  );
}

export function summary(tally: Tally, header: string): string {
  const lines = [header];
  lines.push(`requests sent: ${tally.requests} over ${tally.operations} operations`);
  lines.push(`answers by status: ${count(tally.byStatus)}`);
  lines.push(`requests by category: ${count(tally.byCategory)}`);
  if (tally.parserRefusals.size)
    lines.push(
      `refused before the application, by Node's HTTP parser or the body limit (allowed; 0 = reset): ${count(tally.parserRefusals)}`,
    );
  if (tally.resentAfterReset) {
    lines.push(`connections reset, then answered on a new connection: ${tally.resentAfterReset}`);
    for (const example of tally.resetExamples) lines.push(`  e.g. ${example}`);
  }
  const verdicts = new Map<string, number>();
  for (const finding of tally.findings)
    verdicts.set(finding.verdict, (verdicts.get(finding.verdict) ?? 0) + 1);
  lines.push(`findings: ${tally.findings.length}${verdicts.size ? ` (${count(verdicts)})` : ''}`);
  lines.push(`server crashes: ${tally.crashes.length}`);
  for (const crash of tally.crashes) lines.push(`  ${clip(crash, 2000)}`);
  if (tally.heldBodies.length) {
    lines.push(`truncated bodies the server kept waiting for: ${tally.heldBodies.length}`);
    for (const held of tally.heldBodies) lines.push(`  ${held}`);
  }
  if (tally.unattributedLogs.length) {
    lines.push(`server errors logged without a request id: ${tally.unattributedLogs.length}`);
    const seen = new Map<string, number>();
    for (const log of tally.unattributedLogs) {
      const key = `${log.type ?? ''} ${clip(log.message, 200)}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    for (const [key, n] of seen) lines.push(`  ${n}× ${key}`);
  }
  const groups = groupFindings(tally.findings);
  if (groups.length) {
    lines.push('', `findings by cause (${groups.length}):`);
    for (const [cause, members] of groups) {
      const ops = [...new Set(members.map((f) => f.operationId))];
      const categories = [...new Set(members.map((f) => f.category))];
      lines.push(`- ${members.length}× ${cause}`);
      lines.push(`    ${ops.length} operations: ${clip(ops.join(', '), 600)}`);
      lines.push(`    categories: ${categories.join(', ')}`);
      const answers = [...new Set(members.map((f) => f.response.replace(/\d+/g, 'N').slice(0, 100)))];
      if (answers.length > 1) lines.push(`    answers: ${clip(answers.slice(0, 6).join(' | '), 700)}`);
      lines.push(`    e.g. ${oneLine(members[0])}`);
    }
  }
  return lines.join('\n');
}

/**
 * Spec-driven fuzzing of the built server (dist/src/main.js): every operation of generated/openapi.json
 * gets a valid request on real data, then that request broken in every way a careless client or an
 * attacker would break it. No answer may be a 5xx, every status must be one the operation declares,
 * every error must have GitLab's shape, and the process must stay up.
 *
 * `make test` runs a fast sample (FUZZ_PER_OP cases per operation, 16 by default); `make fuzz` sets
 * FORGE_FUZZ=full (320 per operation, random mixes included, and bodies that never finish).
 * FUZZ_SEED reproduces a run's requests; the order they reach the server in still varies.
 */
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createBackend, specPath } from '../../src/core/contract.js';
import { createProcessDatabaseUrl } from '../helpers/database.js';
import { SERVER_ENTRY, serverPort, startServerProcess } from '../helpers/process.js';
import { operationCases, type CaseSpec, type FuzzCase } from './cases.js';
import { loadOperations, type FuzzOperation } from './contract.js';
import { FixtureMaker, type Fixture } from './fixtures.js';
import { sendRaw, sendTruncated } from './http.js';
import {
  describeRequest,
  groupFindings,
  judge,
  oneLine,
  printable,
  summary,
  type Finding,
  type ServerLog,
  type Tally,
} from './report.js';
import { Random } from './values.js';

const full = process.env.FORGE_FUZZ === 'full';
const mode = full ? 'full' : 'fast';
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : crypto.randomInt(2 ** 31);
const perOperation = Number(process.env.FUZZ_PER_OP ?? (full ? 320 : 16));
const concurrency = Number(process.env.FUZZ_CONCURRENCY ?? 8);
const requestTimeoutMs = Number(process.env.FUZZ_TIMEOUT_MS ?? 60_000);
/** How long a body announced but never sent may hold its connection (the full run only). */
const bodyDeadlineMs = Number(process.env.FUZZ_BODY_DEADLINE_MS ?? (full ? 90_000 : 0));
const outputDir = path.resolve('.forge-test');
/** FUZZ_TRACE=<file>: one line per request sent, with its status and time. */
const trace = process.env.FUZZ_TRACE;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-fuzz-'));
const marker = path.join(os.tmpdir(), `forge-fuzz-${seed}-${process.pid}-injected`);
const rootToken = `glpat-fuzz-${crypto.randomBytes(12).toString('hex')}`;
const port = String(serverPort());
const base = new URL(`http://127.0.0.1:${port}`);
const children: ChildProcess[] = [];

/** The built server, restarted if a request kills it; its error log lines, by request id. */
class ServerUnderTest {
  child?: ChildProcess;
  logs = new Map<string, ServerLog[]>();
  unattributed: ServerLog[] = [];
  crashes: string[] = [];
  restarting?: Promise<void>;
  private stopping = false;
  private tail = '';
  inFlight = new Set<string>();

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  async start(): Promise<void> {
    const { child, ready } = startServerProcess(this.env, children);
    this.child = child;
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) this.line(line);
    });
    this.tail = '';
    child.stderr!.on('data', (chunk: Buffer) => (this.tail = (this.tail + chunk.toString()).slice(-4000)));
    child.once('exit', (code, signal) => {
      if (this.stopping || child !== this.child) return;
      this.crashes.push(
        `exited with ${code ?? signal} while these were in flight: ${[...this.inFlight].join(' || ')}\n${this.tail}`,
      );
      this.restarting = this.start().finally(() => (this.restarting = undefined));
    });
    await ready;
  }

  private line(line: string) {
    let entry: {
      level?: number;
      requestId?: string;
      err?: { type?: string; message?: string; code?: string };
      msg?: string;
    };
    try {
      entry = JSON.parse(line);
    } catch {
      return;
    }
    if ((entry.level ?? 0) < 40) return;
    const log: ServerLog = {
      type: entry.err?.type,
      message: entry.err?.message ?? entry.msg ?? line.slice(0, 300),
      code: entry.err?.code,
    };
    if (entry.requestId) this.logs.set(entry.requestId, [...(this.logs.get(entry.requestId) ?? []), log]);
    else this.unattributed.push(log);
  }

  /**
   * After a request got no answer: whether the server crashed since `crashesBefore` (or is restarting),
   * once it is back. The exit may be noticed a moment after the reset.
   */
  async restartedSince(crashesBefore: number): Promise<boolean> {
    await new Promise((resolve) => setTimeout(resolve, 300));
    if (this.crashes.length === crashesBefore && !this.restarting) return false;
    await this.restarting;
    return true;
  }

  stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (!child || child.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }
}

/**
 * A sample of an operation's cases: valid ones, then each category in turn, and within a category each
 * stratum in turn (`range` on `query page`, `range` on `path id`, ...), each stratum's first value
 * first: the examples (NUL, `../..`, 1 MB, `%zz`, a page a billion in) open their pools, and one
 * of the integer edges (±2^31, ±2^63 and one either side) each number's.
 */
function sample(specs: CaseSpec[], quota: number, random: Random): CaseSpec[] {
  const valid = specs.filter((spec) => spec.category === 'valid');
  // The fast run: the baseline and two other valid requests, the rest of its quota for broken ones.
  const chosen = [valid[0], ...random.shuffle(valid.slice(1)).slice(0, full ? valid.length : 2)];
  const categories = new Map<string, Map<string, CaseSpec[]>>();
  for (const spec of specs.filter((s) => s.category !== 'valid')) {
    const strata =
      categories.get(spec.category) ?? categories.set(spec.category, new Map()).get(spec.category)!;
    const key = spec.label.split(' = ')[0];
    strata.set(key, [...(strata.get(key) ?? []), spec]);
  }
  const queues = random.shuffle(
    [...categories.values()].map((strata) =>
      random.shuffle([...strata.values()].map(([first, ...rest]) => [first, ...random.shuffle(rest)])),
    ),
  );
  const take = (strata: CaseSpec[][]) => {
    while (strata.length > 0) {
      const stratum = strata.shift()!;
      if (stratum.length === 0) continue;
      strata.push(stratum);
      return stratum.shift()!;
    }
    return undefined;
  };
  while (chosen.length < quota && queues.some((strata) => strata.some((stratum) => stratum.length > 0)))
    for (const strata of queues) {
      const spec = chosen.length < quota ? take(strata) : undefined;
      if (spec) chosen.push(spec);
    }
  return chosen;
}

/** An operation that removes or disables what its path names gets data of its own to break. */
const destroysItsSubject = (op: FuzzOperation) =>
  (op.method === 'DELETE' && /^\/[a-z_]+\/\{id\}$/.test(op.path)) || /\/(archive|block)$/.test(op.path);

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(marker, { force: true });
});

describe.runIf(fs.existsSync(SERVER_ENTRY))(`fuzzing every operation of the contract (${mode})`, () => {
  it(
    'never answers 5xx or an undeclared status, always in GitLab error shape, and stays up',
    async () => {
      const started = Date.now();
      const random = new Random(seed);
      const server = new ServerUnderTest({
        ...process.env,
        PORT: port,
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        DATABASE_URL: await createProcessDatabaseUrl(),
        FORGE_ROOT_TOKEN: rootToken,
        LOG_LEVEL: 'warn',
        // Archives and large blobs are rate-limited to 5 a minute; the fuzzer needs their handlers.
        FORGE_RATE_LIMITS: 'repository_archive=off,large_blob=off',
      });
      await server.start();
      const backend = await createBackend();
      const operations = loadOperations(specPath);

      // Real data: an administrator, data for the reads, and data of their own for the writes.
      const maker = new FixtureMaker(base, rootToken, `fz${seed.toString(36)}`);
      // The full run gives every write its own; the fast run shares one among the writes, and one
      // among those that delete or disable what they name.
      const writes = operations.filter((op) => op.method !== 'GET');
      const owners = full ? writes.map((op) => op.operationId) : ['writes', 'destroyers'];
      const made = new Map<string, Fixture>();
      const [admin, shared] = await Promise.all([maker.user(true), maker.fixture()]);
      for (let i = 0; i < owners.length; i += 4)
        await Promise.all(
          owners.slice(i, i + 4).map(async (owner) => made.set(owner, await maker.fixture())),
        );
      const fixtureOf = (op: FuzzOperation): Fixture =>
        op.method === 'GET'
          ? shared
          : (made.get(op.operationId) ?? made.get(destroysItsSubject(op) ? 'destroyers' : 'writes')!);

      // Every operation's sample; the order they are sent in is shuffled.
      const specs: Array<{ op: FuzzOperation; spec: CaseSpec }> = [];
      for (const op of operations) {
        const cases = operationCases(op, fixtureOf(op), { random, marker });
        let chosen = sample(cases.specs, perOperation, random);
        if (full && chosen.length < perOperation)
          chosen = [...chosen, ...cases.mixes(perOperation - chosen.length)];
        specs.push(...chosen.map((spec) => ({ op, spec })));
      }
      // Baselines first, on untouched data: deletions after the rest, and those that delete or disable
      // what they name last; then everything else, shuffled.
      const phase = ({ op, spec }: { op: FuzzOperation; spec: CaseSpec }) =>
        spec.label !== 'baseline' ? 3 : destroysItsSubject(op) ? 2 : op.method === 'DELETE' ? 1 : 0;
      const phases = [0, 1, 2, 3].map((n) => specs.filter((s) => phase(s) === n));
      random.shuffle(phases[3]);
      const setupSeconds = Math.round((Date.now() - started) / 1000);
      const anyRouteStatuses = new Set(operations.flatMap((op) => [...op.statuses]));

      const tally: Tally = {
        requests: 0,
        byStatus: new Map(),
        byCategory: new Map(),
        parserRefusals: new Map(),
        resentAfterReset: 0,
        resetExamples: [],
        findings: [],
        crashes: server.crashes,
        unattributedLogs: server.unattributed,
        heldBodies: [],
        operations: operations.length,
      };
      const pendingFindings: Array<{ requestId: string; finding: Finding }> = [];
      const baselines = new Map<string, string>();

      // Bodies announced and never sent, held open beside the rest of the run.
      const held =
        bodyDeadlineMs > 0
          ? Promise.all(
              operations
                .filter((op) => op.body)
                .map(async (op) => {
                  const target = op.path.replace(/\{[^}]+\}/g, '1');
                  const head =
                    `${op.method} /api/v4${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nPRIVATE-TOKEN: ${admin.token}\r\n` +
                    'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n';
                  const result = await sendTruncated(base, head, Buffer.from('{"name":'), bodyDeadlineMs);
                  if (result.heldMs === undefined)
                    tally.heldBodies.push(
                      `${op.operationId}: ${op.method} ${target}, 8 of 1000 bytes, still open after ${bodyDeadlineMs} ms`,
                    );
                }),
            )
          : Promise.resolve([]);

      const refresh = new Map<string, Promise<void>>();
      /** Rotations and revocations replace the tokens the next cases authenticate with. */
      const follow = (request: FuzzCase, status: number, body: Buffer) => {
        if (status >= 300 || !/access_tokens/.test(request.path)) return;
        const fixture = request.fixture;
        const kind = /\/projects\/[^/]+\/access_tokens/.test(request.path)
          ? 'project'
          : /\/groups\/[^/]+\/access_tokens/.test(request.path)
            ? 'group'
            : 'personal';
        const self = request.path.includes('/self');
        if (request.method === 'POST' && request.path.includes('/rotate')) {
          let rotated: { id?: number; token?: string } = {};
          try {
            rotated = JSON.parse(body.toString('utf8'));
          } catch {
            return;
          }
          if (!rotated.token || !rotated.id) return;
          if (!self) fixture.spareTokens[kind] = rotated.id;
          else if (kind === 'project') fixture.projectToken = { id: rotated.id, token: rotated.token };
          else if (kind === 'group') fixture.groupToken = { id: rotated.id, token: rotated.token };
          else Object.assign(fixture.member, { token: rotated.token, tokenId: rotated.id });
        } else if (request.method === 'DELETE' && self) {
          const key = `${fixture.project.id}:${kind}`;
          if (refresh.has(key)) return;
          const mint = async () => {
            if (kind === 'personal') Object.assign(fixture.member, await maker.token(fixture.member.id));
          };
          refresh.set(
            key,
            mint()
              .catch(() => undefined)
              .finally(() => refresh.delete(key)),
          );
        }
      };

      const authHeaders = (request: FuzzCase): Record<string, string> => {
        const fixture = request.fixture;
        switch (request.auth) {
          case 'admin':
            return { 'PRIVATE-TOKEN': admin.token };
          case 'member':
            return { 'PRIVATE-TOKEN': fixture.member.token };
          case 'self':
            if (request.path.includes('/access_tokens/self'))
              return {
                'PRIVATE-TOKEN': request.path.startsWith('/api/v4/groups/')
                  ? fixture.groupToken.token
                  : fixture.projectToken.token,
              };
            return { 'PRIVATE-TOKEN': fixture.member.token };
          default:
            return {};
        }
      };

      const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
      let serial = 0;
      const worker = async (list: Array<{ op: FuzzOperation; spec: CaseSpec }>, cursor: { next: number }) => {
        while (cursor.next < list.length) {
          const { op, spec } = list[cursor.next++];
          const request = spec.make();
          const requestId = `fuzz-${seed}-${++serial}`;
          const headers = { ...request.headers, ...authHeaders(request), 'X-Request-Id': requestId };
          const shown = `${op.operationId} ${request.method} ${request.path.slice(0, 200)}`;
          server.inFlight.add(shown);
          const crashesBefore = server.crashes.length;
          let answer = await sendRaw(base, { ...request, headers }, { agent, timeoutMs: requestTimeoutMs });
          server.inFlight.delete(shown);
          // A crash loses the requests in flight and refuses the next until the restart: they go again
          // once (the crash itself is reported with what was in flight).
          if (answer.status === 0 && (await server.restartedSince(crashesBefore)))
            answer = await sendRaw(base, { ...request, headers }, { agent, timeoutMs: requestTimeoutMs });
          // A reset the network or the keep-alive pool caused is not the server's answer: the request goes
          // once more on a connection of its own, and only a second reset counts.
          if (answer.status === 0 && /^(ECONNRESET|EPIPE)$/.test(answer.error ?? '')) {
            const again = await sendRaw(base, { ...request, headers }, { timeoutMs: requestTimeoutMs });
            if (again.status !== 0 && tally.resentAfterReset++ < 8)
              tally.resetExamples.push(
                `${again.status} after ${answer.ms} ms: ${op.operationId} [${request.category}] ${request.label.slice(0, 80)}`,
              );
            answer = again;
          }
          tally.requests++;
          if (trace)
            fs.appendFileSync(
              trace,
              `${answer.status} ${answer.ms}ms ${op.operationId} [${request.category}] ${request.auth} ${request.method} ${request.path.slice(0, 300)} ${request.label.slice(0, 100)}\n`,
            );
          tally.byStatus.set(answer.status, (tally.byStatus.get(answer.status) ?? 0) + 1);
          tally.byCategory.set(request.category, (tally.byCategory.get(request.category) ?? 0) + 1);
          if (spec.label === 'baseline')
            baselines.set(op.operationId, `${answer.status} ${printable(answer.body, 160)}`);
          follow(request, answer.status, answer.body);
          const verdict = judge(request, answer, backend, anyRouteStatuses, op.statuses);
          if (verdict.parserRefusal)
            tally.parserRefusals.set(answer.status, (tally.parserRefusals.get(answer.status) ?? 0) + 1);
          if (verdict.verdict)
            pendingFindings.push({
              requestId,
              finding: {
                verdict: verdict.verdict,
                operationId: op.operationId,
                category: request.category,
                label: request.label,
                request: describeRequest(request, headers),
                status: answer.status,
                response: printable(answer.body, 400),
                detail: verdict.detail,
                log: [],
              },
            });
          if (full && tally.requests % 5000 === 0)
            console.error(
              `fuzz: ${tally.requests} of ${specs.length} sent, ${pendingFindings.length} findings so far`,
            );
        }
      };
      for (const phase of phases) {
        const cursor = { next: 0 };
        await Promise.all(Array.from({ length: concurrency }, () => worker(phase, cursor)));
      }
      await held;
      agent.destroy();
      const still = async (token: string) =>
        (
          await sendRaw(
            base,
            { method: 'GET', path: '/api/v4/user', headers: { 'PRIVATE-TOKEN': token } },
            { timeoutMs: 10_000 },
          )
        ).status;
      // Log lines may trail their answers by a moment.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const adminAfter = await still(admin.token);
      const rootAfter = await still(rootToken);
      await server.stop();
      for (const { requestId, finding } of pendingFindings) {
        finding.log = server.logs.get(requestId) ?? [];
        tally.findings.push(finding);
      }

      const seconds = Math.round((Date.now() - started) / 1000);
      const notRun = operations.filter((op) => !/^2/.test(baselines.get(op.operationId) ?? ''));
      const header =
        `fuzz (${mode}): seed ${seed} (FUZZ_SEED=${seed} sends the same requests), ${seconds} s, concurrency ${concurrency}, ` +
        `${perOperation} cases per operation; setup ${setupSeconds} s\n` +
        `GET /user afterwards: as the fuzz administrator ${adminAfter}, as root ${rootAfter}\n` +
        `operations whose valid baseline was refused: ${notRun.length}` +
        notRun.map((op) => `\n  ${op.operationId}: ${baselines.get(op.operationId)}`).join('');
      const report = summary(tally, header);
      fs.mkdirSync(outputDir, { recursive: true });
      fs.writeFileSync(path.join(outputDir, `fuzz-${mode}-summary.txt`), `${report}\n`);
      fs.writeFileSync(
        path.join(outputDir, `fuzz-${mode}-findings.txt`),
        tally.findings.map(oneLine).join('\n') + (tally.findings.length ? '\n' : ''),
      );
      fs.writeFileSync(
        path.join(outputDir, `fuzz-${mode}-findings.json`),
        JSON.stringify(tally.findings, null, 1),
      );

      expect(fs.existsSync(marker), `an option injection created ${marker}`).toBe(false);
      expect(tally.requests).toBe(specs.length);
      const problems = [
        ...tally.crashes.map((crash) => `crash: ${crash.slice(0, 1000)}`),
        ...tally.heldBodies,
        ...groupFindings(tally.findings).map(
          ([cause, members]) => `${members.length}× ${cause}\n    e.g. ${oneLine(members[0])}`,
        ),
      ];
      expect(problems, report).toEqual([]);
    },
    // The sample grows with the contract (about 4,600 requests for 290 operations); a busy machine needs minutes.
    full ? 4 * 60 * 60_000 : 600_000,
  );
});

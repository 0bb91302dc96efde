/**
 * `make ops-coverage`: which operations of the contract the test suite exercised. A test covers an
 * operation when the server answered it at least once with a response that matches the spec; the checks
 * come from the log that `make test` writes (FORGE_OPS_LOG, default .forge-test/operations.jsonl).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ResponseCheck } from '../src/core/response-validation.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const specFile = path.join(root, 'generated/openapi.json');
const logFile = path.resolve(root, process.env.FORGE_OPS_LOG || '.forge-test/operations.jsonl');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

if (!fs.existsSync(logFile)) {
  process.stderr.write(`No operations log at ${logFile}: run \`make test\` first.\n`);
  process.exit(1);
}

const spec = JSON.parse(fs.readFileSync(specFile, 'utf8')) as {
  paths: Record<string, Record<string, { operationId?: string }>>;
};
const operations = Object.entries(spec.paths).flatMap(([route, item]) =>
  METHODS.filter((method) => item[method]).map((method) => ({
    method: method.toUpperCase(),
    route,
    operationId: item[method].operationId ?? `${method.toUpperCase()} ${route}`,
  })),
);

const checks: ResponseCheck[] = fs
  .readFileSync(logFile, 'utf8')
  .split('\n')
  .filter((line) => line.trim())
  .map((line) => JSON.parse(line) as ResponseCheck);

const width = (values: string[]) => Math.max(0, ...values.map((value) => value.length));
const [methodWidth, routeWidth, idWidth] = [
  width(operations.map((op) => op.method)),
  width(operations.map((op) => op.route)),
  width(operations.map((op) => op.operationId)),
];
const statuses = (list: ResponseCheck[]) => [...new Set(list.map((c) => c.status))].sort((a, b) => a - b);

const shown = path.relative(process.cwd(), logFile);
const out = [`Operations checked by the tests (${shown.startsWith('..') ? logFile : shown}):`];
let covered = 0;
for (const op of operations) {
  const mine = checks.filter((check) => check.operationId === op.operationId);
  const valid = statuses(mine.filter((check) => check.valid));
  const invalid = mine.filter((check) => !check.valid).length;
  if (valid.length > 0) covered++;
  const line = `  ${op.method.padEnd(methodWidth)}  ${op.route.padEnd(routeWidth)}  ${op.operationId.padEnd(idWidth)}`;
  const state = valid.length > 0 ? `covered  ${valid.join(',')}` : 'NOT covered';
  out.push(`${line}  ${state}${invalid > 0 ? ` (${invalid} invalid)` : ''}`);
}

const known = new Set(operations.map((op) => op.operationId));
const unknown = [...new Set(checks.map((c) => c.operationId).filter((id) => !known.has(id)))];
if (unknown.length > 0) out.push('', `Checks for operations not in the spec: ${unknown.join(', ')}`);

const invalid = checks.filter((check) => !check.valid);
if (invalid.length > 0) {
  out.push('', `Responses that did not match the contract (${invalid.length}):`);
  for (const check of invalid) {
    out.push(
      `  ${check.method} ${check.path} → ${check.status} (${check.operationId}): ${check.errors.join('; ')}`,
    );
  }
}

if (checks.length === 0)
  out.push('', 'The log is empty: `make test` (all files) fills it; a run of some files resets it.');
out.push('', `${covered} of ${operations.length} operations covered`);
process.stdout.write(`${out.join('\n')}\n`);

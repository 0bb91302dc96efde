/** A database error is logged with its message and statement, never with the values bound to it. */
import { QueryFailedError } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';

const DIGEST = `${'a1'.repeat(16)}:${'b2'.repeat(64)}`;
const EMAIL = 'alice.secret@example.com';

function logged(write: (logger: ReturnType<typeof createLogger>) => void): Record<string, unknown> {
  const lines: string[] = [];
  const logger = createLogger('info', { write: (line: string) => lines.push(line) });
  write(logger);
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]) as Record<string, unknown>;
}

/** As pg rejects an INSERT, and PGlite too (its error carries `params`). */
function failedInsert(): QueryFailedError {
  const driverError = Object.assign(new Error('null value in column "name" violates not-null constraint'), {
    code: '23502',
    detail: `Failing row contains (7, alice, null, ${EMAIL}, ${DIGEST}).`,
    where: `unnamed portal parameter $4 = '${DIGEST}'`,
    params: ['alice', null, EMAIL, DIGEST],
    queryOptions: { rowMode: 'array' },
  });
  return new QueryFailedError(
    'INSERT INTO "users"("username", "name", "email", "password_digest") VALUES ($1, $2, $3, $4)',
    ['alice', null, EMAIL, DIGEST],
    driverError,
  );
}

describe('the error serializer', () => {
  it('drops the bound values of a failed statement, keeping what says what failed', () => {
    const entry = logged((logger) =>
      logger.error({ err: failedInsert(), requestId: 'r1' }, 'request failed'),
    );
    const text = JSON.stringify(entry);
    expect(text).not.toContain(DIGEST);
    expect(text).not.toContain(EMAIL);
    const err = entry.err as Record<string, unknown>;
    expect(err).toMatchObject({
      type: 'QueryFailedError',
      message: 'null value in column "name" violates not-null constraint',
      query: expect.stringContaining('INSERT INTO "users"'),
      code: '23502',
    });
    expect(err).not.toHaveProperty('parameters');
    expect(err.driverError).toMatchObject({ code: '23502', where: "unnamed portal parameter $4 = '…'" });
    expect(entry.requestId).toBe('r1');
  });

  it('leaves the error it logged as it was', () => {
    const err = failedInsert();
    logged((logger) => logger.error({ err }, 'request failed'));
    expect(err.parameters).toContain(DIGEST);
    expect((err.driverError as unknown as { params: unknown[] }).params).toContain(EMAIL);
  });

  it('serializes other errors as pino does', () => {
    const entry = logged((logger) =>
      logger.warn({ err: Object.assign(new Error('git failed'), { args: ['cat-file', '--batch'] }) }, 'x'),
    );
    expect(entry.err).toMatchObject({ type: 'Error', message: 'git failed', args: ['cat-file', '--batch'] });
    expect((entry.err as { stack: string }).stack).toContain('git failed');
  });
});

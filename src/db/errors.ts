import { QueryFailedError } from 'typeorm';
import { CONNECT_FAILED } from './pg-client.js';

/** A write lost to a unique index: someone else took the name or path between our check and the write. */
export const isUniqueViolation = (err: unknown): err is QueryFailedError =>
  err instanceof QueryFailedError && (err.driverError as { code?: string })?.code === '23505';

/** A row that names a record deleted meanwhile (a fork whose source went as it was created). */
export const isForeignKeyViolation = (err: unknown): err is QueryFailedError =>
  err instanceof QueryFailedError && (err.driverError as { code?: string })?.code === '23503';

/** Network failures on the way to the database, by errno, in words. */
const NETWORK_CODES = new Map([
  ['ECONNREFUSED', 'connection refused'],
  ['ECONNRESET', 'connection reset'],
  ['ETIMEDOUT', 'timed out'],
  ['EHOSTUNREACH', 'host unreachable'],
  ['ENETUNREACH', 'network unreachable'],
  ['ENOTFOUND', 'host not found'],
  ['EAI_AGAIN', 'host name lookup failed'],
  ['EPIPE', 'connection closed'],
]);

/**
 * SQLSTATEs of a database that cannot serve now: connection exceptions (class 08), a statement
 * cancelled by `statement_timeout`, a server shutting down or starting, too many connections.
 */
const UNAVAILABLE_STATES = /^(08...|57014|57P0[123]|53300)$/;

/** node-postgres's and the embedded driver's own words for a connection that never came or went away. */
const UNAVAILABLE_MESSAGES =
  /^(timeout exceeded when trying to connect|Connection terminated|Query read timeout|timeout expired)/;

/**
 * Whether `err` says the database is unreachable or not answering in time (as opposed to refusing a
 * statement): such a request answers 503, and readiness fails. A network errno counts when it comes
 * from a query or from opening a connection, not from any socket (a client hanging up is no outage).
 */
export function isDatabaseUnavailable(err: unknown, depth = 0, fromQuery = false): boolean {
  if (!(err instanceof Error) || depth > 4) return false;
  if ((err as { [CONNECT_FAILED]?: boolean })[CONNECT_FAILED]) return true;
  const { code, syscall } = err as { code?: unknown; syscall?: unknown };
  if (typeof code === 'string') {
    if (UNAVAILABLE_STATES.test(code)) return true;
    if (NETWORK_CODES.has(code) && (fromQuery || syscall === 'connect' || syscall === 'getaddrinfo'))
      return true;
  }
  if (UNAVAILABLE_MESSAGES.test(err.message)) return true;
  if (err instanceof QueryFailedError) return isDatabaseUnavailable(err.driverError, depth + 1, true);
  // Node's connect to a name with several addresses fails with one error per address.
  if (err instanceof AggregateError)
    return err.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1, fromQuery));
  return isDatabaseUnavailable(err.cause, depth + 1, fromQuery);
}

/**
 * One line for an operator when the database cannot be reached at start: where it was looked for
 * (never the password) and why. Undefined for other failures.
 */
export function databaseUnreachable(err: unknown, url: string | undefined): string | undefined {
  if (!isDatabaseUnavailable(err)) return undefined;
  const reason = networkReason(err) ?? (err as Error).message;
  if (!url) return `the embedded database did not answer: ${reason}`;
  let where = 'the database';
  try {
    const parsed = new URL(url);
    where = `PostgreSQL at ${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
  } catch {
    // An unparsable URL is named by nothing that could leak it.
  }
  return `cannot reach ${where}: ${reason}`;
}

function networkReason(err: unknown): string | undefined {
  if (err instanceof AggregateError) return err.errors.map(networkReason).find(Boolean);
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return `${NETWORK_CODES.get(code)} (${code})`;
  if (err instanceof Error && /timeout/i.test(err.message)) return 'no answer in time';
  return undefined;
}

/** The one line a start that failed prints: the database's reason when it is unreachable, else the error's message. */
export function startFailure(err: unknown, url: string | undefined): string {
  return (
    databaseUnreachable(err, url) ??
    ((err instanceof Error ? err.message : String(err)).split('\n')[0] || 'unknown error')
  );
}

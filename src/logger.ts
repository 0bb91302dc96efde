import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * What database errors carry of the statement's values: TypeORM's `parameters`, PGlite's `params` and
 * `queryOptions`, PostgreSQL's `detail` ("Key (email)=(…) already exists", "Failing row contains (…)").
 * A failed user write would otherwise log the password digest and the e-mail.
 */
const VALUE_KEYS = ['parameters', 'params', 'queryOptions', 'detail'];

/** PostgreSQL's context line may quote a bound value: `parameter $1 = '…'`. */
const QUOTED_PARAMETER = /(\$\d+ = )'(?:[^']|'')*'/g;

/** A copy without those values: the error itself, which others may still hold, is left as it is. */
function withoutValues(value: unknown, depth = 0): unknown {
  if (typeof value !== 'object' || value === null || depth > 4) return value;
  if (Array.isArray(value)) return value.map((item) => withoutValues(item, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (VALUE_KEYS.includes(key)) continue;
    copy[key] =
      key === 'where' && typeof child === 'string'
        ? child.replace(QUOTED_PARAMETER, "$1'…'")
        : withoutValues(child, depth + 1);
  }
  return copy;
}

/** pino's error serializer, without the values of the statement a database error comes from. */
export function serializeError(err: unknown): unknown {
  return withoutValues(pino.stdSerializers.err(err as Error));
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'forge-api' },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: { err: serializeError, error: serializeError },
    },
    destination,
  );
}

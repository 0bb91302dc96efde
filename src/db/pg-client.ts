import pg from 'pg';

const isReadTimeout = (err: unknown) => err instanceof Error && err.message === 'Query read timeout';

/** Set on an error that opening a database connection failed with, whatever its errno or message. */
export const CONNECT_FAILED = Symbol('database connection failed');

const markConnectFailure = (err: unknown) => {
  if (err instanceof Error) Object.assign(err, { [CONNECT_FAILED]: true });
};

type Callback = (err: unknown, result?: unknown) => void;

/**
 * The pool's client. node-postgres gives up waiting for an answer after `query_timeout` but keeps the
 * connection, whose late answer would then be read as the next query's, or which may never answer
 * again: this client drops the connection instead, so the pool replaces it. And it marks the errors of
 * a connection that could not be opened (a reset or refusal at any step), which are an outage.
 */
export class DroppingClient extends pg.Client {
  constructor(config?: pg.ClientConfig) {
    super(config);
    const query = this.query.bind(this) as (...args: unknown[]) => unknown;
    const connect = this.connect.bind(this) as (callback?: Callback) => Promise<unknown> | undefined;
    const drop = () => void this.end().catch(() => undefined);
    this.query = ((...args: unknown[]) => {
      const last = args[args.length - 1];
      if (typeof last === 'function') {
        args[args.length - 1] = (err: unknown, result: unknown) => {
          if (isReadTimeout(err)) drop();
          (last as Callback)(err, result);
        };
      }
      const result = query(...args);
      if (result instanceof Promise)
        result.catch((err: unknown) => {
          if (isReadTimeout(err)) drop();
        });
      return result;
    }) as pg.Client['query'];
    this.connect = ((callback?: Callback) => {
      if (callback)
        return connect((err: unknown, result?: unknown) => {
          markConnectFailure(err);
          callback(err, result);
        });
      return connect()!.catch((err: unknown) => {
        markConnectFailure(err);
        throw err;
      });
    }) as pg.Client['connect'];
  }
}

import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import type { DataSource } from 'typeorm';

/** The channel the schema's triggers announce changes on (see the AccountChanges migration). */
export const CHANGES_CHANNEL = 'forge_changes';

/** What caches hear: a trigger's payload, or `undefined` when changes may have been missed. */
export type ChangeHandler = (payload: string | undefined) => void;

/**
 * Row changes announced by the database, for in-memory caches that must never serve a stale answer.
 *
 * Every pooled PostgreSQL connection listens: PostgreSQL hands a session its own notifications before it
 * reports the statement (or the COMMIT) done, so a change made through this process is heard before the
 * write returns, whatever code wrote it. Other processes' changes arrive on one dedicated connection; while
 * it is down (and until it first listens), `live` is false and caches must neither serve nor fill. PGlite
 * has a single session in a single process, which hears every change at once.
 */
export class ChangeFeed {
  private readonly handlers = new Set<ChangeHandler>();
  private listener?: pg.Client;
  private retry?: NodeJS.Timeout;
  private closed = false;
  private started = false;
  live = false;

  constructor(private readonly listenerConfig?: pg.ClientConfig) {}

  /** Also starts the dedicated listener, on PostgreSQL, the first time. */
  subscribe(handler: ChangeHandler): void {
    this.handlers.add(handler);
    if (!this.started && this.listenerConfig) {
      this.started = true;
      this.connect();
    }
  }

  dispatch(payload: string | undefined): void {
    for (const handler of this.handlers) handler(payload);
  }

  /** PGlite: one session for everything. */
  async attach(db: PGlite): Promise<void> {
    await db.listen(CHANGES_CHANNEL, (payload) => this.dispatch(payload));
    this.live = true;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.live = false;
    clearTimeout(this.retry);
    await this.listener?.end().catch(() => undefined);
  }

  private connect(): void {
    if (this.closed) return;
    const client = new pg.Client(this.listenerConfig);
    this.listener = client;
    let lost = false;
    const down = () => {
      if (lost) return;
      lost = true;
      this.live = false;
      this.dispatch(undefined);
      void client.end().catch(() => undefined);
      if (!this.closed) this.retry = setTimeout(() => this.connect(), 1000);
    };
    client.on('error', down);
    client.on('end', down);
    client.on('notification', (message) => {
      if (message.channel === CHANGES_CHANNEL) this.dispatch(message.payload);
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${CHANGES_CHANNEL}`))
      .then(() => {
        if (lost || this.closed) return;
        // What changed while nobody listened is unknown: caches start over.
        this.dispatch(undefined);
        this.live = true;
      })
      .catch(down);
  }
}

const feeds = new WeakMap<DataSource, ChangeFeed>();

/** The data source's feed; one made elsewhere than createDataSource has none that is ever live. */
export function changeFeed(dataSource: DataSource): ChangeFeed {
  let feed = feeds.get(dataSource);
  if (!feed) {
    feed = new ChangeFeed();
    feeds.set(dataSource, feed);
  }
  return feed;
}

export function setChangeFeed(dataSource: DataSource, feed: ChangeFeed): void {
  feeds.set(dataSource, feed);
  const destroy = dataSource.destroy.bind(dataSource);
  dataSource.destroy = async () => {
    await feed.close();
    return destroy();
  };
}

type ClientClass = new (config?: pg.ClientConfig) => pg.Client;
type Callback = (err: unknown, result?: unknown) => void;

/** A pool client class whose connections listen to the feed's channel from the start. */
export function listeningClient(Base: ClientClass, feed: ChangeFeed): ClientClass {
  return class ListeningClient extends Base {
    constructor(config?: pg.ClientConfig) {
      super(config);
      this.on('notification', (message: pg.Notification) => {
        if (message.channel === CHANGES_CHANNEL) feed.dispatch(message.payload);
      });
      const connect = this.connect.bind(this) as (callback?: Callback) => Promise<void> | undefined;
      // Queued before the pool hands the connection out, so it listens before its first statement.
      const listen = () => void this.query(`LISTEN ${CHANGES_CHANNEL}`).catch(() => undefined);
      this.connect = ((callback?: Callback) => {
        if (callback)
          return connect((err, result) => {
            if (!err) listen();
            callback(err, result);
          });
        return connect()!.then(listen);
      }) as pg.Client['connect'];
    }
  };
}

import type { DataSource } from 'typeorm';
import { anonymous, hashToken, requireScope, type Authenticator, type Caller } from '../core/auth.js';
import { utcToday } from '../core/clock.js';
import { forbidden, notFound, unauthorized } from '../core/errors.js';
import { recordId } from '../core/ids.js';
import type { CoreDeps } from '../core/family.js';
import { changeFeed } from '../db/changes.js';
import { preparedQuery } from '../db/prepared.js';
import { entityRows, type EntityRows } from '../db/rows.js';
import type { Logger } from '../logger.js';
import { ChangeCache, ownCopy } from '../db/change-cache.js';
import { PersonalAccessToken } from './personal-access-token.entity.js';
import { User } from './user.entity.js';

declare module '../core/auth.js' {
  interface Identity {
    user: User;
    token: PersonalAccessToken;
  }
}

/** GitLab records a token's use at most this often. */
const LAST_USED_INTERVAL_MS = 10 * 60 * 1000;
/** Tokens whose principal is kept in memory, and for how long at most. */
const PRINCIPALS = 10_000;
const PRINCIPAL_TTL_MS = 30_000;

/** A valid token and its user, as the database last announced them. */
interface Principal {
  token: PersonalAccessToken;
  user: User;
}

/** Unrevoked, unexpired today, and its user active. */
const usable = ({ token, user }: Principal) =>
  !token.revoked && (token.expiresAt === null || token.expiresAt > utcToday()) && user.state === 'active';

/** Tokens and sudo, against the users' tables. */
export class AuthenticationService implements Authenticator {
  private readonly dataSource: DataSource;
  private readonly logger: Logger;
  private readonly tokens: EntityRows<PersonalAccessToken>;
  private readonly users: EntityRows<User>;
  /** The token and its user in one statement, by the unique index on the digest. */
  private readonly lookup: string;
  /** Tokens whose use is being recorded: concurrent requests with one token write once. */
  private readonly recording = new Set<number>();
  /**
   * Principals by token digest. Any change to the user or any of their tokens (revocation, rotation,
   * scopes, blocking, deletion, admin or external flags...) drops the user's entries, in every process;
   * expiry by date is checked at each request.
   */
  private readonly principals: ChangeCache<string, Principal>;

  constructor(core: CoreDeps) {
    this.dataSource = core.dataSource;
    this.logger = core.logger;
    this.tokens = entityRows(core.dataSource, PersonalAccessToken, 't');
    this.users = entityRows(core.dataSource, User, 'u');
    this.lookup = `SELECT ${this.tokens.select}, ${this.users.select}
      FROM personal_access_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_digest = $1`;
    this.principals = new ChangeCache(
      changeFeed(core.dataSource),
      PRINCIPALS,
      PRINCIPAL_TTL_MS,
      ['user'],
      (_digest, principal, change) => change.kind === 'user' && change.id === principal.user.id,
    );
  }

  async authenticate(token: string | undefined): Promise<Caller> {
    if (!token) return anonymous;
    const digest = hashToken(token);
    let principal = this.principals.get(digest);
    if (!principal) {
      const mark = this.principals.mark();
      const rows = await preparedQuery(this.dataSource, this.lookup, [digest]);
      const token = rows.length === 1 ? this.tokens.hydrate(rows[0]) : null;
      const user = rows.length === 1 ? this.users.hydrate(rows[0]) : null;
      if (!token || !user || !usable({ token, user })) throw unauthorized();
      principal = { token, user };
      this.principals.set(digest, principal, mark);
    } else if (!usable(principal)) throw unauthorized();
    this.recordUse(principal.token);
    const user = ownCopy(principal.user);
    const record = ownCopy(principal.token);
    record.user = user;
    return { user, token: record };
  }

  /**
   * `last_used_at`, written off the request path and at most once per interval per token (the
   * statement's condition holds across processes). A failure is logged: the request has succeeded.
   */
  private recordUse(token: PersonalAccessToken): void {
    const lastUsed = token.lastUsedAt?.getTime() ?? 0;
    if (Date.now() - lastUsed < LAST_USED_INTERVAL_MS || this.recording.has(token.id)) return;
    this.recording.add(token.id);
    this.dataSource
      .query(
        `UPDATE personal_access_tokens SET last_used_at = now()
         WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '10 minutes')`,
        [token.id],
      )
      // The cached token remembers it, so that its next requests do not try again.
      .then(() => (token.lastUsedAt = new Date()))
      .catch((err: unknown) => this.logger.warn({ err, tokenId: token.id }, 'could not record a token use'))
      .finally(() => this.recording.delete(token.id));
  }

  /**
   * Administrators act as another user with sudo, from a token that has the `sudo` scope. The target
   * is found by id or username; from then on the request is that user's, with the admin's token scopes.
   */
  async actAs(caller: Caller, identifier: string | undefined): Promise<Caller> {
    if (!identifier) return caller;
    if (!caller.user || !caller.token) throw unauthorized();
    if (!caller.user.admin) throw forbidden('Must be admin to use sudo');
    requireScope(caller, ['sudo']);
    const users = this.dataSource.getRepository(User);
    const id = recordId(identifier);
    const target =
      id !== undefined
        ? await users.findOne({ where: { id } })
        : await users
            .createQueryBuilder('u')
            .where('lower(u.username) = lower(:username)', { username: identifier })
            .getOne();
    if (!target) throw notFound(`User with ID or username '${identifier}'`);
    if (target.state !== 'active') throw forbidden('The user you are trying to act as is blocked');
    return { user: target, token: caller.token, sudoFrom: caller.user };
  }
}

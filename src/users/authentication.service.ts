import type { DataSource } from 'typeorm';
import { anonymous, hashToken, requireScope, type Authenticator, type Caller } from '../core/auth.js';
import { forbidden, notFound, unauthorized } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import { PersonalAccessToken } from './personal-access-token.entity.js';
import { User } from './user.entity.js';

declare module '../core/auth.js' {
  interface Identity {
    user: User;
    token: PersonalAccessToken;
  }
}

/** Tokens and sudo, against the users' tables. */
export class AuthenticationService implements Authenticator {
  private readonly dataSource: DataSource;

  constructor(core: CoreDeps) {
    this.dataSource = core.dataSource;
  }

  async authenticate(token: string | undefined): Promise<Caller> {
    if (!token) return anonymous;
    const record = await this.dataSource.getRepository(PersonalAccessToken).findOne({
      where: { tokenDigest: hashToken(token) },
      relations: { user: true },
    });
    const today = new Date().toISOString().slice(0, 10);
    if (!record?.user || record.revoked || (record.expiresAt !== null && record.expiresAt <= today))
      throw unauthorized();
    if (record.user.state !== 'active') throw unauthorized();
    await this.dataSource.query(
      `UPDATE personal_access_tokens SET last_used_at = now()
       WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '10 minutes')`,
      [record.id],
    );
    return { user: record.user, token: record };
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
    const target = /^\d+$/.test(identifier)
      ? await users.findOne({ where: { id: Number(identifier) } })
      : await users
          .createQueryBuilder('u')
          .where('lower(u.username) = lower(:username)', { username: identifier })
          .getOne();
    if (!target) throw notFound(`User with ID or username '${identifier}'`);
    if (target.state !== 'active') throw forbidden('The user you are trying to act as is blocked');
    return { user: target, token: caller.token, sudoFrom: caller.user };
  }
}

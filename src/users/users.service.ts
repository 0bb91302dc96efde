import type { DataSource, EntityManager } from 'typeorm';
import type { ServiceDeps } from '../services.js';
import { generateToken, hashToken } from '../core/auth.js';
import { Namespace } from '../namespaces/namespace.entity.js';
import { Visibility } from '../core/abilities.js';
import { PersonalAccessToken } from './personal-access-token.entity.js';
import { User } from './user.entity.js';

export interface NewUser {
  username: string;
  name: string;
  email: string;
  admin?: boolean;
  external?: boolean;
  bot?: boolean;
  userType?: User['userType'];
  state?: User['state'];
  createdById?: number | null;
}

export interface NewToken {
  name: string;
  scopes: string[];
  expiresAt?: string | null;
  /** A token chosen by the operator (FORGE_ROOT_TOKEN); generated otherwise. */
  token?: string;
}

export class UsersService {
  private readonly dataSource: DataSource;

  constructor(deps: ServiceDeps) {
    this.dataSource = deps.dataSource;
  }

  /** A user and its personal namespace, in one transaction. */
  createUser(attrs: NewUser, manager: EntityManager = this.dataSource.manager): Promise<User> {
    return manager.transaction(async (tx) => {
      const user = await tx.getRepository(User).save(tx.getRepository(User).create(attrs));
      const namespaces = tx.getRepository(Namespace);
      const namespace = await namespaces.save(
        namespaces.create({
          name: user.name,
          path: user.username,
          kind: 'user',
          parentId: null,
          fullPath: user.username,
          fullName: user.name,
          ownerId: user.id,
          visibilityLevel: Visibility.public,
        }),
      );
      await namespaces.update(namespace.id, { traversalIds: [namespace.id] });
      return user;
    });
  }

  /** Stores only the token's digest; the token is returned once. */
  async createToken(
    userId: number,
    attrs: NewToken,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<{ record: PersonalAccessToken; token: string }> {
    const token = attrs.token ?? generateToken();
    const repository = manager.getRepository(PersonalAccessToken);
    const record = await repository.save(
      repository.create({
        userId,
        name: attrs.name,
        scopes: attrs.scopes,
        expiresAt: attrs.expiresAt ?? null,
        tokenDigest: hashToken(token),
      }),
    );
    return { record, token };
  }

  personalNamespace(
    userId: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Namespace | null> {
    return manager.getRepository(Namespace).findOne({ where: { ownerId: userId, kind: 'user' } });
  }
}

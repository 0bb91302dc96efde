import { defineFamily, defineService } from '../core/family.js';
import { AccountChanges1767800400000 } from './migrations/1767800400000-account-changes.js';
import { AuthenticationService } from './authentication.service.js';
import { PersonalAccessToken } from './personal-access-token.entity.js';
import { User } from './user.entity.js';
import { usersHandlers } from './users.handlers.js';
import { UsersService } from './users.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    users: UsersService;
    authentication: AuthenticationService;
  }
}

export const usersManifest = defineFamily({
  name: 'users',
  entities: [User, PersonalAccessToken],
  migrations: [AccountChanges1767800400000],
  services: [
    defineService('users', [], (core) => new UsersService(core)),
    defineService('authentication', [], (core) => new AuthenticationService(core)),
  ],
  handlers: usersHandlers,
});

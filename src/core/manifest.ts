import { InternalId } from '../db/internal-id.entity.js';
import { Initial1767225600000 } from './migrations/1767225600000-initial.js';
import { Identity1767398400000 } from './migrations/1767398400000-identity.js';
import { Repositories1767484800000 } from './migrations/1767484800000-repositories.js';
import { AuthorizationGeneration1767800200000 } from './migrations/1767800200000-authorization-generation.js';
import { coreAbilities } from './abilities.js';
import { defineFamily, defineService } from './family.js';
import { RateLimiter } from './rate-limit.js';

declare module './family.js' {
  interface ServiceRegistry {
    /** Shared by the API's endpoint classes and the services' own limits (archives, large blobs). */
    rateLimiter: RateLimiter;
  }
}

/**
 * What every family stands on: per-project internal ids, the rate limiter, and the foundation's
 * migrations, which created the first families' tables together (and the authorization generation
 * that src/core/readable-projects.ts reads). Later families bring their own.
 */
export const coreManifest = defineFamily({
  name: 'core',
  entities: [InternalId],
  migrations: [
    // users, namespaces, projects, members and tokens at once: no one family owns most of it.
    Initial1767225600000,
    // users, tokens, namespaces, members and project shares, across four families.
    Identity1767398400000,
    // protected branches and tags, push events and project columns: four families, none the most.
    Repositories1767484800000,
    // read by src/core/readable-projects.ts, its triggers on five families' tables.
    AuthorizationGeneration1767800200000,
  ],
  abilities: coreAbilities,
  services: [defineService('rateLimiter', [], (core) => new RateLimiter(core.config.rateLimits))],
});

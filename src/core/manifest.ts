import { InternalId } from '../db/internal-id.entity.js';
import { Initial1767225600000 } from '../db/migrations/1767225600000-initial.js';
import { ProjectCustomAttributes1767312000000 } from '../db/migrations/1767312000000-project-custom-attributes.js';
import { Identity1767398400000 } from '../db/migrations/1767398400000-identity.js';
import { Repositories1767484800000 } from '../db/migrations/1767484800000-repositories.js';
import { AuthorizationGeneration1767800200000 } from '../db/migrations/1767800200000-authorization-generation.js';
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
    Initial1767225600000,
    ProjectCustomAttributes1767312000000,
    Identity1767398400000,
    Repositories1767484800000,
    AuthorizationGeneration1767800200000,
  ],
  abilities: coreAbilities,
  services: [defineService('rateLimiter', [], (core) => new RateLimiter(core.config.rateLimits))],
});

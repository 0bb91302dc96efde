import { defineFamily, defineService } from '../core/family.js';
import { PlanLimits1767901000000 } from './migrations/1767901000000-plan-limits.js';
import { planLimitsHandlers } from './plan-limits.handlers.js';
import { PlanLimitsService } from './plan-limits.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    /** The plans' application limits; `current()` is the instance's, for the families that enforce them. */
    planLimits: PlanLimitsService;
  }
}

export const planLimitsManifest = defineFamily({
  name: 'plan_limits',
  migrations: [PlanLimits1767901000000],
  services: [defineService('planLimits', [], (core) => new PlanLimitsService(core))],
  handlers: planLimitsHandlers,
});

import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

/** Whoever sees the project or group reads its milestones; Planner and above manage them. */
export const milestonesAbilities = defineAbilities({
  project: {
    read_milestone: { minimum: AccessLevel.NoAccess },
    admin_milestone: { minimum: AccessLevel.Planner, refusedWhenArchived: true },
  },
  group: {
    read_milestone: { minimum: AccessLevel.NoAccess },
    admin_milestone: { minimum: AccessLevel.Planner },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    milestones: typeof milestonesAbilities;
  }
}

import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

/** Whoever sees the project or group reads its labels; Planner and above manage them. */
export const labelsAbilities = defineAbilities({
  /** Finer rules (`x-forge-rule`) the family's services apply once the resource is found. */
  rules: {
    also_admin_group_label: { summary: "Planner or above in the project's group too" },
  },
  project: {
    read_label: { minimum: AccessLevel.NoAccess },
    admin_label: { minimum: AccessLevel.Planner, refusedWhenArchived: true },
  },
  group: {
    read_label: { minimum: AccessLevel.NoAccess },
    admin_label: { minimum: AccessLevel.Planner },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    labels: typeof labelsAbilities;
  }
}

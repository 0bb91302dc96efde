import { defineAbilities, hasProjectLevel } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';
import type { Caller } from '../core/auth.js';

/**
 * Pipeline schedules, as GitLab's project and schedule policies grant them: Reporter reads, Developer
 * creates and runs; editing is the owner's (GitLab's `update_pipeline_schedule`), and deleting or
 * taking over is a Maintainer's or the owner's (`admin_pipeline_schedule`).
 */
export const pipelineSchedulesAbilities = defineAbilities({
  rules: {
    schedule_owner_only: { summary: "only the schedule's owner, administrators included" },
    or_schedule_owner: {
      summary: "the schedule's owner may too, with create_pipeline_schedule",
      floor: { project: 'create_pipeline_schedule' },
    },
  },
  project: {
    read_pipeline_schedule: { minimum: AccessLevel.Reporter },
    create_pipeline_schedule: { minimum: AccessLevel.Developer },
    play_pipeline_schedule: { minimum: AccessLevel.Developer },
    admin_pipeline_schedule: { minimum: AccessLevel.Maintainer },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    pipeline_schedules: typeof pipelineSchedulesAbilities;
  }
}

const owns = (caller: Caller, ownerId: number | null) => caller.user !== null && caller.user.id === ownerId;

/** GitLab's `update_pipeline_schedule`: administrators, or the owner while a Developer. */
export const canUpdateSchedule = (caller: Caller, accessLevel: number, ownerId: number | null) =>
  caller.user?.admin === true ||
  (owns(caller, ownerId) && hasProjectLevel(caller, 'create_pipeline_schedule', accessLevel));

/** GitLab's `admin_pipeline_schedule`: Maintainers, or the owner while a Developer. */
export const canAdminSchedule = (caller: Caller, accessLevel: number, ownerId: number | null) =>
  hasProjectLevel(caller, 'admin_pipeline_schedule', accessLevel) ||
  (owns(caller, ownerId) && hasProjectLevel(caller, 'create_pipeline_schedule', accessLevel));

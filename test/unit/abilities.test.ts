// The catalogue of abilities is filled from the list of families.
import '../../src/families.js';
import { describe, expect, it } from 'vitest';
import {
  authorizeGroup,
  authorizeProject,
  canGroup,
  canProject,
  canSee,
  Visibility,
  type ProjectAbility,
} from '../../src/core/abilities.js';
import type { Caller } from '../../src/core/auth.js';
import { ApiError } from '../../src/core/errors.js';
import { AccessLevel } from '../../src/core/access-level.js';
import type { User } from '../../src/users/user.entity.js';

const user = (attrs: Partial<User> = {}): Caller => ({
  user: { id: 1, admin: false, external: false, state: 'active', ...attrs } as User,
  token: null,
});
const anonymous: Caller = { user: null, token: null };

describe('canSee', () => {
  it.each([
    ['anonymous', anonymous, [true, false, false]],
    ['a user', user(), [true, true, false]],
    ['an external user', user({ external: true }), [true, false, false]],
    ['an administrator', user({ admin: true }), [true, true, true]],
  ] as const)('%s sees public, internal, private non-member subjects: %j', (_who, caller, seen) => {
    const levels = [Visibility.public, Visibility.internal, Visibility.private];
    expect(levels.map((visibilityLevel) => canSee(caller, { visibilityLevel, accessLevel: 0 }))).toEqual(
      seen,
    );
  });

  it('lets a member, or someone with access inside a group, see a private subject', () => {
    expect(canSee(user({ external: true }), { visibilityLevel: 0, accessLevel: AccessLevel.Guest })).toBe(
      true,
    );
    expect(canSee(user(), { visibilityLevel: 0, accessLevel: 0, hasDescendantAccess: true })).toBe(true);
  });
});

describe('project abilities by role', () => {
  const roles = [
    AccessLevel.Guest,
    AccessLevel.Reporter,
    AccessLevel.Developer,
    AccessLevel.Maintainer,
    AccessLevel.Owner,
  ];
  const table: Array<[ProjectAbility, number]> = [
    ['read_project', AccessLevel.Guest],
    ['read_statistics', AccessLevel.Reporter],
    ['read_code', AccessLevel.Reporter],
    ['push_code', AccessLevel.Developer],
    ['admin_project', AccessLevel.Maintainer],
    ['admin_project_member', AccessLevel.Maintainer],
    ['manage_owners', AccessLevel.Owner],
    ['admin_protected_branch', AccessLevel.Maintainer],
    ['admin_project_access_token', AccessLevel.Maintainer],
    ['change_visibility_level', AccessLevel.Owner],
    ['archive_project', AccessLevel.Owner],
    ['remove_project', AccessLevel.Owner],
  ];
  it.each(table)('%s on a private project needs %i', (ability, needed) => {
    for (const accessLevel of roles) {
      expect(canProject(user(), ability, { visibilityLevel: Visibility.private, accessLevel })).toBe(
        accessLevel >= needed,
      );
    }
    expect(canProject(user({ admin: true }), ability, { visibilityLevel: 0, accessLevel: 0 })).toBe(true);
  });

  it('lets anyone who sees a public or internal project read its code, external users too', () => {
    expect(canProject(anonymous, 'read_code', { visibilityLevel: Visibility.public, accessLevel: 0 })).toBe(
      true,
    );
    expect(canProject(user(), 'read_code', { visibilityLevel: Visibility.internal, accessLevel: 0 })).toBe(
      true,
    );
    expect(
      canProject(user({ external: true }), 'read_code', {
        visibilityLevel: Visibility.public,
        accessLevel: 0,
      }),
    ).toBe(true);
    expect(
      canProject(user({ external: true }), 'read_code', {
        visibilityLevel: Visibility.internal,
        accessLevel: 0,
      }),
    ).toBe(false);
  });

  it('makes an archived project read-only, not its settings', () => {
    const archived = { visibilityLevel: 0, accessLevel: AccessLevel.Owner, archived: true };
    expect(canProject(user(), 'push_code', archived)).toBe(false);
    expect(canProject(user(), 'admin_project', archived)).toBe(true);
    expect(canProject(user(), 'read_code', archived)).toBe(true);
  });
});

describe('authorize', () => {
  const failure = (run: () => void) => {
    try {
      run();
    } catch (err) {
      return [(err as ApiError).status, (err as ApiError).body];
    }
    return undefined;
  };

  it('answers 404 naming the resource when it is invisible, 403 when the role is missing', () => {
    const hidden = { visibilityLevel: Visibility.private, accessLevel: 0 };
    const visible = { visibilityLevel: Visibility.public, accessLevel: AccessLevel.Developer };
    expect(failure(() => authorizeProject(user(), 'admin_project', hidden))).toEqual([
      404,
      { message: '404 Project Not Found' },
    ]);
    expect(failure(() => authorizeProject(user(), 'admin_project', visible))).toEqual([
      403,
      { message: '403 Forbidden' },
    ]);
    expect(failure(() => authorizeGroup(user(), 'admin_group', hidden))).toEqual([
      404,
      { message: '404 Group Not Found' },
    ]);
    expect(failure(() => authorizeGroup(user(), 'read_group', visible))).toBeUndefined();
    expect(
      canGroup(user(), 'admin_group_member', { visibilityLevel: 0, accessLevel: AccessLevel.Maintainer }),
    ).toBe(false);
    expect(
      canGroup(user(), 'admin_group_member', { visibilityLevel: 0, accessLevel: AccessLevel.Owner }),
    ).toBe(true);
  });
});

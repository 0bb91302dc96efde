import { describe, expect, it } from 'vitest';
import { Visibility } from '../../src/core/abilities.js';
import '../../src/families.js';
import { canAdminSnippet, canReadSnippet } from '../../src/snippets/abilities.js';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Caller } from '../../src/core/auth.js';
import type { User } from '../../src/users/user.entity.js';

const AUTHOR = 7;
const user = (attrs: Partial<User> = {}): Caller => ({
  user: { id: 1, admin: false, external: false, state: 'active', ...attrs } as User,
  token: null,
});
const callers: Record<string, [Caller, number]> = {
  anonymous: [{ user: null, token: null }, 0],
  user: [user(), 0],
  external: [user({ external: true }), 0],
  guest: [user(), AccessLevel.Guest],
  externalGuest: [user({ external: true }), AccessLevel.Guest],
  maintainer: [user(), AccessLevel.Maintainer],
  author: [user({ id: AUTHOR }), AccessLevel.Reporter],
  admin: [user({ admin: true }), 0],
};

describe('canReadSnippet', () => {
  // Readers of [public, internal, private] snippets, for a project snippet and a personal one.
  it.each([
    ['anonymous', [true, false, false], [true, false, false]],
    ['user', [true, true, false], [true, true, false]],
    ['external', [true, false, false], [true, false, false]],
    ['guest', [true, true, true], [true, true, false]],
    ['externalGuest', [true, true, true], [true, false, false]],
    ['maintainer', [true, true, true], [true, true, false]],
    ['author', [true, true, true], [true, true, true]],
    ['admin', [true, true, true], [true, true, true]],
  ])('%s', (name, inProject, personal) => {
    const [caller, level] = callers[name];
    const levels = [Visibility.public, Visibility.internal, Visibility.private];
    const read = (projectId: number | null) =>
      levels.map((visibilityLevel) =>
        canReadSnippet(caller, { visibilityLevel, authorId: AUTHOR, projectId }, projectId ? level : 0),
      );
    expect(read(3)).toEqual(inProject);
    expect(read(null)).toEqual(personal);
  });
});

describe('canAdminSnippet', () => {
  it.each([
    ['anonymous', false, false],
    ['user', false, false],
    ['guest', false, false],
    ['maintainer', true, false],
    ['author', true, true],
    ['admin', true, true],
  ])('%s: project snippet %s, personal %s', (name, inProject, personal) => {
    const [caller, level] = callers[name];
    expect(canAdminSnippet(caller, { authorId: AUTHOR, projectId: 3 }, level)).toBe(inProject);
    expect(canAdminSnippet(caller, { authorId: AUTHOR, projectId: null }, 0)).toBe(personal);
  });
});

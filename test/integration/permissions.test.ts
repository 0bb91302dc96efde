/**
 * The permission matrix over HTTP: every kind of caller against projects of every visibility, for a
 * read (GET), a write that needs Maintainer (PUT) and an admin action that needs Owner (archive).
 */
import { describe, expect, it } from 'vitest';
import { Visibility, type VisibilityName } from '../../src/core/abilities.js';
import { AccessLevel } from '../../src/core/access-level.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Caller =
  | 'anonymous'
  | 'blocked member'
  | 'outsider'
  | 'external outsider'
  | 'external developer'
  | 'guest'
  | 'reporter'
  | 'developer'
  | 'maintainer'
  | 'owner'
  | 'expired maintainer'
  | 'group maintainer (inherited)'
  | 'shared-group maintainer (capped at developer)'
  | 'admin';

/** The caller's effective role, or how they are not a member. */
const ROLE: Record<Caller, number> = {
  anonymous: 0,
  'blocked member': 0,
  outsider: 0,
  'external outsider': 0,
  'external developer': AccessLevel.Developer,
  guest: AccessLevel.Guest,
  reporter: AccessLevel.Reporter,
  developer: AccessLevel.Developer,
  maintainer: AccessLevel.Maintainer,
  owner: AccessLevel.Owner,
  'expired maintainer': 0,
  'group maintainer (inherited)': AccessLevel.Maintainer,
  'shared-group maintainer (capped at developer)': AccessLevel.Developer,
  admin: AccessLevel.Owner,
};

function canSee(caller: Caller, visibility: VisibilityName): boolean {
  if (caller === 'blocked member') return false;
  if (Visibility[visibility] === Visibility.public) return true;
  if (caller === 'anonymous') return false;
  if (ROLE[caller] > 0) return true;
  return visibility === 'internal' && !caller.startsWith('external');
}

/** What GitLab answers: 401 without valid credentials, 404 when invisible, 403 without the role. */
function expected(caller: Caller, visibility: VisibilityName, needs: number): number {
  if (caller === 'blocked member') return 401;
  if (!canSee(caller, visibility)) return caller === 'anonymous' && needs > 0 ? 401 : 404;
  if (needs === 0) return 200;
  if (caller === 'anonymous') return 401;
  return ROLE[caller] >= needs ? (needs === AccessLevel.Owner ? 201 : 200) : 403;
}

async function setUp(caller: Caller, visibility: VisibilityName) {
  const parent = await server.factories.group({ visibility: 'public' });
  const project = await server.factories.project({ namespace: parent, visibility });
  const member = async (level: number, attrs: { external?: boolean; state?: 'blocked' } = {}) =>
    (await server.factories.memberOf(project, level, attrs)).token;
  switch (caller) {
    case 'anonymous':
      return { project, token: undefined };
    case 'blocked member':
      return { project, token: await member(AccessLevel.Developer, { state: 'blocked' }) };
    case 'outsider':
      return { project, token: (await server.factories.user()).token };
    case 'external outsider':
      return { project, token: (await server.factories.user({ external: true })).token };
    case 'external developer':
      return { project, token: await member(AccessLevel.Developer, { external: true }) };
    case 'expired maintainer': {
      const user = await server.factories.user();
      await server.factories.member(project, user.user, AccessLevel.Maintainer, '2001-01-01');
      return { project, token: user.token };
    }
    case 'group maintainer (inherited)': {
      const user = await server.factories.user();
      await server.factories.member(parent, user.user, AccessLevel.Maintainer);
      return { project, token: user.token };
    }
    case 'shared-group maintainer (capped at developer)': {
      const team = await server.factories.group({ visibility: 'private' });
      const user = await server.factories.user();
      await server.factories.member(team, user.user, AccessLevel.Maintainer);
      await server.factories.share(project, team, AccessLevel.Developer);
      return { project, token: user.token };
    }
    case 'admin':
      return { project, token: (await server.factories.user({ admin: true })).token };
    default:
      return { project, token: await member(ROLE[caller]) };
  }
}

const callers = Object.keys(ROLE) as Caller[];
const visibilities: VisibilityName[] = ['public', 'internal', 'private'];
const actions = [
  { name: 'read', needs: 0, method: 'GET', path: (id: number) => `/projects/${id}` },
  { name: 'write', needs: AccessLevel.Maintainer, method: 'PUT', path: (id: number) => `/projects/${id}` },
  {
    name: 'admin',
    needs: AccessLevel.Owner,
    method: 'POST',
    path: (id: number) => `/projects/${id}/archive`,
  },
] as const;

const matrix = callers.flatMap((caller) => visibilities.map((visibility) => [caller, visibility] as const));

describe('permission matrix: caller × visibility × (read, write, admin)', () => {
  it.each(matrix)('%s on a %s project', async (caller, visibility) => {
    const answers: Record<string, number> = {};
    const wanted: Record<string, number> = {};
    for (const action of actions) {
      // A fresh project per action, so an archive does not change what the next action sees.
      const { project, token } = await setUp(caller, visibility);
      const response = await server.request(action.method, action.path(project.id), {
        token,
        json: action.method === 'PUT' ? { description: 'changed' } : undefined,
      });
      answers[action.name] = response.status;
      wanted[action.name] = expected(caller, visibility, action.needs);
      if (response.status === 404) expect(response.body).toEqual({ message: '404 Project Not Found' });
      if (response.status === 403) expect(response.body).toEqual({ message: '403 Forbidden' });
      if (response.status === 401) expect(response.body).toEqual({ message: '401 Unauthorized' });
    }
    expect(answers).toEqual(wanted);
  });
});

type GroupCaller =
  | 'anonymous'
  | 'outsider'
  | 'external outsider'
  | 'member of a subgroup'
  | 'developer'
  | 'maintainer'
  | 'owner of the parent'
  | 'owner'
  | 'admin';

const GROUP_ROLE: Record<GroupCaller, number> = {
  anonymous: 0,
  outsider: 0,
  'external outsider': 0,
  'member of a subgroup': 0,
  developer: AccessLevel.Developer,
  maintainer: AccessLevel.Maintainer,
  'owner of the parent': AccessLevel.Owner,
  owner: AccessLevel.Owner,
  admin: AccessLevel.Owner,
};

function expectedForGroup(caller: GroupCaller, visibility: VisibilityName, needs: number): number {
  const sees =
    Visibility[visibility] === Visibility.public ||
    (caller !== 'anonymous' &&
      (GROUP_ROLE[caller] > 0 ||
        caller === 'member of a subgroup' ||
        (visibility === 'internal' && caller !== 'external outsider')));
  if (!sees) return caller === 'anonymous' && needs > 0 ? 401 : 404;
  if (needs === 0) return 200;
  if (caller === 'anonymous') return 401;
  return GROUP_ROLE[caller] >= needs ? 200 : 403;
}

async function setUpGroup(caller: GroupCaller, visibility: VisibilityName) {
  const parent = await server.factories.group({ visibility });
  const group = await server.factories.group({ visibility, parent });
  const user =
    caller === 'anonymous'
      ? undefined
      : await server.factories.user({ admin: caller === 'admin', external: caller === 'external outsider' });
  if (user && caller === 'member of a subgroup') {
    const child = await server.factories.group({ visibility, parent: group });
    await server.factories.member(child, user.user, AccessLevel.Developer);
  } else if (user && caller === 'owner of the parent') {
    await server.factories.member(parent, user.user, AccessLevel.Owner);
  } else if (user && caller !== 'admin' && GROUP_ROLE[caller] > 0) {
    await server.factories.member(group, user.user, GROUP_ROLE[caller]);
  }
  return { group, token: user?.token };
}

const groupMatrix = (Object.keys(GROUP_ROLE) as GroupCaller[]).flatMap((caller) =>
  visibilities.map((visibility) => [caller, visibility] as const),
);

describe('permission matrix for groups: caller × visibility × (read, admin)', () => {
  it.each(groupMatrix)('%s on a %s subgroup', async (caller, visibility) => {
    const answers: Record<string, number> = {};
    const wanted: Record<string, number> = {};
    for (const [name, needs, method] of [
      ['read', 0, 'GET'],
      ['admin', AccessLevel.Owner, 'PUT'],
    ] as const) {
      const { group, token } = await setUpGroup(caller, visibility);
      const response = await server.request(method, `/groups/${group.id}`, {
        token,
        json: method === 'PUT' ? { description: 'changed' } : undefined,
      });
      answers[name] = response.status;
      wanted[name] = expectedForGroup(caller, visibility, needs);
      if (response.status === 404) expect(response.body).toEqual({ message: '404 Group Not Found' });
    }
    expect(answers).toEqual(wanted);
  });
});

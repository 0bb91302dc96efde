import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

/** A project in a subgroup, its owner, a group above with a member, a team the owner belongs to, two users. */
async function world() {
  const top = await server.factories.group();
  const group = await server.factories.group({ parent: top });
  const project = await server.factories.project({ namespace: group });
  const owner = await server.factories.user();
  await server.factories.member(group, owner.user, AccessLevel.Owner);
  const inherited = await server.factories.user();
  await server.factories.member(top, inherited.user, AccessLevel.Reporter);
  const team = await server.factories.group();
  await server.factories.member(team, owner.user, AccessLevel.Developer);
  const ada = await server.factories.user();
  return { top, group, project, owner, inherited, team, ada };
}

describe('@gitbeaker/rest', () => {
  it('lists, adds, edits and removes members, and shares projects', async () => {
    const w = await world();
    const api = new Gitlab({ host: server.url, token: w.owner.token });

    const added = await api.ProjectMembers.add(w.project.id, AccessLevel.Reporter, { userId: w.ada.user.id });
    expect(added).toMatchObject({ id: w.ada.user.id, access_level: AccessLevel.Reporter });
    const bea = await server.factories.user();
    const byName = await api.ProjectMembers.add(w.project.id, AccessLevel.Guest, {
      username: bea.user.username,
    });
    expect(byName).toMatchObject({ id: bea.user.id, access_level: AccessLevel.Guest });
    await expect(
      api.ProjectMembers.add(w.project.id, AccessLevel.Guest, { userId: w.inherited.user.id }),
    ).rejects.toMatchObject({ cause: { response: { status: 400 } } });

    const edited = await api.ProjectMembers.edit(w.project.id, w.ada.user.id, AccessLevel.Maintainer, {
      expiresAt: '2099-06-30',
    });
    expect(edited).toMatchObject({ access_level: AccessLevel.Maintainer, expires_at: '2099-06-30' });

    const direct = await api.ProjectMembers.all(w.project.id, { perPage: 1 });
    expect(direct.map((m) => m.id).sort()).toEqual([w.ada.user.id, bea.user.id].sort());
    const all = await api.ProjectMembers.all(w.project.id, { includeInherited: true });
    expect(Object.fromEntries(all.map((m) => [m.id, m.access_level]))).toEqual({
      [w.ada.user.id]: AccessLevel.Maintainer,
      [bea.user.id]: AccessLevel.Guest,
      [w.inherited.user.id]: AccessLevel.Reporter,
      [w.owner.user.id]: AccessLevel.Owner,
    });
    const shown = await api.ProjectMembers.show(w.project.id, w.owner.user.id, { includeInherited: true });
    expect(shown).toMatchObject({ access_level: AccessLevel.Owner });
    const filtered = await api.ProjectMembers.all(w.project.id, {
      includeInherited: true,
      userIds: [w.ada.user.id, w.owner.user.id],
    });
    expect(filtered.map((m) => m.id).sort()).toEqual([w.ada.user.id, w.owner.user.id].sort());

    await api.ProjectMembers.remove(w.project.id, w.ada.user.id);
    await expect(api.ProjectMembers.show(w.project.id, w.ada.user.id)).rejects.toMatchObject({
      cause: { response: { status: 404 } },
    });

    const groupAll = await api.GroupMembers.all(w.group.id, { includeInherited: true });
    expect(groupAll.map((m) => m.id).sort()).toEqual([w.owner.user.id, w.inherited.user.id].sort());
    const groupDirect = await api.GroupMembers.all(w.group.fullPath);
    expect(groupDirect.map((m) => m.id)).toEqual([w.owner.user.id]);

    const link = await api.Projects.share(w.project.id, w.team.id, AccessLevel.Developer, {
      expiresAt: '2099-01-01',
    });
    expect(link).toMatchObject({
      project_id: w.project.id,
      group_id: w.team.id,
      group_access: AccessLevel.Developer,
      expires_at: '2099-01-01',
    });
    await expect(api.Projects.share(w.project.id, w.team.id, AccessLevel.Developer)).rejects.toMatchObject({
      cause: { response: { status: 409 } },
    });
    await api.Projects.unshare(w.project.id, w.team.id);
    await expect(api.Projects.unshare(w.project.id, w.team.id)).rejects.toMatchObject({
      cause: { response: { status: 404 } },
    });
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)('manages members and shares (needs Debian python3-gitlab)', async () => {
    const w = await world();
    // The inherited Reporter is also a project Developer, so the direct list is not empty before the script.
    const bob = w.inherited;
    await server.factories.member(w.project, bob.user, AccessLevel.Developer);
    const args = [w.project.id, w.group.id, w.team.id, w.ada.user.id, bob.user.id].map(String);
    const stdout = await runPythonClient('python_gitlab_members.py', [server.url, w.owner.token, ...args]);
    const result = JSON.parse(stdout.trim());
    const { Reporter, Developer, Maintainer, Owner, Guest } = AccessLevel;
    expect(result).toEqual({
      created: [w.ada.user.id, Reporter, w.ada.user.username],
      direct_before: [
        [Math.min(w.ada.user.id, bob.user.id), w.ada.user.id < bob.user.id ? Reporter : Developer],
        [Math.max(w.ada.user.id, bob.user.id), w.ada.user.id < bob.user.id ? Developer : Reporter],
      ],
      after_save: Developer,
      all_members: {
        [w.ada.user.id]: Developer,
        [bob.user.id]: Developer,
        [w.owner.user.id]: Owner,
      },
      one_inherited: Developer,
      filtered: [w.ada.user.id],
      paged_ids: [w.ada.user.id, bob.user.id, w.owner.user.id].sort((a, b) => a - b),
      paged_total: 3,
      after_delete: [404, '404 Member Not Found'],
      invalid: [400, { access_level: ['is not included in the list'] }],
      group_created: [w.ada.user.id, Guest],
      group_saved: [Maintainer, '2099-01-31'],
      group_direct: [w.owner.user.id, w.ada.user.id].sort((a, b) => a - b),
      group_all: [w.owner.user.id, w.ada.user.id, bob.user.id].sort((a, b) => a - b),
      shared: [[w.team.id, Reporter]],
      again: [409, 'Project already shared with this group'],
      unshared: [],
    });
  });
});

/** Member roles and push rules through the real clients: @gitbeaker/rest and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

async function world() {
  const admin = await server.factories.user({ admin: true });
  const group = await server.factories.group();
  const project = await server.factories.project({
    owner: admin,
    namespace: group,
    initialize_with_readme: true,
  });
  const user = await server.factories.user();
  return { admin, group, project, user };
}

describe('@gitbeaker/rest', () => {
  it('lists and removes group roles (GroupMemberRoles), assigns one (ProjectMembers), and drives ProjectPushRules', async () => {
    const { admin, group, project, user } = await world();
    // Bearer, as the member role endpoints document.
    const api = new Gitlab({ host: server.url, oauthToken: admin.token });
    // gitbeaker's GroupMemberRoles.add posts to the members route; the role is made directly.
    const created = await server.request('POST', `/groups/${group.id}/member_roles`, {
      token: admin.token,
      json: { name: 'Guest + code', base_access_level: AccessLevel.Guest, read_code: true },
    });
    const role = created.body as { id: number };
    const roles = await api.GroupMemberRoles.all(group.id, {});
    expect(roles.map((r) => r.id)).toEqual([role.id]);
    expect(roles[0]).toMatchObject({ group_id: group.id, base_access_level: 10, read_code: true });

    const member = await api.ProjectMembers.add(project.id, AccessLevel.Guest, {
      userId: user.user.id,
      memberRoleId: role.id,
    } as never);
    expect((member as unknown as { member_role: { id: number } }).member_role.id).toBe(role.id);
    const guest = new Gitlab({ host: server.url, token: user.token });
    expect((await guest.Repositories.allRepositoryTrees(project.id)).map((e) => e.name)).toEqual([
      'README.md',
    ]);
    await api.ProjectMembers.remove(project.id, user.user.id);
    await api.GroupMemberRoles.remove(group.id, role.id);
    expect(await api.GroupMemberRoles.all(group.id, {})).toEqual([]);

    const rule = await api.ProjectPushRules.create(project.id, { commitMessageRegex: 'JIRA-\\d+' });
    expect(rule).toMatchObject({ commit_message_regex: 'JIRA-\\d+', deny_delete_tag: false });
    await expect(api.RepositoryFiles.create(project.id, 'a.txt', 'main', 'a\n', 'no ticket')).rejects.toThrow(
      /Commit message does not follow the pattern/,
    );
    expect((await api.ProjectPushRules.edit(project.id, { maxFileSize: 3 })).max_file_size).toBe(3);
    expect((await api.ProjectPushRules.show(project.id)).max_file_size).toBe(3);
    await api.ProjectPushRules.remove(project.id);
    await api.RepositoryFiles.create(project.id, 'a.txt', 'main', 'a\n', 'no ticket');
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'drives member roles (renaming one) and pushrules (needs Debian python3-gitlab)',
    async () => {
      const { admin, group, project, user } = await world();
      const stdout = await runPythonClient('python_gitlab_member_roles.py', [
        server.url,
        admin.token,
        String(group.id),
        String(project.id),
        String(user.user.id),
      ]);
      expect(JSON.parse(stdout.trim())).toEqual({
        role: [group.id, 10, true, false],
        listed: true,
        member_role: true,
        in_use: 400,
        after: [],
        instance: [null, 15],
        renamed: [true, 'Planner extra', 'More'],
        rule: ['JIRA-\\d+', true],
        edited: [5, 'JIRA-\\d+'],
        after_delete: true,
      });
    },
  );
});

/** Cluster agents, feature flags and user lists through the real clients: @gitbeaker/rest and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

async function world() {
  const { project } = await server.factories.ownedProjectWithReadme();
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  return { project, maintainer, api: new Gitlab({ host: server.url, token: maintainer.token }) };
}

describe('@gitbeaker/rest', () => {
  it('registers an agent and drives its tokens (Agents)', async () => {
    const { project, maintainer, api } = await world();
    const agent = await api.Agents.register(project.id, 'beaker');
    expect(agent).toMatchObject({ name: 'beaker', config_project: { id: project.id } });
    expect((await api.Agents.all(project.id)).map((a) => a.name)).toEqual(['beaker']);
    expect((await api.Agents.show(project.id, agent.id)).name).toBe('beaker');
    // gitbeaker 43's Agents.createToken sends a GET (a client bug): GitLab, and forge-api, answer it with
    // the token list. The token is created with a POST, as GitLab documents.
    expect(await api.Agents.createToken(project.id, agent.id, 'kas')).toEqual([]);
    const created = await server.request(
      'POST',
      `/projects/${project.id}/cluster_agents/${agent.id}/tokens`,
      {
        token: maintainer.token,
        json: { name: 'kas', description: 'cluster' },
      },
    );
    const token = created.body as { id: number; token: string };
    expect(token).toMatchObject({ name: 'kas', description: 'cluster', status: 'active' });
    expect(token.token).toMatch(/^glagent-/);
    expect((await api.Agents.allTokens(project.id, agent.id)).map((t) => t.name)).toEqual(['kas']);
    expect(await api.Agents.showToken(project.id, agent.id, token.id)).toHaveProperty('last_used_at', null);
    await api.Agents.removeToken(project.id, agent.id, token.id);
    await expect(api.Agents.showToken(project.id, agent.id, token.id)).rejects.toThrow();
    await api.Agents.unregister(project.id, agent.id);
    expect(await api.Agents.all(project.id)).toEqual([]);
  });

  it('manages user lists and a flag using one (FeatureFlagUserLists, FeatureFlags)', async () => {
    const { project, api } = await world();
    const list = await api.FeatureFlagUserLists.create(project.id, 'beaker-list', 'u1, u2,u1');
    expect(list).toMatchObject({ iid: 1, user_xids: 'u1,u2' });
    expect((await api.FeatureFlagUserLists.all(project.id, { search: 'beaker' })).map((l) => l.name)).toEqual(
      ['beaker-list'],
    );
    expect((await api.FeatureFlagUserLists.edit(project.id, 1, { name: 'renamed' })).name).toBe('renamed');
    expect((await api.FeatureFlagUserLists.show(project.id, 1)).name).toBe('renamed');
    const flag = await api.FeatureFlags.create(project.id, 'beaker-flag', 'new_version_flag', {
      strategies: [
        {
          name: 'gitlabUserList',
          parameters: {},
          userListId: list.id as number,
          scopes: [{ environmentScope: 'production' }],
        },
      ],
    } as never);
    expect(flag.strategies).toMatchObject([{ name: 'gitlabUserList', user_list: { id: list.id } }]);
    expect((await api.FeatureFlags.all(project.id, { scope: 'enabled' })).map((f) => f.name)).toEqual([
      'beaker-flag',
    ]);
    expect((await api.FeatureFlags.edit(project.id, 'beaker-flag', { active: false })).active).toBe(false);
    expect((await api.FeatureFlags.show(project.id, 'beaker-flag')).active).toBe(false);
    await expect(api.FeatureFlagUserLists.remove(project.id, 1)).rejects.toThrow();
    await api.FeatureFlags.remove(project.id, 'beaker-flag');
    await api.FeatureFlagUserLists.remove(project.id, 1);
    expect(await api.FeatureFlagUserLists.all(project.id)).toEqual([]);
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'drives agents, tokens, user lists and flags (needs Debian python3-gitlab)',
    async () => {
      const { project, maintainer } = await world();
      const stdout = await runPythonClient('python_gitlab_agents_flags.py', [
        server.url,
        maintainer.token,
        String(project.id),
      ]);
      expect(JSON.parse(stdout.trim())).toEqual({
        agent: ['python-agent', true],
        agents: ['python-agent'],
        token: [true, 'active'],
        third: [400, 'An agent can have only two active tokens at a time'],
        tokens: ['one', 'two'],
        last_used_at: true,
        revoked: 404,
        list: [1, 'a,b'],
        searched: ['py-other'],
        updated: 'z',
        flag: ['py-flag', 'py-list'],
        in_use: 409,
        flags: ['py-flag'],
        toggled: false,
      });
    },
  );
});

/**
 * Cluster agents and their tokens: register, list, read, delete; the two-token limit; tokens shown once,
 * stored hashed and authenticating the agent server's agent_info (which moves last_used_at); revoked and
 * deleted agents' tokens refused. The seed's agent and token rows are one table below.
 */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { hashToken } from '../../src/core/auth.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

interface World {
  project: Project;
  maintainer: TestUser;
  developer: TestUser;
  reporter: TestUser;
}

async function world(): Promise<World> {
  const { project } = await server.factories.ownedProjectWithReadme({ visibility: 'private' });
  return {
    project,
    maintainer: await server.factories.memberOf(project, AccessLevel.Maintainer),
    developer: await server.factories.memberOf(project, AccessLevel.Developer),
    reporter: await server.factories.memberOf(project, AccessLevel.Reporter),
  };
}

async function call(user: TestUser, method: string, path: string, json?: unknown): Promise<Json> {
  const res = await server.request(method, path, { token: user.token, json });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body as Json;
}

const agents = (w: World) => `/projects/${w.project.id}/cluster_agents`;
const register = (w: World, name = 'production') => call(w.maintainer, 'POST', agents(w), { name });
const tokens = (w: World, agentId: number) => `${agents(w)}/${agentId as number}/tokens`;
const newToken = (w: World, agentId: number, name = 'kas') =>
  call(w.maintainer, 'POST', tokens(w, agentId), { name, description: 'for the cluster' });
const agentInfo = (secret: string) =>
  server.request('GET', '/internal/kubernetes/agent_info', {
    headers: { Authorization: `Bearer ${secret}` },
  });

describe('cluster agents', () => {
  it('registers, lists, reads and deletes an agent, in GitLab’s shape', async () => {
    const w = await world();
    const agent = await register(w);
    expect(agent).toMatchObject({
      name: 'production',
      created_by_user_id: w.maintainer.user.id,
      config_project: { id: w.project.id, name: w.project.name, path: w.project.path },
    });
    expect((agent.config_project as Json).path_with_namespace).toMatch(new RegExp(`/${w.project.path}$`));
    const list = await server.request('GET', agents(w), { token: w.developer.token });
    expect(list.status).toBe(200);
    expect((list.body as Json[]).map((a) => a.id)).toEqual([agent.id]);
    expect(list.headers.get('x-total')).toBe('1');
    expect(await call(w.developer, 'GET', `${agents(w)}/${agent.id as number}`)).toEqual(agent);
    const gone = await server.request('DELETE', `${agents(w)}/${agent.id as number}`, {
      token: w.maintainer.token,
    });
    expect(gone.status).toBe(204);
    const missing = await server.request('GET', `${agents(w)}/${agent.id as number}`, {
      token: w.developer.token,
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Not found' });
  });

  it.each([
    ['', 400, { error: 'name is missing' }],
    ['Production', 400, null],
    ['-prod', 400, null],
    ['prod-', 400, null],
    ['a'.repeat(64), 400, null],
    ['prod-1', 201, null],
  ])('name %j answers %i', async (name, status, body) => {
    const w = await world();
    const res = await server.request('POST', agents(w), {
      token: w.maintainer.token,
      json: name ? { name } : {},
    });
    expect(res.status, res.text).toBe(status);
    if (body) expect(res.body).toEqual(body);
    else if (status === 400)
      expect(res.body).toEqual({
        message: {
          name: ["can contain only lowercase letters, digits, and '-', but cannot start or end with '-'"],
        },
      });
  });

  it('refuses a second agent of the same name in the project', async () => {
    const w = await world();
    await register(w, 'twice');
    const res = await server.request('POST', agents(w), {
      token: w.maintainer.token,
      json: { name: 'twice' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: { name: ['has already been taken'] } });
  });

  it('lets Developer read and only Maintainer write', async () => {
    const w = await world();
    const agent = await register(w);
    const id = agent.id as number;
    const cases: Array<[TestUser, string, string, unknown, number]> = [
      [w.reporter, 'GET', agents(w), undefined, 403],
      [w.developer, 'POST', agents(w), { name: 'dev' }, 403],
      [w.developer, 'DELETE', `${agents(w)}/${id}`, undefined, 403],
      [w.developer, 'POST', tokens(w, id), { name: 't' }, 403],
      [w.developer, 'GET', tokens(w, id), undefined, 200],
    ];
    for (const [user, method, path, json, status] of cases)
      expect(
        (await server.request(method, path, { token: user.token, json })).status,
        `${method} ${path}`,
      ).toBe(status);
  });
});

describe('agent tokens', () => {
  it('shows the secret once, stores only its digest, and lists without last_used_at', async () => {
    const w = await world();
    const agent = await register(w);
    const created = await newToken(w, agent.id as number);
    expect(created).toMatchObject({
      name: 'kas',
      description: 'for the cluster',
      agent_id: agent.id,
      status: 'active',
      created_by_user_id: String(w.maintainer.user.id),
    });
    const secret = created.token as string;
    expect(secret).toMatch(/^glagent-/);
    const [row] = (await server.dataSource.query('SELECT * FROM cluster_agent_tokens WHERE id = $1', [
      created.id,
    ])) as Json[];
    expect(row.token_digest).toBe(hashToken(secret));
    expect(JSON.stringify(row)).not.toContain(secret);
    const listed = (await call(w.developer, 'GET', tokens(w, agent.id as number))) as unknown as Json[];
    expect(listed).toHaveLength(1);
    expect(listed[0]).not.toHaveProperty('last_used_at');
    expect(listed[0]).not.toHaveProperty('token');
    const one = await call(w.developer, 'GET', `${tokens(w, agent.id as number)}/${created.id as number}`);
    expect(one.last_used_at).toBeNull();
    expect(one).not.toHaveProperty('token');
  });

  it('authenticates the agent server’s agent_info and records the use', async () => {
    const w = await world();
    const agent = await register(w);
    const created = await newToken(w, agent.id as number);
    const info = await agentInfo(created.token as string);
    expect(info.status, info.text).toBe(200);
    expect(info.body).toMatchObject({
      project_id: w.project.id,
      agent_id: agent.id,
      agent_name: 'production',
      default_branch: 'main',
      gitaly_repository: {
        storage_name: 'default',
        gl_repository: `project-${w.project.id}`,
        gl_project_path: (agent.config_project as Json).path_with_namespace,
      },
    });
    const relative = ((info.body as Json).gitaly_repository as Json).relative_path as string;
    expect(relative).toMatch(/^@hashed\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}\.git$/);
    const one = await call(w.developer, 'GET', `${tokens(w, agent.id as number)}/${created.id as number}`);
    expect(one.last_used_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    // A personal token is not an agent token, and an agent token is not a personal one.
    expect(
      (await server.request('GET', '/internal/kubernetes/agent_info', { token: w.maintainer.token })).status,
    ).toBe(401);
    expect((await agentInfo(w.maintainer.token)).status).toBe(401);
    expect(
      (
        await server.request('GET', '/user', {
          headers: { Authorization: `Bearer ${created.token as string}` },
        })
      ).status,
    ).toBe(401);
    expect((await server.request('GET', '/internal/kubernetes/agent_info')).status).toBe(401);
  });

  // The seed's "States and transitions" rows for agents and tokens, one case each, plus the transitions
  // they imply (revoking, deleting the agent).
  const ROWS: Array<{
    row: string;
    setup: (w: World, agentId: number) => Promise<{ tokenId?: number; secret?: string }>;
    act: (
      w: World,
      agentId: number,
      ctx: { tokenId?: number; secret?: string },
    ) => Promise<{ status: number; body: unknown }>;
    status: number;
    body?: unknown;
  }> = [
    {
      row: 'Agent token | GET single | status revoked | response 404',
      setup: async (w, agentId) => {
        const t = await newToken(w, agentId);
        await call(w.maintainer, 'DELETE', `${tokens(w, agentId)}/${t.id as number}`);
        return { tokenId: t.id as number, secret: t.token as string };
      },
      act: (w, agentId, { tokenId }) =>
        server.request('GET', `${tokens(w, agentId)}/${tokenId!}`, { token: w.developer.token }),
      status: 404,
      body: { message: '404 Not found' },
    },
    {
      row: 'Agent | create token | agent already has two active tokens | rejected',
      setup: async (w, agentId) => {
        await newToken(w, agentId, 'one');
        await newToken(w, agentId, 'two');
        return {};
      },
      act: (w, agentId) =>
        server.request('POST', tokens(w, agentId), { token: w.maintainer.token, json: { name: 'three' } }),
      status: 400,
      body: { message: 'An agent can have only two active tokens at a time' },
    },
    {
      row: 'Agent | create token | two tokens, one revoked | accepted',
      setup: async (w, agentId) => {
        const one = await newToken(w, agentId, 'one');
        await newToken(w, agentId, 'two');
        await call(w.maintainer, 'DELETE', `${tokens(w, agentId)}/${one.id as number}`);
        return {};
      },
      act: (w, agentId) =>
        server.request('POST', tokens(w, agentId), { token: w.maintainer.token, json: { name: 'three' } }),
      status: 201,
    },
    {
      row: 'Agent token | agent_info | revoked | 401',
      setup: async (w, agentId) => {
        const t = await newToken(w, agentId);
        await call(w.maintainer, 'DELETE', `${tokens(w, agentId)}/${t.id as number}`);
        return { secret: t.token as string };
      },
      act: (_w, _agentId, { secret }) => agentInfo(secret!),
      status: 401,
      body: { message: '401 Unauthorized' },
    },
    {
      row: 'Agent | delete | has an active token | token no longer authenticates',
      setup: async (w, agentId) => {
        const t = await newToken(w, agentId);
        await call(w.maintainer, 'DELETE', `${agents(w)}/${agentId}`);
        return { secret: t.token as string };
      },
      act: (_w, _agentId, { secret }) => agentInfo(secret!),
      status: 401,
    },
    {
      row: 'Agent token | revoke twice | already revoked | 404',
      setup: async (w, agentId) => {
        const t = await newToken(w, agentId);
        await call(w.maintainer, 'DELETE', `${tokens(w, agentId)}/${t.id as number}`);
        return { tokenId: t.id as number };
      },
      act: (w, agentId, { tokenId }) =>
        server.request('DELETE', `${tokens(w, agentId)}/${tokenId!}`, { token: w.maintainer.token }),
      status: 404,
    },
    {
      row: 'Agent token | list | one revoked | only the active one listed',
      setup: async (w, agentId) => {
        const one = await newToken(w, agentId, 'one');
        await newToken(w, agentId, 'two');
        await call(w.maintainer, 'DELETE', `${tokens(w, agentId)}/${one.id as number}`);
        return {};
      },
      act: async (w, agentId) => {
        const res = await server.request('GET', tokens(w, agentId), { token: w.developer.token });
        return { status: res.status, body: (res.body as Json[]).map((t) => [t.name, t.status]) };
      },
      status: 200,
      body: [['two', 'active']],
    },
  ];

  it.each(ROWS)('$row', async ({ setup, act, status, body }) => {
    const w = await world();
    const agent = await register(w);
    const ctx = await setup(w, agent.id as number);
    const res = await act(w, agent.id as number, ctx);
    expect(res.status).toBe(status);
    if (body !== undefined) expect(res.body).toEqual(body);
  });

  it('keeps the limit when two tokens are created at once', async () => {
    const w = await world();
    const agent = await register(w);
    await newToken(w, agent.id as number, 'first');
    const both = await Promise.all(
      ['a', 'b'].map((name) =>
        server.request('POST', tokens(w, agent.id as number), { token: w.maintainer.token, json: { name } }),
      ),
    );
    expect(both.map((r) => r.status).sort()).toEqual([201, 400]);
  });
});

/** FORGE_TIER: below an attribute's declared tier (`x-tier`), forge-api ignores it as a lower GitLab tier does. */
import { describe, expect, it } from 'vitest';
import { useTestServer, type TestServer } from '../helpers/server.js';

const free = useTestServer({ env: { FORGE_TIER: 'free' } });

async function protect(server: TestServer) {
  const owner = await server.factories.user();
  const developer = await server.factories.user();
  const project = await server.factories.project({ owner, initialize_with_readme: true });
  await server.factories.member(project, developer.user, 30);
  const response = await server.request('POST', `/projects/${project.id}/protected_branches`, {
    token: owner.token,
    json: {
      name: 'release/*',
      push_access_level: 40,
      allowed_to_push: [{ user_id: developer.user.id }],
      code_owner_approval_required: true,
    },
  });
  return { response, developer };
}

describe('a Free instance', () => {
  it('ignores the Premium attributes of a protected branch', async () => {
    const { response } = await protect(free);
    expect(response.status).toBe(201);
    const rule = response.body as { push_access_levels: Array<{ user_id: number | null }> } & Record<
      string,
      unknown
    >;
    expect(rule.push_access_levels.map((entry) => entry.user_id)).toEqual([null]);
    expect(rule.code_owner_approval_required).toBe(false);
  });

  it('keeps every attribute of the free tier', async () => {
    const { response } = await protect(free);
    expect((response.body as { name: string }).name).toBe('release/*');
  });
});

describe('the default tier (Ultimate)', () => {
  const ultimate = useTestServer();
  it('honours them', async () => {
    const { response, developer } = await protect(ultimate);
    expect(response.status).toBe(201);
    const rule = response.body as { push_access_levels: Array<{ user_id: number | null }> } & Record<
      string,
      unknown
    >;
    expect(rule.push_access_levels.map((entry) => entry.user_id)).toContain(developer.user.id);
    expect(rule.code_owner_approval_required).toBe(true);
  });
});

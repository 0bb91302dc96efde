/** `mirror_branch_regex` is Premium and Ultimate: a Free instance ignores it, as GitLab's Free tier does. */
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';

const free = useTestServer({ env: { FORGE_TIER: 'free' } });

describe('a Free instance', () => {
  it('ignores mirror_branch_regex on create and update, and leaves it out of the mirror', async () => {
    const { owner, project } = await free.factories.ownedProjectWithReadme();
    const route = `/projects/${project.id}/remote_mirrors`;
    // With only_protected_branches too, which the regex would otherwise conflict with.
    const created = await free.request('POST', route, {
      token: owner.token,
      json: { url: 'https://mirror.invalid/x.git', only_protected_branches: true, mirror_branch_regex: '^a' },
    });
    expect(created.status).toBe(201);
    const mirror = created.body as Record<string, unknown>;
    expect(mirror).not.toHaveProperty('mirror_branch_regex');
    const updated = await free.request('PUT', `${route}/${mirror.id as number}`, {
      token: owner.token,
      json: { mirror_branch_regex: '(' },
    });
    expect(updated.status).toBe(200);
    const rows = (await free.dataSource.query(
      'SELECT mirror_branch_regex FROM remote_mirrors WHERE id = $1',
      [mirror.id],
    )) as Array<{ mirror_branch_regex: string | null }>;
    expect(rows[0].mirror_branch_regex).toBeNull();
  });
});

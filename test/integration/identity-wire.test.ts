/** The identity families take their parameters every way GitLab does: JSON, form fields, or the query alone. */
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

describe('identity writes with parameters in the query string only', () => {
  it('creates a user, a group, a membership and tokens, as GitLab clients may send them', async () => {
    const admin = await server.factories.user({ admin: true });
    const token = admin.token;
    const query = (params: Record<string, string>) => new URLSearchParams(params).toString();

    const user = await server.request(
      'POST',
      `/users?${query({ username: 'query-user', name: 'Query User', email: 'query@example.com', password: 'a-long-password-1' })}`,
      { token, json: {} },
    );
    expect(user.status).toBe(201);
    const userId = (user.body as Json).id as number;

    const group = await server.request(
      'POST',
      `/groups?${query({ name: 'Query Group', path: 'query-group' })}`,
      {
        token,
      },
    );
    expect(group.status).toBe(201);
    expect(group.body).toMatchObject({ full_path: 'query-group', visibility: 'private' });

    const member = await server.request(
      'POST',
      `/groups/query-group/members?${query({ user_id: String(userId), access_level: '30' })}`,
      { token },
    );
    expect(member.status).toBe(201);
    expect(member.body).toMatchObject({ id: userId, access_level: 30 });

    const personal = await server.request(
      'POST',
      `/users/${userId}/personal_access_tokens?name=cli&scopes[]=read_api&scopes[]=read_repository`,
      { token },
    );
    expect(personal.status).toBe(201);
    expect(personal.body).toMatchObject({ name: 'cli', scopes: ['read_api', 'read_repository'] });
    expect((personal.body as Json).token).toMatch(/^glpat-/);

    const groupToken = await server.request(
      'POST',
      `/groups/query-group/access_tokens?${query({ name: 'ci', 'scopes[]': 'api', access_level: '30' })}`,
      { token },
    );
    expect(groupToken.status).toBe(201);
    expect(groupToken.body).toMatchObject({ name: 'ci', access_level: 30, scopes: ['api'] });

    // The new user's token works, and sees the group it was added to.
    const asUser = await server.request('GET', '/groups', { token: (personal.body as Json).token as string });
    expect((asUser.body as Json[]).map((g) => g.full_path)).toEqual(['query-group']);
  });

  it('takes the same writes as form fields', async () => {
    const admin = await server.factories.user({ admin: true });
    const group = await server.request('POST', '/groups', {
      token: admin.token,
      form: { name: 'Form Group', path: 'form-group', visibility: 'internal' },
    });
    expect(group.status).toBe(201);
    expect(group.body).toMatchObject({ full_path: 'form-group', visibility: 'internal' });
    const other = await server.factories.user();
    const member = await server.request('POST', '/groups/form-group/members', {
      token: admin.token,
      form: { user_id: String(other.user.id), access_level: '20', expires_at: '2999-01-01' },
    });
    expect(member.body).toMatchObject({ access_level: 20, expires_at: '2999-01-01' });
  });
});

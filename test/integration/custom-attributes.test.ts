import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

describe('project custom attributes', () => {
  it('are set, listed in key order, read, replaced and deleted by an administrator', async () => {
    const admin = await server.factories.user({ admin: true });
    const project = await server.factories.project();
    const base = `/projects/${project.id}/custom_attributes`;
    const put = (key: string, value: string) =>
      server.request('PUT', `${base}/${key}`, { token: admin.token, json: { value } });

    expect((await put('owner_team', 'platform')).body).toEqual({ key: 'owner_team', value: 'platform' });
    const form = await server.request('PUT', `${base}/cost_center`, {
      token: admin.token,
      form: { value: '4711' },
    });
    expect(form.status).toBe(200);
    expect((await server.request('GET', base, { token: admin.token })).body).toEqual([
      { key: 'cost_center', value: '4711' },
      { key: 'owner_team', value: 'platform' },
    ]);
    expect((await put('cost_center', '4712')).body).toEqual({ key: 'cost_center', value: '4712' });
    expect((await server.request('GET', `${base}/cost_center`, { token: admin.token })).body).toEqual({
      key: 'cost_center',
      value: '4712',
    });

    const deleted = await server.request('DELETE', `${base}/cost_center`, { token: admin.token });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    for (const method of ['GET', 'DELETE']) {
      const gone = await server.request(method, `${base}/cost_center`, { token: admin.token });
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual({ message: '404 Custom Attribute Not Found' });
    }
  });

  it.each([
    ['a project Maintainer', 403],
    ['a signed-in outsider', 403],
    ['an anonymous caller', 401],
  ])('are refused to %s', async (who, status) => {
    const project = await server.factories.project({ visibility: 'public' });
    let token: string | undefined;
    if (who !== 'an anonymous caller') {
      const user = await server.factories.user();
      if (who === 'a project Maintainer')
        await server.factories.member(project, user.user, AccessLevel.Maintainer);
      token = user.token;
    }
    const base = `/projects/${project.id}/custom_attributes`;
    for (const [method, path, json] of [
      ['GET', base, undefined],
      ['GET', `${base}/k`, undefined],
      ['PUT', `${base}/k`, { value: 'v' }],
      ['DELETE', `${base}/k`, undefined],
    ] as const) {
      const response = await server.request(method, path, { token, json });
      expect(response.status, `${method} ${path}`).toBe(status);
    }
  });

  it('need a value, and a project that exists', async () => {
    const admin = await server.factories.user({ admin: true });
    const project = await server.factories.project();
    const missing = await server.request('PUT', `/projects/${project.id}/custom_attributes/k`, {
      token: admin.token,
    });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: 'value is missing' });
    const unknown = await server.request('GET', '/projects/999999/custom_attributes', { token: admin.token });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Project Not Found' });
  });

  it('show in projects and filter the list for administrators only', async () => {
    const admin = await server.factories.user({ admin: true });
    const maintainer = await server.factories.user();
    const tag = Math.random().toString(36).slice(2, 8);
    const tagged = await server.factories.project({ path: `${tag}-tagged`, visibility: 'public' });
    const other = await server.factories.project({ path: `${tag}-other`, visibility: 'public' });
    await server.factories.member(tagged, maintainer.user, AccessLevel.Maintainer);
    await server.services.projectCustomAttributes.set(admin.caller, tagged.id, 'tier', 'gold');
    await server.services.projectCustomAttributes.set(admin.caller, other.id, 'tier', 'silver');

    const single = (token: string) =>
      server
        .request('GET', `/projects/${tagged.id}?with_custom_attributes=true`, { token })
        .then((r) => r.body as Json);
    expect((await single(admin.token)).custom_attributes).toEqual([{ key: 'tier', value: 'gold' }]);
    expect(await single(maintainer.token)).not.toHaveProperty('custom_attributes');

    const list = (token: string, query: string) =>
      server
        .request('GET', `/projects?search=${tag}&${query}`, { token })
        .then((r) => (r.body as Json[]).map((p) => p.id));
    expect(await list(admin.token, 'custom_attributes[tier]=gold')).toEqual([tagged.id]);
    expect(await list(admin.token, 'custom_attributes[tier]=gold&custom_attributes[zone]=eu')).toEqual([]);
    expect((await list(maintainer.token, 'custom_attributes[tier]=gold')).length).toBe(2);
    const withAttributes = await server.request(
      'GET',
      `/projects?search=${tag}&with_custom_attributes=true&order_by=id&sort=asc`,
      {
        token: admin.token,
      },
    );
    expect((withAttributes.body as Json[]).map((p) => p.custom_attributes)).toEqual([
      [{ key: 'tier', value: 'gold' }],
      [{ key: 'tier', value: 'silver' }],
    ]);
  });
});

/** With `FORGE_ALLOW_RUNNER_REGISTRATION_TOKEN=false` registration tokens register nothing; creation still works. */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer({ env: { FORGE_ALLOW_RUNNER_REGISTRATION_TOKEN: 'false' } });

describe('registration tokens turned off', () => {
  it('answers 403 to POST /runners and still creates runners with POST /user/runners', async () => {
    const admin = await server.factories.user({ admin: true });
    const project = await server.factories.project({ owner: admin });
    const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
    const shown = await server.request('GET', `/projects/${project.id}`, { token: maintainer.token });
    const token = (shown.body as { runners_token: string }).runners_token;
    const registered = await server.request('POST', '/runners', { json: { token } });
    expect(registered.status).toBe(403);
    expect(registered.body).toEqual({ message: '403 Forbidden' });
    const created = await server.request('POST', '/user/runners', {
      token: maintainer.token,
      json: { runner_type: 'project_type', project_id: project.id },
    });
    expect(created.status, created.text).toBe(201);
  });
});

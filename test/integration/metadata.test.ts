import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { GITLAB_API_VERSION } from '../../src/metadata/metadata.service.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const root = new URL('../..', import.meta.url);
const packageVersion = (
  JSON.parse(fs.readFileSync(new URL('package.json', root), 'utf8')) as { version: string }
).version;
/** The tests run from the checkout, so the revision is its HEAD, abbreviated as GitLab does. */
const head = execFileSync('git', ['log', '-n', '1', '--format=%h', '--abbrev=11'], { cwd: root })
  .toString()
  .trim();

const expected = {
  version: `${GITLAB_API_VERSION}-forge-${packageVersion}`,
  revision: head,
  kas: { enabled: false, externalUrl: null, externalK8sProxyUrl: null, version: null },
  enterprise: true,
};

describe('GET /metadata and GET /version', () => {
  it.each(['/metadata', '/version'])(
    '%s tells the version, revision, agent server and edition',
    async (path) => {
      const { token } = await server.factories.user();
      const response = await server.request('GET', path, { token });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(response.body).toEqual(expected);
      expect(head).toMatch(/^[0-9a-f]{11}$/);
    },
  );

  it.each([
    { scopes: ['api'], status: 200 },
    { scopes: ['read_api'], status: 200 },
    { scopes: ['read_user'], status: 200 },
    { scopes: ['ai_features'], status: 200 },
    { scopes: ['read_repository'], status: 403 },
    { scopes: ['write_repository', 'read_registry'], status: 403 },
  ])('a token with $scopes gets $status', async ({ scopes, status }) => {
    const { user } = await server.factories.user();
    const token = await server.factories.token(user, scopes);
    for (const path of ['/metadata', '/version']) {
      const response = await server.request('GET', path, { token });
      expect(response.status, path).toBe(status);
      if (status === 403) expect(response.body).toMatchObject({ error: 'insufficient_scope' });
    }
  });

  it('needs a signed-in, active user', async () => {
    expect((await server.request('GET', '/metadata')).status).toBe(401);
    expect((await server.request('GET', '/version', { token: 'glpat-unknown' })).status).toBe(401);
    const blocked = await server.factories.user({ state: 'blocked' });
    expect((await server.request('GET', '/metadata', { token: blocked.token })).status).toBe(401);
  });
});

describe('clients ask for it first', () => {
  it('@gitbeaker/rest Metadata.show()', async () => {
    const { token } = await server.factories.user();
    const api = new Gitlab({ host: server.url, token });
    expect(await api.Metadata.show()).toEqual(expected);
  });

  it.skipIf(!pythonGitlab)('python-gitlab gl.version() (needs Debian python3-gitlab)', async () => {
    const { token } = await server.factories.user();
    const found = JSON.parse(await runPythonClient('python_gitlab_metadata.py', [server.url, token]));
    // Without a token python-gitlab gets 401 and says "unknown", as against GitLab.
    expect(found).toEqual({
      version: expected.version,
      revision: expected.revision,
      anonymous: ['unknown', 'unknown'],
    });
  });
});

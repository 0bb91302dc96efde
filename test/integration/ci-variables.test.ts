/** CI/CD variables of projects, groups and the instance: rules, scopes, hiding, secrecy and inheritance. */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Namespace } from '../../src/namespaces/namespace.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const free = useTestServer({ env: { FORGE_TIER: 'free' } });

type Json = Record<string, unknown>;
let counter = 0;
const uniqueKey = (prefix = 'VAR') => `${prefix}_${Date.now().toString(36).toUpperCase()}_${++counter}`;

async function projectWithMaintainer(namespace?: Namespace) {
  const owner = await server.factories.user({ admin: true });
  const project = await server.factories.project({ owner, namespace });
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  return { project, maintainer, base: `/projects/${project.id}/variables` };
}

async function send(method: string, path: string, token: string, json?: unknown) {
  return server.request(method, path, { token, json });
}

async function created(path: string, token: string, json: Json) {
  const response = await send('POST', path, token, json);
  expect(response.status, response.text).toBe(201);
  return response.body as Json;
}

describe('project variables', () => {
  it('are created with GitLab defaults, listed, read, edited and deleted by a Maintainer', async () => {
    const { base, maintainer } = await projectWithMaintainer();
    const t = maintainer.token;
    const variable = await created(base, t, { key: '  DEPLOY_TOKEN ', value: 'secret value' });
    expect(variable).toEqual({
      variable_type: 'env_var',
      key: 'DEPLOY_TOKEN',
      value: 'secret value',
      hidden: false,
      protected: false,
      masked: false,
      raw: false,
      environment_scope: '*',
      description: null,
    });
    await created(base, t, {
      key: 'KUBECONFIG',
      value: 'apiVersion: v1',
      variable_type: 'file',
      protected: true,
      raw: true,
      environment_scope: 'production',
      description: 'cluster',
    });
    const list = await send('GET', `${base}?per_page=1`, t);
    expect(list.status).toBe(200);
    expect((list.body as Json[]).map((v) => v.key)).toEqual(['DEPLOY_TOKEN']);
    expect(list.headers.get('x-total')).toBe('2');
    const file = await send('GET', `${base}/KUBECONFIG`, t);
    expect(file.body).toMatchObject({
      variable_type: 'file',
      protected: true,
      raw: true,
      description: 'cluster',
    });
    const edited = await send('PUT', `${base}/DEPLOY_TOKEN`, t, { value: 'another', protected: true });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({
      key: 'DEPLOY_TOKEN',
      value: 'another',
      protected: true,
      masked: false,
    });
    expect((await send('DELETE', `${base}/DEPLOY_TOKEN`, t)).status).toBe(204);
    const gone = await send('GET', `${base}/DEPLOY_TOKEN`, t);
    expect([gone.status, gone.body]).toEqual([404, { message: '404 Variable Not Found' }]);
  });

  it('keeps values encrypted in the database', async () => {
    const { project, base, maintainer } = await projectWithMaintainer();
    await created(base, maintainer.token, { key: 'PLAIN', value: 'do-not-store-me-in-clear' });
    const rows: Array<{ encrypted_value: string }> = await server.dataSource.query(
      'SELECT encrypted_value FROM ci_variables WHERE project_id = $1',
      [project.id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].encrypted_value).not.toContain('do-not-store');
    expect(rows[0].encrypted_value).toMatch(/^v1:/);
  });

  const KEY_FORMAT = "can contain only letters, digits and '_'.";
  const MASK = { value: ['is invalid'] };
  const invalid: Array<[string, Json, Json]> = [
    ['a key with a dash', { key: 'MY-KEY', value: 'x' }, { key: [KEY_FORMAT] }],
    ['a key with a dot', { key: 'a.b', value: 'x' }, { key: [KEY_FORMAT] }],
    ['a blank key', { key: '  ', value: 'x' }, { key: ["can't be blank", KEY_FORMAT] }],
    [
      'a key of 256 characters',
      { key: 'K'.repeat(256), value: 'x' },
      { key: ['is too long (maximum is 255 characters)'] },
    ],
    ['a masked value of 7 characters', { key: 'M', value: 'abcdefg', masked: true }, MASK],
    ['a masked value with a space', { key: 'M', value: 'abcd efgh', masked: true }, MASK],
    ['a masked value of two lines', { key: 'M', value: 'abcdefgh\nijkl', masked: true }, MASK],
    [
      'a masked value with a character out of the alphabet',
      { key: 'M', value: 'abcdefgh!', masked: true },
      MASK,
    ],
    ['a masked raw value with a space', { key: 'M', value: 'abcd efgh', masked: true, raw: true }, MASK],
    ['a hidden value that cannot be masked', { key: 'M', value: 'short', masked_and_hidden: true }, MASK],
    [
      'an environment scope with a comma',
      { key: 'S', value: 'x', environment_scope: 'a,b' },
      {
        environment_scope: [
          "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', '*' and spaces",
        ],
      },
    ],
    [
      'a description of 256 characters',
      { key: 'D', value: 'x', description: 'd'.repeat(256) },
      { description: ['is too long (maximum is 255 characters)'] },
    ],
  ];
  it.each(invalid)('refuses %s with GitLab’s message', async (_, body, message) => {
    const { base, maintainer } = await projectWithMaintainer();
    const response = await send('POST', base, maintainer.token, body);
    expect([response.status, response.body]).toEqual([400, { message }]);
  });

  const maskable: Array<[string, Json]> = [
    ['the Base64 alphabet and @:.~-', { value: 'aZ09+/=_@:.~-' }],
    ['any non-space characters when raw', { value: 'p@ss!w0rd#$%', raw: true }],
  ];
  it.each(maskable)('masks a value of %s', async (_, body) => {
    const { base, maintainer } = await projectWithMaintainer();
    const variable = await created(base, maintainer.token, { key: 'MASKED', masked: true, ...body });
    expect(variable).toMatchObject({ masked: true, value: body.value });
  });

  it('refuses a second variable of the same key and scope, and a required parameter missing', async () => {
    const { base, maintainer } = await projectWithMaintainer();
    await created(base, maintainer.token, { key: 'TWICE', value: 'a' });
    const again = await send('POST', base, maintainer.token, { key: 'TWICE', value: 'b' });
    expect([again.status, again.body]).toEqual([
      400,
      { message: { key: ['(TWICE) has already been taken'] } },
    ]);
    await created(base, maintainer.token, { key: 'TWICE', value: 'b', environment_scope: 'staging' });
    const missing = await send('POST', base, maintainer.token, { key: 'NO_VALUE' });
    expect([missing.status, missing.body]).toEqual([400, { error: 'value is missing' }]);
  });

  it('picks a variable of several scopes with filter[environment_scope], else answers 409', async () => {
    const { base, maintainer } = await projectWithMaintainer();
    const t = maintainer.token;
    await created(base, t, { key: 'SCOPED', value: 'everywhere' });
    await created(base, t, { key: 'SCOPED', value: 'prod', environment_scope: 'production' });
    const multiple = {
      message:
        "There are multiple variables with provided parameters. Please use 'filter[environment_scope]'",
    };
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const response = await send(method, `${base}/SCOPED`, t, method === 'PUT' ? { value: 'x' } : undefined);
      expect([method, response.status, response.body]).toEqual([method, 409, multiple]);
    }
    const prod = await send('GET', `${base}/SCOPED?filter[environment_scope]=production`, t);
    expect(prod.body).toMatchObject({ value: 'prod', environment_scope: 'production' });
    const none = await send('GET', `${base}/SCOPED?filter[environment_scope]=staging`, t);
    expect(none.status).toBe(404);
    // gitbeaker sends the filter of an edit in the JSON body.
    const edited = await send('PUT', `${base}/SCOPED`, t, {
      value: 'prod2',
      filter: { environment_scope: 'production' },
    });
    expect(edited.body).toMatchObject({ value: 'prod2', environment_scope: 'production' });
    const moved = await send('PUT', `${base}/SCOPED?filter[environment_scope]=production`, t, {
      environment_scope: '*',
    });
    expect([moved.status, moved.body]).toEqual([
      400,
      { message: { key: ['(SCOPED) has already been taken'] } },
    ]);
    const deleted = await send('DELETE', `${base}/SCOPED?filter%5Benvironment_scope%5D=*`, t);
    expect(deleted.status).toBe(204);
    expect(await send('GET', `${base}/SCOPED`, t)).toMatchObject({ status: 200, body: { value: 'prod2' } });
  });

  it('never shows a masked and hidden value again, and keeps it masked', async () => {
    const { project, base, maintainer } = await projectWithMaintainer();
    const t = maintainer.token;
    const hidden = await created(base, t, {
      key: 'SIGNING_KEY',
      value: 'c2VjcmV0LWtleQ==',
      masked_and_hidden: true,
    });
    expect(hidden).toMatchObject({ value: null, hidden: true, masked: true });
    expect((await send('GET', `${base}/SIGNING_KEY`, t)).body).toMatchObject({ value: null, hidden: true });
    expect(((await send('GET', base, t)).body as Json[])[0]).toMatchObject({ value: null, hidden: true });
    const unmask = await send('PUT', `${base}/SIGNING_KEY`, t, { masked: false });
    expect([unmask.status, unmask.body]).toEqual([
      400,
      { message: { base: ['The visibility setting cannot be changed for masked and hidden variables.'] } },
    ]);
    const replaced = await send('PUT', `${base}/SIGNING_KEY`, t, { value: 'bmV3LXNlY3JldA==' });
    expect(replaced.body).toMatchObject({ value: null, hidden: true, masked: true });
    const passed = await server.services.ciVariables.forPipeline({
      projectId: project.id,
      protectedRef: false,
    });
    expect(passed.filter((v) => v.key === 'SIGNING_KEY')).toEqual([
      {
        key: 'SIGNING_KEY',
        value: 'bmV3LXNlY3JldA==',
        variable_type: 'env_var',
        raw: false,
        masked: true,
        protected: false,
        hidden: true,
      },
    ]);
  });

  it('refuses Developers with 403', async () => {
    const { project, base } = await projectWithMaintainer();
    const developer = await server.factories.memberOf(project, AccessLevel.Developer);
    expect((await send('GET', base, developer.token)).status).toBe(403);
  });
});

describe('group variables and what a pipeline receives', () => {
  it('are managed by the group’s Maintainers, with scopes as for projects', async () => {
    const group = await server.factories.group();
    const maintainer = await server.factories.user();
    await server.factories.member(group, maintainer.user, AccessLevel.Maintainer);
    const base = `/groups/${group.id}/variables`;
    await created(base, maintainer.token, { key: 'G', value: 'a' });
    await created(base, maintainer.token, { key: 'G', value: 'b', environment_scope: 'review/*' });
    expect((await send('GET', `${base}/G`, maintainer.token)).status).toBe(409);
    const review = await send('GET', `${base}/G?filter[environment_scope]=review/*`, maintainer.token);
    expect(review.body).toMatchObject({ value: 'b' });
    const dup = await send('POST', base, maintainer.token, { key: 'G', value: 'c' });
    expect(dup.body).toEqual({ message: { key: ['(G) has already been taken'] } });
    expect((await send('DELETE', `${base}/G?filter[environment_scope]=*`, maintainer.token)).status).toBe(
      204,
    );
    expect(((await send('GET', base, maintainer.token)).body as Json[]).map((v) => v.value)).toEqual(['b']);
  });

  it('ignore the environment scope and its filter below Premium, as GitLab Free does', async () => {
    const group = await free.factories.group();
    const owner = await free.factories.user({ admin: true });
    const base = `/groups/${group.id}/variables`;
    const scoped = await free.request('POST', base, {
      token: owner.token,
      json: { key: 'FREE', value: 'a', environment_scope: 'production' },
    });
    expect(scoped.body).toMatchObject({ key: 'FREE', environment_scope: '*' });
    const again = await free.request('POST', base, {
      token: owner.token,
      json: { key: 'FREE', value: 'b', environment_scope: 'staging' },
    });
    expect(again.body).toEqual({ message: { key: ['(FREE) has already been taken'] } });
    const filtered = await free.request('GET', `${base}/FREE?filter[environment_scope]=staging`, {
      token: owner.token,
    });
    expect(filtered.body).toMatchObject({ value: 'a' });
  });

  it('passes instance, outer group, subgroup and project variables in that order', async () => {
    const admin = await server.factories.user({ admin: true });
    const outer = await server.factories.group();
    const inner = await server.factories.group({ parent: outer });
    const { project, base, maintainer } = await projectWithMaintainer(inner);
    const key = uniqueKey('SHARED');
    await created('/admin/ci/variables', admin.token, { key, value: 'instance' });
    await created(`/groups/${outer.id}/variables`, admin.token, { key, value: 'outer' });
    await created(`/groups/${outer.id}/variables`, admin.token, {
      key: 'OUTER_ONLY',
      value: 'o',
      protected: true,
    });
    await created(`/groups/${inner.id}/variables`, admin.token, { key, value: 'inner' });
    await created(`/groups/${inner.id}/variables`, admin.token, {
      key,
      value: 'inner-prod',
      environment_scope: 'prod*',
    });
    await created(base, maintainer.token, { key, value: 'project', environment_scope: 'production' });
    await created(base, maintainer.token, { key: 'FILE', value: 'f', variable_type: 'file', raw: true });
    // An unrelated group's variable never reaches the project.
    const other = await server.factories.group();
    await created(`/groups/${other.id}/variables`, admin.token, { key, value: 'other' });

    const forPipeline = (protectedRef: boolean, environment?: string | null) =>
      server.services.ciVariables.forPipeline({ projectId: project.id, protectedRef, environment });
    const pairs = (vars: Array<{ key: string; value: string }>) =>
      vars.filter((v) => [key, 'OUTER_ONLY', 'FILE'].includes(v.key)).map((v) => `${v.key}=${v.value}`);
    expect(pairs(await forPipeline(false))).toEqual([
      `${key}=instance`,
      `${key}=outer`,
      `${key}=inner`,
      'FILE=f',
    ]);
    expect(pairs(await forPipeline(true, 'production'))).toEqual([
      `${key}=instance`,
      `${key}=outer`,
      'OUTER_ONLY=o',
      `${key}=inner`,
      `${key}=inner-prod`,
      // Within the project, `*` before the more specific `production`.
      'FILE=f',
      `${key}=project`,
    ]);
    expect(pairs(await forPipeline(false, 'staging'))).toEqual([
      `${key}=instance`,
      `${key}=outer`,
      `${key}=inner`,
      'FILE=f',
    ]);
    const file = (await forPipeline(false)).find((v) => v.key === 'FILE');
    expect(file).toMatchObject({ variable_type: 'file', raw: true, masked: false, protected: false });
    await server.dataSource.transaction(async (tx) => {
      const inTx = await server.services.ciVariables.forPipeline(
        { projectId: project.id, protectedRef: false },
        tx,
      );
      expect(inTx.length).toBeGreaterThan(0);
    });
  });
});

describe('instance variables', () => {
  async function admin(): Promise<TestUser> {
    return server.factories.user({ admin: true });
  }

  it('are the administrators’: a key once, no scopes, and a value of at most 10,000 characters', async () => {
    const root = await admin();
    const user = await server.factories.user();
    expect((await send('GET', '/admin/ci/variables', user.token)).status).toBe(403);
    expect((await server.request('GET', '/admin/ci/variables')).status).toBe(401);
    const key = uniqueKey('INSTANCE');
    const variable = await created('/admin/ci/variables', root.token, { key, value: 'v', description: 'd' });
    expect(variable).toEqual({
      variable_type: 'env_var',
      key,
      value: 'v',
      hidden: false,
      protected: false,
      masked: false,
      raw: false,
      description: 'd',
    });
    const again = await send('POST', '/admin/ci/variables', root.token, { key, value: 'w' });
    expect(again.body).toEqual({ message: { key: [`(${key}) has already been taken`] } });
    const long = await send('PUT', `/admin/ci/variables/${key}`, root.token, { value: 'x'.repeat(10_001) });
    expect(long.body).toEqual({
      message: { value: ['The value of the provided variable exceeds the 10000 character limit'] },
    });
    const edited = await send('PUT', `/admin/ci/variables/${key}`, root.token, { value: 'w', masked: false });
    expect(edited.body).toMatchObject({ key, value: 'w' });
    expect((await send('GET', `/admin/ci/variables/${key}`, root.token)).body).toMatchObject({ value: 'w' });
    expect((await send('DELETE', `/admin/ci/variables/${key}`, root.token)).status).toBe(204);
    expect((await send('GET', `/admin/ci/variables/${key}`, root.token)).status).toBe(404);
  });

  it('stop at the plan limit ci_instance_level_variables, and 0 lifts it', async () => {
    const root = await admin();
    const count = ((await send('GET', '/admin/ci/variables?per_page=100', root.token)).body as Json[]).length;
    const setLimit = async (limit: number) => {
      const response = await send('PUT', '/application/plan_limits', root.token, {
        plan_name: 'default',
        ci_instance_level_variables: limit,
      });
      expect(response.status).toBe(200);
    };
    try {
      await setLimit(count + 1);
      await created('/admin/ci/variables', root.token, { key: uniqueKey('LIMITED'), value: 'a' });
      const refused = await send('POST', '/admin/ci/variables', root.token, {
        key: uniqueKey('OVER'),
        value: 'b',
      });
      expect([refused.status, refused.body]).toEqual([
        400,
        { message: { base: [`Maximum number of ci instance level variables (${count + 1}) exceeded`] } },
      ]);
      await setLimit(0);
      await created('/admin/ci/variables', root.token, { key: uniqueKey('UNLIMITED'), value: 'c' });
    } finally {
      await setLimit(25);
    }
  });
});

/** Pipeline trigger tokens: their API, who sees the whole token, and starting pipelines with them. */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { PipelineTrigger } from '../../src/pipeline_triggers/trigger.entity.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
type Json = Record<string, unknown>;

const CI = 'build:\n  script: echo "$DEPLOY"\n';

/** A private project with a CI configuration on `main`, and a Maintainer's trigger token. */
async function withTrigger() {
  const w = await world();
  const commit = await server.request('POST', `/projects/${w.project.id}/repository/commits`, {
    token: w.maintainer.token,
    json: {
      branch: 'main',
      commit_message: 'CI',
      actions: [{ action: 'create', file_path: '.gitlab-ci.yml', content: CI }],
    },
  });
  expect(commit.status, commit.text).toBe(201);
  const created = await server.request('POST', w.base, {
    token: w.maintainer.token,
    json: { description: 'ci' },
  });
  return { ...w, trigger: created.body as Json, run: `/projects/${w.project.id}/trigger/pipeline` };
}

async function world() {
  const { owner, project } = await server.factories.ownedProjectWithReadme();
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  const other = await server.factories.memberOf(project, AccessLevel.Maintainer);
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  return { owner, project, maintainer, other, developer, base: `/projects/${project.id}/triggers` };
}

describe('starting pipelines with a trigger token', () => {
  it('creates a trigger pipeline as the owner, with the variables and TRIGGER_PAYLOAD, and no user token', async () => {
    const { project, maintainer, trigger, run, base } = await withTrigger();
    const res = await server.request('POST', run, {
      json: { token: trigger.token, ref: 'main', variables: { DEPLOY: 'yes' } },
    });
    expect(res.status, res.text).toBe(201);
    const pipeline = res.body as Json;
    expect(pipeline).toMatchObject({
      project_id: project.id,
      ref: 'main',
      source: 'trigger',
      user: { id: maintainer.user.id },
    });
    const variables = await server.request(
      'GET',
      `/projects/${project.id}/pipelines/${pipeline.id as number}/variables`,
      {
        token: maintainer.token,
      },
    );
    expect(variables.body).toEqual([
      { key: 'DEPLOY', value: 'yes', variable_type: 'env_var', raw: false },
      {
        key: 'TRIGGER_PAYLOAD',
        value: JSON.stringify({ ref: 'main', id: String(project.id), variables: { DEPLOY: 'yes' } }),
        variable_type: 'file',
        raw: false,
      },
    ]);
    const read = await server.request('GET', `${base}/${trigger.id as number}`, { token: maintainer.token });
    expect((read.body as Json).last_used).not.toBeNull();
  });

  it('reads the parameters from a form and from the query, with bracketed variables', async () => {
    const { trigger, run, project } = await withTrigger();
    const form = await server.request('POST', run, {
      form: { token: trigger.token as string, ref: 'main', 'variables[DEPLOY]': 'form' },
    });
    expect(form.status, form.text).toBe(201);
    const query = await server.request(
      'POST',
      `/projects/${project.id}/trigger/pipeline?token=${trigger.token as string}&ref=main&variables%5BDEPLOY%5D=query`,
      { json: {} },
    );
    expect(query.status, query.text).toBe(201);
    expect((query.body as Json).source).toBe('trigger');
  });

  it.each([
    [
      'an unknown token',
      (t: Json) => ({ token: `${t.token as string}x`, ref: 'main' }),
      404,
      { message: '404 Not Found' },
    ],
    ['no ref', (t: Json) => ({ token: t.token }), 400, { error: 'ref is missing' }],
    ['no token', () => ({ ref: 'main' }), 400, { error: 'token is missing' }],
    [
      'variables that are not strings',
      (t: Json) => ({ token: t.token, ref: 'main', variables: { A: 1 } }),
      400,
      { message: 'variables needs to be a map of key-valued strings' },
    ],
    [
      'a ref that does not exist',
      (t: Json) => ({ token: t.token, ref: 'nope' }),
      400,
      { message: { base: ['Reference not found'] } },
    ],
  ])('refuses %s', async (_what, json, status, body) => {
    const { trigger, run } = await withTrigger();
    const res = await server.request('POST', run, { json: json(trigger) });
    expect(res.status).toBe(status);
    expect(res.body).toEqual(body);
  });

  it("answers 404 for another project's token and for a blocked owner", async () => {
    const first = await withTrigger();
    const second = await withTrigger();
    const crossed = await server.request('POST', second.run, {
      json: { token: first.trigger.token, ref: 'main' },
    });
    expect(crossed.status).toBe(404);
    expect(crossed.body).toEqual({ message: '404 Not Found' });
    await server.dataSource.query(`UPDATE users SET state = 'blocked' WHERE id = $1`, [
      first.maintainer.user.id,
    ]);
    const blocked = await server.request('POST', first.run, {
      json: { token: first.trigger.token, ref: 'main' },
    });
    expect(blocked.status).toBe(404);
  });
});

describe('the trigger token API', () => {
  it('creates, lists, reads, edits and deletes tokens, whole only for their owner', async () => {
    const { project, maintainer, other, base } = await world();
    const created = await server.request('POST', base, {
      token: maintainer.token,
      json: { description: 'nightly' },
    });
    expect(created.status, created.text).toBe(201);
    const trigger = created.body as Json;
    expect(trigger).toMatchObject({
      description: 'nightly',
      last_used: null,
      owner: { id: maintainer.user.id, username: maintainer.user.username },
    });
    expect(trigger.token).toMatch(/^glptt-[A-Za-z0-9_-]{20}$/);

    // Stored sealed and as a digest, never in the clear.
    const row = await server.dataSource
      .getRepository(PipelineTrigger)
      .findOneByOrFail({ id: trigger.id as number });
    expect(row.tokenEncrypted).not.toContain(trigger.token as string);
    expect(row.tokenDigest).toMatch(/^[0-9a-f]{64}$/);

    const mine = await server.request('GET', base, { token: maintainer.token });
    expect(mine.status).toBe(200);
    expect(mine.headers.get('x-total')).toBe('1');
    expect((mine.body as Json[])[0].token).toBe(trigger.token);
    const theirs = await server.request('GET', `${base}/${trigger.id as number}`, { token: other.token });
    expect(theirs.status).toBe(200);
    expect((theirs.body as Json).token).toBe((trigger.token as string).slice(0, 4));

    const refused = await server.request('PUT', `${base}/${trigger.id as number}`, {
      token: other.token,
      json: { description: 'mine now' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      message: '403 Forbidden - The current user is not authorized to update the pipeline trigger token',
    });
    const edited = await server.request('PUT', `${base}/${trigger.id as number}`, {
      token: maintainer.token,
      form: { description: 'nightly (main)' },
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ description: 'nightly (main)', token: trigger.token });

    // Another Maintainer may delete it.
    const deleted = await server.request('DELETE', `${base}/${trigger.id as number}`, { token: other.token });
    expect(deleted.status).toBe(204);
    const gone = await server.request('GET', `${base}/${trigger.id as number}`, { token: maintainer.token });
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ message: '404 Not found' });
    expect(project.id).toBeGreaterThan(0);
  });

  it.each([
    ['a Developer', 'developer', 403],
    ['an outsider', 'outsider', 404],
  ] as const)('refuses %s', async (_what, who, status) => {
    const { base, developer } = await world();
    const caller = who === 'developer' ? developer : await server.factories.user();
    const res = await server.request('GET', base, { token: caller.token });
    expect(res.status).toBe(status);
  });

  it('needs a description', async () => {
    const { base, maintainer } = await world();
    const res = await server.request('POST', base, { token: maintainer.token, json: {} });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'description is missing' });
  });

  it('pages the list', async () => {
    const { base, maintainer } = await world();
    for (const description of ['a', 'b', 'c'])
      await server.request('POST', base, { token: maintainer.token, json: { description } });
    const page = await server.request('GET', `${base}?per_page=2&page=2`, { token: maintainer.token });
    expect(page.status).toBe(200);
    expect((page.body as Json[]).map((t) => t.description)).toEqual(['c']);
    expect(page.headers.get('x-total')).toBe('3');
  });
});

/** Pipeline schedules: the API, their rules, their variables, and their runs from the queue. */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { PipelineScheduleVariable } from '../../src/pipeline_schedules/pipeline-schedule.entity.js';
import { queueSchema } from '../../src/core/queue.js';
import { useTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const server = useTestServer();
const limited = useTestServer({ env: { FORGE_RATE_LIMITS: 'play_pipeline_schedule=1/60' } });
type Json = Record<string, unknown>;

async function world() {
  const { owner, project } = await server.factories.ownedProjectWithReadme();
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const other = await server.factories.memberOf(project, AccessLevel.Developer);
  const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
  const base = `/projects/${project.id}/pipeline_schedules`;
  return { owner, project, maintainer, developer, other, reporter, base };
}

async function schedule(base: string, token: string, json: Json = {}) {
  const res = await server.request('POST', base, {
    token,
    json: { description: 'nightly', ref: 'main', cron: '0 1 * * *', ...json },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as Json;
}

describe('the pipeline schedule API', () => {
  it('creates, lists, reads, edits and deletes schedules', async () => {
    const { developer, reporter, base } = await world();
    const created = await schedule(base, developer.token, { cron_timezone: 'Asia/Tokyo' });
    expect(created).toMatchObject({
      description: 'nightly',
      ref: 'main',
      cron: '0 1 * * *',
      cron_timezone: 'Asia/Tokyo',
      active: true,
      owner: { id: developer.user.id },
      variables: [],
    });
    // 01:00 in Tokyo is 16:00 UTC.
    const next = new Date(created.next_run_at as string);
    expect(next.getUTCHours()).toBe(16);
    expect(next.getTime()).toBeGreaterThan(Date.now());

    const listed = await server.request('GET', base, { token: reporter.token });
    expect(listed.status).toBe(200);
    expect((listed.body as Json[]).map((s) => s.id)).toEqual([created.id]);
    expect((listed.body as Json[])[0]).not.toHaveProperty('variables');
    // A Reporter reads the schedule but not its variables.
    const read = await server.request('GET', `${base}/${created.id as number}`, { token: reporter.token });
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('variables');

    const edited = await server.request('PUT', `${base}/${created.id as number}`, {
      token: developer.token,
      form: { cron: '*/5 * * * *', active: 'false' },
    });
    expect(edited.status, edited.text).toBe(200);
    expect(edited.body).toMatchObject({ cron: '*/5 * * * *', active: false, next_run_at: null });
    const inactive = await server.request('GET', `${base}?scope=inactive`, { token: reporter.token });
    expect((inactive.body as Json[]).map((s) => s.id)).toEqual([created.id]);
    const active = await server.request('GET', `${base}?scope=active`, { token: reporter.token });
    expect(active.body).toEqual([]);

    const deleted = await server.request('DELETE', `${base}/${created.id as number}`, {
      token: developer.token,
    });
    expect(deleted.status).toBe(204);
    const gone = await server.request('GET', `${base}/${created.id as number}`, { token: developer.token });
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ message: '404 Pipeline Schedule Not Found' });
  });

  it.each([
    ['a cron it cannot read', { cron: 'every day' }, { cron: ['syntax is invalid'] }],
    ['a cron with seconds', { cron: '0 0 1 * * *' }, { cron: ['syntax is invalid'] }],
    ['an unknown time zone', { cron_timezone: 'Mars/Olympus' }, { cron_timezone: ['syntax is invalid'] }],
    ['an empty description', { description: '' }, { description: ["can't be blank"] }],
  ])('refuses %s', async (_what, json, message) => {
    const { developer, base } = await world();
    const res = await server.request('POST', base, {
      token: developer.token,
      json: { description: 'nightly', ref: 'main', cron: '0 1 * * *', ...json },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message });
  });

  it('needs description, ref and cron', async () => {
    const { developer, base } = await world();
    const res = await server.request('POST', base, {
      token: developer.token,
      json: { description: 'x', ref: 'main' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'cron is missing' });
  });

  it('lets only the owner edit, and Maintainers or the owner delete and take over', async () => {
    const { developer, other, maintainer, base } = await world();
    const created = await schedule(base, developer.token);
    const path = `${base}/${created.id as number}`;
    for (const who of [other, maintainer]) {
      const res = await server.request('PUT', path, { token: who.token, json: { description: 'theirs' } });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: '403 Forbidden' });
    }
    const refused = await server.request('POST', `${path}/take_ownership`, { token: other.token });
    expect(refused.status).toBe(403);
    const taken = await server.request('POST', `${path}/take_ownership`, { token: maintainer.token });
    expect(taken.status).toBe(201);
    expect(taken.body).toMatchObject({ owner: { id: maintainer.user.id } });
    const again = await server.request('POST', `${path}/take_ownership`, { token: maintainer.token });
    expect(again.status).toBe(200);
    const edited = await server.request('PUT', path, {
      token: maintainer.token,
      json: { description: 'mine' },
    });
    expect(edited.status).toBe(200);
    // The former owner, no longer owning it, may neither edit nor delete it.
    expect((await server.request('PUT', path, { token: developer.token, json: {} })).status).toBe(403);
    expect((await server.request('DELETE', path, { token: developer.token })).status).toBe(403);
  });

  it('keeps variables encrypted and shows them to whoever manages the schedule', async () => {
    const { developer, other, base } = await world();
    const created = await schedule(base, developer.token);
    const vars = `${base}/${created.id as number}/variables`;
    const added = await server.request('POST', vars, {
      token: developer.token,
      form: { key: 'DEPLOY_ENV', value: 'staging' },
    });
    expect(added.status, added.text).toBe(201);
    expect(added.body).toEqual({ key: 'DEPLOY_ENV', value: 'staging', variable_type: 'env_var', raw: false });
    const row = await server.dataSource
      .getRepository(PipelineScheduleVariable)
      .findOneByOrFail({ key: 'DEPLOY_ENV' });
    expect(row.valueEncrypted).not.toContain('staging');

    const duplicate = await server.request('POST', vars, {
      token: developer.token,
      json: { key: 'DEPLOY_ENV', value: 'x' },
    });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body).toEqual({ message: { key: ['(DEPLOY_ENV) has already been taken'] } });
    const badKey = await server.request('POST', vars, {
      token: developer.token,
      json: { key: 'NO-DASH', value: 'x' },
    });
    expect(badKey.status).toBe(400);
    expect(badKey.body).toEqual({ message: { key: ["can contain only letters, digits and '_'."] } });

    const updated = await server.request('PUT', `${vars}/DEPLOY_ENV`, {
      token: developer.token,
      json: { value: 'production', variable_type: 'file' },
    });
    expect(updated.body).toEqual({
      key: 'DEPLOY_ENV',
      value: 'production',
      variable_type: 'file',
      raw: false,
    });
    const read = await server.request('GET', `${vars}/DEPLOY_ENV`, { token: developer.token });
    expect(read.status).toBe(200);
    const theirs = await server.request('GET', `${vars}/DEPLOY_ENV`, { token: other.token });
    expect(theirs.status).toBe(403);
    const details = await server.request('GET', `${base}/${created.id as number}`, {
      token: developer.token,
    });
    expect((details.body as Json).variables).toEqual([updated.body]);

    const removed = await server.request('DELETE', `${vars}/DEPLOY_ENV`, { token: developer.token });
    expect(removed.status).toBe(202);
    expect(removed.body).toMatchObject({ key: 'DEPLOY_ENV' });
    const missing = await server.request('GET', `${vars}/DEPLOY_ENV`, { token: developer.token });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Pipeline Schedule Variable Not Found' });
  });

  it('bounds the schedules of a project by the plan limit', async () => {
    const { developer, base } = await world();
    const admin = await server.factories.user({ admin: true });
    const setLimit = (n: number) =>
      server.request('PUT', '/application/plan_limits', {
        token: admin.token,
        json: { plan_name: 'default', ci_pipeline_schedules: n },
      });
    expect((await setLimit(2)).status).toBe(200);
    try {
      for (const description of ['a', 'b']) await schedule(base, developer.token, { description });
      const res = await server.request('POST', base, {
        token: developer.token,
        json: { description: 'one too many', ref: 'main', cron: '0 1 * * *' },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        message: { base: ['Maximum number of ci pipeline schedules (2) exceeded'] },
      });
    } finally {
      await setLimit(10);
    }
  });
});

/** A project with a CI configuration on `main`, and a schedule of its Developer's with a variable. */
async function scheduled(json: Json = {}) {
  const w = await world();
  const commit = await server.request('POST', `/projects/${w.project.id}/repository/commits`, {
    token: w.maintainer.token,
    json: {
      branch: 'main',
      commit_message: 'CI',
      actions: [
        { action: 'create', file_path: '.gitlab-ci.yml', content: 'build:\n  script: echo "$TARGET"\n' },
      ],
    },
  });
  expect(commit.status, commit.text).toBe(201);
  const created = await schedule(w.base, w.developer.token, { ref: 'refs/heads/main', ...json });
  const path = `${w.base}/${created.id as number}`;
  const variable = await server.request('POST', `${path}/variables`, {
    token: w.developer.token,
    json: { key: 'TARGET', value: 'nightly' },
  });
  expect(variable.status).toBe(201);
  return { ...w, created, path };
}

const schedulePipelines = async (path: string, token: string) =>
  (await server.request('GET', `${path}/pipelines`, { token })).body as Json[];

describe('running pipeline schedules', () => {
  it('enqueues the next run at next_run_at in the transaction that creates the schedule', async () => {
    const { created } = await scheduled();
    const schema = await queueSchema(server.dataSource);
    const jobs = (await server.dataSource.query(
      `SELECT data, start_after FROM ${schema}.job WHERE name = 'pipeline_schedules.run' AND data->>'scheduleId' = $1`,
      [String(created.id)],
    )) as Array<{ data: Json; start_after: Date }>;
    expect(jobs).toHaveLength(1);
    expect(jobs[0].data).toEqual({ scheduleId: created.id, at: created.next_run_at });
    expect(new Date(jobs[0].start_after).toISOString()).toBe(created.next_run_at);
  });

  it('creates the due pipeline as the owner with the schedule variables, and moves to the next run once', async () => {
    const { created, path, developer, reporter, project } = await scheduled({ cron: '*/5 * * * *' });
    const at = created.next_run_at as string;
    await server.services.pipelineSchedules.run(created.id as number, at);
    // The same run again (the queue retried it) does nothing: the schedule has moved on.
    await server.services.pipelineSchedules.run(created.id as number, at);
    const pipelines = await schedulePipelines(path, reporter.token);
    expect(pipelines).toHaveLength(1);
    expect(pipelines[0]).toMatchObject({ source: 'schedule', ref: 'main' });
    const detail = await server.request(
      'GET',
      `/projects/${project.id}/pipelines/${pipelines[0].id as number}`,
      {
        token: reporter.token,
      },
    );
    expect(detail.body).toMatchObject({ user: { id: developer.user.id } });
    // The schedule's variables are the pipeline's, but the pipeline variables endpoint does not list them.
    const variables = await server.request(
      'GET',
      `/projects/${project.id}/pipelines/${pipelines[0].id as number}/variables`,
      {
        token: developer.token,
      },
    );
    expect(variables.body).toEqual([]);
    const after = (await server.request('GET', path, { token: reporter.token })).body as Json;
    expect(Date.parse(after.next_run_at as string)).toBeGreaterThan(Date.parse(at));
    expect(after.last_pipeline).toMatchObject({ id: pipelines[0].id, source: 'schedule' });
  });

  it('runs nothing for an inactive, an edited or a deleted schedule', async () => {
    const { created, path, developer } = await scheduled();
    const at = created.next_run_at as string;
    await server.request('PUT', path, { token: developer.token, json: { active: false } });
    await server.services.pipelineSchedules.run(created.id as number, at);
    await server.request('PUT', path, { token: developer.token, json: { active: true, cron: '15 3 * * *' } });
    await server.services.pipelineSchedules.run(created.id as number, at);
    expect(await schedulePipelines(path, developer.token)).toEqual([]);
    await server.request('DELETE', path, { token: developer.token });
    await expect(
      server.services.pipelineSchedules.run(created.id as number, null, developer.user.id),
    ).resolves.toBeUndefined();
  });

  it('plays a schedule now, as the caller, through the queue, leaving next_run_at alone', async () => {
    const { created, path, maintainer, reporter } = await scheduled({ active: false });
    const refused = await server.request('POST', `${path}/play`, { token: reporter.token });
    expect(refused.status).toBe(403);
    const played = await server.request('POST', `${path}/play`, { token: maintainer.token });
    expect(played.status).toBe(201);
    expect(played.body).toEqual({ message: '201 Created' });
    const pipelines = await waitFor(
      () => schedulePipelines(path, maintainer.token),
      (list) => list.length > 0,
    );
    expect(pipelines).toHaveLength(1);
    const detail = await server.request('GET', path, { token: maintainer.token });
    expect(detail.body).toMatchObject({ next_run_at: null, last_pipeline: { id: pipelines[0].id } });
    expect(created.id).toBeDefined();
  });
});

describe('the play rate limit', () => {
  it('answers 429 past the configured play_pipeline_schedule limit', async () => {
    const { project } = await limited.factories.ownedProjectWithReadme();
    const developer = await limited.factories.memberOf(project, AccessLevel.Developer);
    const base = `/projects/${project.id}/pipeline_schedules`;
    const created = await limited.request('POST', base, {
      token: developer.token,
      json: { description: 'nightly', ref: 'main', cron: '0 1 * * *', active: false },
    });
    const play = () =>
      limited.request('POST', `${base}/${(created.body as Json).id as number}/play`, {
        token: developer.token,
      });
    expect((await play()).status).toBe(201);
    const again = await play();
    expect(again.status).toBe(429);
    expect(again.headers.get('retry-after')).toBeTruthy();
  });
});

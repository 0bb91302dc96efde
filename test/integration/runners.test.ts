/** Runners: creation and registration, the runner's own token, the users' runner API, limits. */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { hashToken } from '../../src/core/auth.js';
import { pipelineHelpers } from '../helpers/pipelines.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const { commit, pipelineFor, jobsOf, run } = pipelineHelpers(server);
type Json = Record<string, unknown>;

async function world() {
  const admin = await server.factories.user({ admin: true });
  const group = await server.factories.group();
  const project = await server.factories.project({ owner: admin, namespace: group });
  const other = await server.factories.project({ owner: admin, namespace: group });
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  await server.factories.member(other, maintainer.user, AccessLevel.Maintainer);
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const owner = await server.factories.memberOf(group, AccessLevel.Owner);
  const groupMaintainer = await server.factories.memberOf(group, AccessLevel.Maintainer);
  const outsider = await server.factories.user();
  return { admin, group, project, other, maintainer, developer, owner, groupMaintainer, outsider };
}

async function createRunner(token: string, body: Json) {
  const res = await server.request('POST', '/user/runners', { token, json: body });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: number; token: string; token_expires_at: string | null };
}

describe('POST /user/runners', () => {
  it('creates runners of each type for who GitLab lets, keeping only the digest of the token', async () => {
    const w = await world();
    const project = await createRunner(w.maintainer.token, {
      runner_type: 'project_type',
      project_id: w.project.id,
      description: 'box',
      tag_list: 'linux, docker',
      paused: true,
      maximum_timeout: 3600,
      access_level: 'ref_protected',
    });
    expect(project.token).toMatch(/^glrt-/);
    expect(project.token_expires_at).toBeNull();
    const rows: Array<{ token_digest: string }> = await server.dataSource.query(
      'SELECT token_digest FROM ci_runners WHERE id = $1',
      [project.id],
    );
    expect(rows[0].token_digest).toBe(hashToken(project.token));
    const runner = await server.services.runners.authenticate(project.token);
    expect(runner).toMatchObject({
      runnerType: 'project_type',
      tagList: ['linux', 'docker'],
      active: false,
      accessLevel: 'ref_protected',
      maximumTimeout: 3600,
      registrationType: 'authenticated_user',
      creatorId: w.maintainer.user.id,
    });
    await createRunner(w.owner.token, { runner_type: 'group_type', group_id: w.group.id });
    await createRunner(w.admin.token, { runner_type: 'instance_type' });
  });

  const refusals: Array<[string, (w: Awaited<ReturnType<typeof world>>) => [string, Json], number, unknown]> =
    [
      [
        'a developer, project runner',
        (w) => [w.developer.token, { runner_type: 'project_type', project_id: w.project.id }],
        403,
        { message: '403 Forbidden - Insufficient permissions' },
      ],
      [
        'a group Maintainer, group runner',
        (w) => [w.groupMaintainer.token, { runner_type: 'group_type', group_id: w.group.id }],
        403,
        { message: '403 Forbidden - Insufficient permissions' },
      ],
      [
        'a group Owner, instance runner',
        (w) => [w.owner.token, { runner_type: 'instance_type' }],
        403,
        { message: '403 Forbidden - Insufficient permissions' },
      ],
      [
        'no project_id',
        (w) => [w.maintainer.token, { runner_type: 'project_type' }],
        400,
        { error: 'project_id is missing' },
      ],
      [
        'an unknown project',
        (w) => [w.maintainer.token, { runner_type: 'project_type', project_id: 99999999 }],
        400,
        { message: '400 Bad request - Missing/invalid project' },
      ],
      ['a bad runner_type', (w) => [w.admin.token, { runner_type: 'bogus' }], 400, undefined],
    ];
  it.each(refusals)('refuses %s', async (_name, make, status, body) => {
    const [token, json] = make(await world());
    const res = await server.request('POST', '/user/runners', { token, json });
    expect(res.status, res.text).toBe(status);
    if (body) expect(res.body).toEqual(body);
  });

  it('takes a token with only the create_runner scope', async () => {
    const w = await world();
    const token = await server.factories.token(w.maintainer.user, ['create_runner']);
    await createRunner(token, { runner_type: 'project_type', project_id: w.project.id });
    const read = await server.request('GET', '/runners', { token });
    expect(read.status).toBe(403);
  });
});

describe('the runner and its token', () => {
  it('registers with a registration token, verifies, resets, and deletes itself', async () => {
    const w = await world();
    const projectToken = (
      await server.request('GET', `/projects/${w.project.id}`, { token: w.maintainer.token })
    ).body as Json;
    const registered = await server.request('POST', '/runners', {
      form: {
        token: projectToken.runners_token as string,
        description: 'legacy',
        tag_list: 'a,b',
        'info[version]': '16.11.0',
      },
    });
    expect(registered.status, registered.text).toBe(201);
    const { id, token } = registered.body as { id: number; token: string };
    const verified = await server.request('POST', '/runners/verify', { json: { token, system_id: 's_1' } });
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({ id, token, token_expires_at: null });
    const reset = await server.request('POST', '/runners/reset_authentication_token', { json: { token } });
    expect(reset.status).toBe(201);
    const fresh = (reset.body as Json).token as string;
    expect((await server.request('POST', '/runners/verify', { json: { token } })).status).toBe(403);
    const details = await server.request('GET', `/runners/${id}`, { token: w.maintainer.token });
    expect(details.body).toMatchObject({
      runner_type: 'project_type',
      tag_list: ['a', 'b'],
      version: '16.11.0',
      status: 'never_contacted',
    });
    expect((await server.request('DELETE', '/runners', { json: { token } })).status).toBe(403);
    expect((await server.request('DELETE', '/runners', { json: { token: fresh } })).status).toBe(204);
    expect((await server.request('GET', `/runners/${id}`, { token: w.admin.token })).status).toBe(404);
  });

  it('registers group and instance runners; refuses unknown tokens with 403', async () => {
    const w = await world();
    const groupReset = await server.request(
      'POST',
      `/groups/${w.group.id}/runners/reset_registration_token`,
      { token: w.owner.token },
    );
    expect(groupReset.status, groupReset.text).toBe(201);
    const group = await server.request('POST', '/runners', {
      json: { token: (groupReset.body as Json).token },
    });
    expect(group.status).toBe(201);
    const instanceReset = await server.request('POST', '/runners/reset_registration_token', {
      token: w.admin.token,
    });
    expect(instanceReset.status).toBe(201);
    const instance = await server.request('POST', '/runners', {
      json: { token: (instanceReset.body as Json).token },
    });
    expect(instance.status).toBe(201);
    const types = await server.dataSource.query(
      'SELECT runner_type FROM ci_runners WHERE id = ANY($1::int[]) ORDER BY id',
      [[(group.body as Json).id, (instance.body as Json).id]],
    );
    expect(types.map((r: Json) => r.runner_type)).toEqual(['group_type', 'instance_type']);
    expect((await server.request('POST', '/runners', { json: { token: 'nope' } })).status).toBe(403);
    expect((await server.request('POST', '/runners/verify', { json: { token: 'glrt-nope' } })).body).toEqual({
      message: '403 Forbidden',
    });
    // The old project token stops working after a reset.
    const before = (
      (await server.request('GET', `/projects/${w.project.id}`, { token: w.admin.token })).body as Json
    ).runners_token;
    const reset = await server.request('POST', `/projects/${w.project.id}/runners/reset_registration_token`, {
      token: w.maintainer.token,
    });
    expect(reset.status).toBe(201);
    expect((await server.request('POST', '/runners', { json: { token: before } })).status).toBe(403);
    expect(
      (
        await server.request('POST', `/projects/${w.project.id}/runners/reset_registration_token`, {
          token: w.developer.token,
        })
      ).status,
    ).toBe(403);
  });

  it('recordContact makes a runner online with what it reported', async () => {
    const w = await world();
    const { id, token } = await createRunner(w.admin.token, { runner_type: 'instance_type' });
    const runner = (await server.services.runners.authenticate(token))!;
    await server.services.runners.recordContact(runner, {
      info: { name: 'r1', version: '17.0.0', platform: 'linux' },
      ip: '10.1.2.3',
    });
    const res = await server.request('GET', `/runners/${id}`, { token: w.outsider.token });
    expect(res.body).toMatchObject({
      online: true,
      status: 'online',
      name: 'r1',
      version: '17.0.0',
      ip_address: '10.1.2.3',
    });
    expect(res.body).not.toHaveProperty('maintenance_note');
    const online = await server.request('GET', '/runners/all?status=online&version_prefix=17.', {
      token: w.admin.token,
    });
    expect((online.body as Json[]).map((r) => r.id)).toContain(id);
    expect(
      (await server.request('GET', '/runners/all?version_prefix=x', { token: w.admin.token })).status,
    ).toBe(400);
  });

  it("gives GitLab's statuses: offline after 2 hours, paused, stale after 7 days", async () => {
    const w = await world();
    const status = async (id: number) =>
      ((await server.request('GET', `/runners/${id}`, { token: w.admin.token })).body as Json).status;
    const offline = await createRunner(w.admin.token, { runner_type: 'instance_type' });
    await server.dataSource.query(
      `UPDATE ci_runners SET contacted_at = now() - interval '3 hours' WHERE id = $1`,
      [offline.id],
    );
    expect(await status(offline.id)).toBe('offline');
    const paused = await createRunner(w.admin.token, { runner_type: 'instance_type', paused: true });
    await server.dataSource.query(`UPDATE ci_runners SET contacted_at = now() WHERE id = $1`, [paused.id]);
    expect(await status(paused.id)).toBe('paused');
    const stale = await createRunner(w.admin.token, { runner_type: 'instance_type' });
    await server.dataSource.query(
      `UPDATE ci_runners SET created_at = now() - interval '8 days', contacted_at = now() - interval '8 days' WHERE id = $1`,
      [stale.id],
    );
    expect(await status(stale.id)).toBe('stale');
    const listed = async (query: string) =>
      (
        (await server.request('GET', `/runners/all?${query}&per_page=100`, { token: w.admin.token }))
          .body as Json[]
      ).map((r) => r.id);
    expect(await listed('status=stale')).toContain(stale.id);
    expect(await listed('status=offline')).toEqual(expect.arrayContaining([offline.id, stale.id]));
    expect(await listed('status=offline')).not.toContain(paused.id);
    expect(await listed('status=online')).toContain(paused.id);
  });
});

describe("the users' runner API", () => {
  it("lists the caller's runners, all runners, a project's and a group's, with filters", async () => {
    const w = await world();
    const mine = await createRunner(w.maintainer.token, {
      runner_type: 'project_type',
      project_id: w.project.id,
      tag_list: ['x', 'y'],
    });
    const paused = await createRunner(w.maintainer.token, {
      runner_type: 'project_type',
      project_id: w.other.id,
      paused: true,
    });
    const groupRunner = await createRunner(w.owner.token, {
      runner_type: 'group_type',
      group_id: w.group.id,
    });
    const instance = await createRunner(w.admin.token, { runner_type: 'instance_type' });
    const ids = async (path: string, token: string) => {
      const res = await server.request('GET', path, { token });
      expect(res.status, res.text).toBe(200);
      return (res.body as Json[]).map((r) => r.id);
    };
    expect(await ids('/runners', w.maintainer.token)).toEqual([paused.id, mine.id]);
    expect(await ids('/runners?paused=true', w.maintainer.token)).toEqual([paused.id]);
    expect(await ids('/runners?tag_list=x', w.maintainer.token)).toEqual([mine.id]);
    expect(await ids('/runners?type=group_type', w.owner.token)).toEqual([groupRunner.id]);
    expect(await ids('/runners', w.developer.token)).toEqual([]);
    expect(await ids('/runners?status=never_contacted&per_page=1', w.maintainer.token)).toEqual([paused.id]);
    const all = await ids('/runners/all?per_page=100', w.admin.token);
    expect(all).toEqual(expect.arrayContaining([mine.id, paused.id, groupRunner.id, instance.id]));
    expect((await server.request('GET', '/runners/all', { token: w.maintainer.token })).status).toBe(403);
    const project = await ids(`/projects/${w.project.id}/runners?per_page=100`, w.maintainer.token);
    expect(project).toEqual(expect.arrayContaining([mine.id, groupRunner.id, instance.id]));
    expect(project).not.toContain(paused.id);
    expect(await ids(`/projects/${w.project.id}/runners?type=project_type`, w.maintainer.token)).toEqual([
      mine.id,
    ]);
    expect(
      (await server.request('GET', `/projects/${w.project.id}/runners`, { token: w.developer.token })).status,
    ).toBe(403);
    const group = await ids(`/groups/${w.group.id}/runners?type=group_type`, w.groupMaintainer.token);
    expect(group).toEqual([groupRunner.id]);
    const page = await server.request('GET', '/runners?per_page=1&page=2', { token: w.maintainer.token });
    expect(page.headers.get('x-total')).toBe('2');
    expect((page.body as Json[]).map((r) => r.id)).toEqual([mine.id]);
  });

  it("reads, edits, pauses and deletes a runner as GitLab's runner policy says", async () => {
    const w = await world();
    const { id } = await createRunner(w.maintainer.token, {
      runner_type: 'project_type',
      project_id: w.project.id,
      maintenance_note: 'n',
    });
    const get = await server.request('GET', `/runners/${id}`, { token: w.maintainer.token });
    expect(get.body).toMatchObject({
      id,
      maintenance_note: 'n',
      projects: [{ id: w.project.id }],
      groups: [],
    });
    expect((await server.request('GET', `/runners/${id}`, { token: w.developer.token })).body).toEqual({
      message: '403 Forbidden - No access granted',
    });
    const paused = await server.request('PUT', `/runners/${id}`, {
      token: w.maintainer.token,
      json: { paused: true, tag_list: 'q' },
    });
    expect(paused.status, paused.text).toBe(200);
    expect(paused.body).toMatchObject({ paused: true, active: false, tag_list: ['q'] });
    expect(
      (await server.request('PUT', `/runners/${id}`, { token: w.maintainer.token, json: {} })).status,
    ).toBe(400);
    expect(
      (
        await server.request('PUT', `/runners/${id}`, {
          token: w.maintainer.token,
          json: { paused: true, active: true },
        })
      ).status,
    ).toBe(400);
    expect(
      (await server.request('PUT', `/runners/${id}`, { token: w.developer.token, json: { paused: false } }))
        .status,
    ).toBe(403);
    const reset = await server.request('POST', `/runners/${id}/reset_authentication_token`, {
      token: w.maintainer.token,
    });
    expect(reset.status).toBe(201);
    expect(
      (await server.request('POST', '/runners/verify', { json: { token: (reset.body as Json).token } }))
        .status,
    ).toBe(200);
    expect((await server.request('GET', '/runners/99999999', { token: w.maintainer.token })).body).toEqual({
      message: '404 Runner Not Found',
    });
    expect((await server.request('DELETE', `/runners/${id}`, { token: w.developer.token })).status).toBe(403);
    expect((await server.request('DELETE', `/runners/${id}`, { token: w.maintainer.token })).status).toBe(
      204,
    );
  });

  it('enables a project runner in another project and disables it, never in its owner project', async () => {
    const w = await world();
    const { id } = await createRunner(w.maintainer.token, {
      runner_type: 'project_type',
      project_id: w.project.id,
    });
    const enabled = await server.request('POST', `/projects/${w.other.id}/runners`, {
      token: w.maintainer.token,
      json: { runner_id: id },
    });
    expect(enabled.status, enabled.text).toBe(201);
    expect(enabled.body).toMatchObject({ id, runner_type: 'project_type' });
    expect(
      (
        await server.request('POST', `/projects/${w.other.id}/runners`, {
          token: w.maintainer.token,
          json: { runner_id: id },
        })
      ).status,
    ).toBe(400);
    // Enabled in two projects: only an administrator deletes it.
    expect((await server.request('DELETE', `/runners/${id}`, { token: w.maintainer.token })).body).toEqual({
      message: '403 Forbidden - Runner associated with more than one project',
    });
    expect(
      (
        await server.request('DELETE', `/projects/${w.project.id}/runners/${id}`, {
          token: w.maintainer.token,
        })
      ).status,
    ).toBe(403);
    expect(
      (await server.request('DELETE', `/projects/${w.other.id}/runners/${id}`, { token: w.maintainer.token }))
        .status,
    ).toBe(204);
    expect(
      (await server.request('DELETE', `/projects/${w.other.id}/runners/${id}`, { token: w.maintainer.token }))
        .status,
    ).toBe(404);
    const locked = await createRunner(w.maintainer.token, {
      runner_type: 'project_type',
      project_id: w.project.id,
      locked: true,
    });
    expect(
      (
        await server.request('POST', `/projects/${w.other.id}/runners`, {
          token: w.maintainer.token,
          json: { runner_id: locked.id },
        })
      ).body,
    ).toEqual({
      message: '403 Forbidden - Runner is locked',
    });
    const groupRunner = await createRunner(w.owner.token, {
      runner_type: 'group_type',
      group_id: w.group.id,
    });
    expect(
      (
        await server.request('POST', `/projects/${w.other.id}/runners`, {
          token: w.admin.token,
          json: { runner_id: groupRunner.id },
        })
      ).body,
    ).toEqual({
      message: '403 Forbidden - Runner is a group runner',
    });
  });

  it("lists a runner's jobs in the projects the caller reads, filtered and ordered", async () => {
    const w = await world();
    const { id } = await createRunner(w.maintainer.token, {
      runner_type: 'project_type',
      project_id: w.project.id,
    });
    const sha = await commit(w.admin.token, w.project, {
      '.gitlab-ci.yml': 'a:\n  script: [x]\nb:\n  script: [y]\n',
    });
    const pipeline = await pipelineFor(w.admin.token, w.project, sha);
    const jobs = await jobsOf(w.admin.token, w.project, pipeline.id);
    const ids = jobs.map((job) => job.id).sort((x, y) => x - y);
    await server.dataSource.query('UPDATE ci_builds SET runner_id = $1 WHERE id = ANY($2::int[])', [id, ids]);
    await run(ids[0], 'running', 'success');
    const list = async (query: string, token = w.maintainer.token) => {
      const res = await server.request('GET', `/runners/${id}/jobs${query}`, { token });
      expect(res.status, res.text).toBe(200);
      return res.body as Json[];
    };
    expect((await list('')).map((job) => job.id)).toEqual([...ids].reverse());
    expect((await list('?order_by=id&sort=asc')).map((job) => job.id)).toEqual(ids);
    const done = await list('?status=success');
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({
      id: ids[0],
      status: 'success',
      project: { id: w.project.id },
      pipeline: { id: pipeline.id },
    });
    const paged = await server.request('GET', `/runners/${id}/jobs?per_page=1&page=2`, {
      token: w.maintainer.token,
    });
    expect(paged.headers.get('x-total')).toBe('2');
    expect((await list('?page=5')).length).toBe(0);
    expect((await server.request('GET', `/runners/${id}/jobs`, { token: w.developer.token })).status).toBe(
      403,
    );
  });
});

describe('the lists at the widest pages', () => {
  it('answers empty pages past the end, with the totals', async () => {
    const w = await world();
    const { id } = await createRunner(w.maintainer.token, {
      runner_type: 'project_type',
      project_id: w.project.id,
    });
    const lists = [
      '/runners',
      '/runners/all',
      `/runners/${id}/jobs`,
      `/projects/${w.project.id}/runners`,
      `/groups/${w.group.id}/runners`,
    ];
    for (const list of lists)
      for (const query of ['page=1000000000&per_page=100', 'page=2147483647&per_page=2147483647']) {
        const res = await server.request('GET', `${list}?${query}`, { token: w.admin.token });
        expect(res.status, `${list} ${res.text}`).toBe(200);
        expect(res.body).toEqual([]);
        expect(res.headers.get('x-total'), list).not.toBeNull();
      }
  });
});

describe('plan limits', () => {
  it('enforces ci_registered_project_runners and ci_registered_group_runners', async () => {
    const w = await world();
    await server.dataSource.query(
      `UPDATE plan_limits SET ci_registered_project_runners = 1, ci_registered_group_runners = 1 WHERE plan_name = 'default'`,
    );
    try {
      await createRunner(w.maintainer.token, { runner_type: 'project_type', project_id: w.project.id });
      const over = await server.request('POST', '/user/runners', {
        token: w.maintainer.token,
        json: { runner_type: 'project_type', project_id: w.project.id },
      });
      expect(over.status).toBe(400);
      expect(over.body).toEqual({
        message: '400 Bad request - Maximum number of ci registered project runners (1) exceeded',
      });
      const token = (
        (await server.request('GET', `/projects/${w.project.id}`, { token: w.admin.token })).body as Json
      ).runners_token;
      const legacy = await server.request('POST', '/runners', { json: { token } });
      expect(legacy.status).toBe(400);
      expect(legacy.body).toEqual({
        message: { 'runner_projects.base': ['Maximum number of ci registered project runners (1) exceeded'] },
      });
      await createRunner(w.owner.token, { runner_type: 'group_type', group_id: w.group.id });
      const group = await server.request('POST', '/user/runners', {
        token: w.owner.token,
        json: { runner_type: 'group_type', group_id: w.group.id },
      });
      expect(group.body).toEqual({
        message: '400 Bad request - Maximum number of ci registered group runners (1) exceeded',
      });
    } finally {
      await server.dataSource.query(
        `UPDATE plan_limits SET ci_registered_project_runners = 1000, ci_registered_group_runners = 1000 WHERE plan_name = 'default'`,
      );
    }
  });
});

/** Environments and deployments: made and moved by jobs, stopped with on_stop jobs and auto_stop_in, and their API. */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { pipelineHelpers } from '../helpers/pipelines.js';
import { useTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

type Json = Record<string, unknown>;
const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });
const { commit, pipelineFor, get, settle, run, byName } = pipelineHelpers(server);

const REVIEW_CI = `
stages: [build, deploy, cleanup]
build: { stage: build, script: x }
deploy_review:
  stage: deploy
  script: x
  variables: { APP: web }
  environment:
    name: review/$CI_COMMIT_REF_SLUG-$APP
    url: https://$CI_COMMIT_REF_SLUG.example.com
    on_stop: stop_review
    auto_stop_in: 1 week
deploy_prod:
  stage: deploy
  script: x
  allow_failure: true
  environment: { name: live, deployment_tier: staging }
stop_review:
  stage: cleanup
  script: x
  when: manual
  variables: { APP: web }
  environment: { name: review/$CI_COMMIT_REF_SLUG-$APP, action: stop }
`;

const envs = async (token: string, projectId: number, query = '') =>
  (await get(token, `/projects/${projectId}/environments${query}`)) as unknown as Json[];
const deployments = async (token: string, projectId: number, query = '') =>
  (await get(token, `/projects/${projectId}/deployments${query}`)) as unknown as Json[];

describe('jobs with environment:', () => {
  it('make environments and deployments that follow the jobs, and stop with the on_stop job', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const pipeline = await pipelineFor(
      owner.token,
      project,
      await commit(owner.token, project, { '.gitlab-ci.yml': REVIEW_CI }),
    );
    let jobs = await settle(owner.token, project, pipeline.id, { build: 'pending' });
    // Both environments exist from the pipeline's creation, their tier given or guessed from the name.
    const listed = await envs(owner.token, project.id);
    expect(listed.map((e) => [e.name, e.tier, e.state])).toEqual([
      ['review/main-web', 'development', 'available'],
      ['live', 'staging', 'available'],
    ]);
    expect(listed[0].slug).toMatch(/^review-main-web-[a-z0-9]{6}$/);
    let deps = await deployments(owner.token, project.id);
    expect(
      deps.map((d) => [d.iid, d.status, (d.deployable as Json).name, (d.environment as Json).name]),
    ).toEqual([
      [1, 'created', 'deploy_review', 'review/main-web'],
      [2, 'created', 'deploy_prod', 'live'],
    ]);
    expect(deps[0]).toMatchObject({ ref: 'main', sha: pipeline.sha, user: { id: owner.user.id } });

    await run(byName(jobs, 'build').id, 'running', 'success');
    jobs = await settle(owner.token, project, pipeline.id, {
      deploy_review: 'pending',
      deploy_prod: 'pending',
    });
    await run(byName(jobs, 'deploy_review').id, 'running');
    expect((await deployments(owner.token, project.id, '?status=running')).map((d) => d.iid)).toEqual([1]);
    await run(byName(jobs, 'deploy_review').id, 'success');
    await run(byName(jobs, 'deploy_prod').id, 'running', 'failed');
    deps = await deployments(owner.token, project.id, '?order_by=iid&sort=desc');
    expect(deps.map((d) => [d.iid, d.status])).toEqual([
      [2, 'failed'],
      [1, 'success'],
    ]);
    expect((await deployments(owner.token, project.id, '?environment=live')).map((d) => d.iid)).toEqual([2]);

    const review = await get(owner.token, `/projects/${project.id}/environments/${listed[0].id as number}`);
    expect(review).toMatchObject({
      state: 'available',
      external_url: 'https://main.example.com',
      last_deployment: { iid: 1, status: 'success', deployable: { name: 'deploy_review' } },
    });
    const weekAway = Date.parse(review.auto_stop_at as string) - Date.now();
    expect(weekAway).toBeGreaterThan(6 * 86_400_000);
    const live = await get(owner.token, `/projects/${project.id}/environments/${listed[1].id as number}`);
    expect(live.last_deployment).toBeNull();
    expect(live).not.toHaveProperty('project');

    // Stopping plays stop_review; its success stops the environment.
    const stop = await server.request('POST', `/projects/${project.id}/environments/${review.id}/stop`, {
      token: owner.token,
    });
    expect(stop.status, stop.text).toBe(200);
    expect(stop.body).toMatchObject({ state: 'stopping', auto_stop_at: null });
    jobs = await settle(owner.token, project, pipeline.id, { stop_review: 'pending' });
    await run(byName(jobs, 'stop_review').id, 'running', 'success');
    expect((await envs(owner.token, project.id, '?states=stopped')).map((e) => e.name)).toEqual([
      'review/main-web',
    ]);

    // Only a stopped environment is deleted; a developer may, a reporter may not.
    const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
    const base = `/projects/${project.id}/environments`;
    expect((await server.request('DELETE', `${base}/${review.id}`, { token: reporter.token })).status).toBe(
      403,
    );
    expect((await server.request('DELETE', `${base}/${live.id}`, { token: owner.token })).status).toBe(403);
    expect((await server.request('DELETE', `${base}/${review.id}`, { token: owner.token })).status).toBe(204);
    expect((await server.request('GET', `${base}/${review.id}`, { token: owner.token })).status).toBe(404);
    expect((await deployments(reporter.token, project.id)).map((d) => d.iid)).toEqual([2]);
  });

  it('stops an environment when auto_stop_in has passed, through the queue, playing its on_stop job', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const config = `
deploy: { stage: deploy, script: x, environment: { name: temp, on_stop: teardown, auto_stop_in: 1 second } }
teardown: { stage: deploy, script: x, when: manual, environment: { name: temp, action: stop } }
`;
    const pipeline = await pipelineFor(
      owner.token,
      project,
      await commit(owner.token, project, { '.gitlab-ci.yml': config }),
    );
    const jobs = await settle(owner.token, project, pipeline.id, { deploy: 'pending', teardown: 'manual' });
    await run(byName(jobs, 'deploy').id, 'running', 'success');
    const [temp] = await envs(owner.token, project.id);
    expect(temp).toMatchObject({ name: 'temp', tier: 'other', state: 'available' });
    expect(temp.auto_stop_at).not.toBeNull();
    const stopping = await waitFor(
      () => get(owner.token, `/projects/${project.id}/environments/${temp.id as number}`),
      (e) => e.state === 'stopping',
    );
    expect(stopping.state).toBe('stopping');
    const after = await settle(owner.token, project, pipeline.id, { teardown: 'pending' });
    // A failed stop job leaves the environment available again.
    await run(byName(after, 'teardown').id, 'running', 'failed');
    expect((await envs(owner.token, project.id))[0].state).toBe('available');
    // Stopping again retries the failed teardown; `force` completes the stop without waiting for it.
    const stopPath = `/projects/${project.id}/environments/${temp.id as number}/stop`;
    const again = await server.request('POST', stopPath, { token: owner.token });
    expect((again.body as Json).state).toBe('stopping');
    const forced = await server.request('POST', stopPath, { token: owner.token, json: { force: true } });
    expect((forced.body as Json).state).toBe('stopped');
  });
});

describe('the environments API', () => {
  it('creates, lists, filters, updates and stops environments, with GitLab refusals', async () => {
    const { project } = await server.factories.ownedProjectWithReadme();
    const developer = await server.factories.memberOf(project, AccessLevel.Developer);
    const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
    const base = `/projects/${project.id}/environments`;
    const create = (json: Json, token = developer.token) => server.request('POST', base, { token, json });
    const made = await create({ name: 'production', external_url: 'https://example.com' });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({
      project: { id: project.id, path_with_namespace: expect.any(String) },
      name: 'production',
      slug: 'production',
      tier: 'production',
      state: 'available',
    });
    for (const name of ['qa-one', 'qa-two', 'Demo 1']) expect((await create({ name })).status).toBe(201);
    expect((await create({ name: 'production' })).body).toEqual({
      message: { name: ['has already been taken'] },
    });
    expect((await create({ name: '/bad' })).status).toBe(400);
    expect((await create({ name: 'x' }, reporter.token)).status).toBe(403);
    expect((await create({ name: 'x', tier: 'nope' })).status).toBe(400);
    expect((await create({ name: 'x', external_url: 'ftp://x' })).body).toEqual({
      message: { external_url: ['is blocked: Only allowed schemes are http, https'] },
    });

    expect((await envs(reporter.token, project.id, '?search=QA-')).map((e) => [e.name, e.tier])).toEqual([
      ['qa-one', 'testing'],
      ['qa-two', 'testing'],
    ]);
    expect((await envs(reporter.token, project.id, '?name=Demo%201')).map((e) => e.tier)).toEqual([
      'staging',
    ]);
    const short = await server.request('GET', `${base}?search=qa`, { token: reporter.token });
    expect(short.body).toEqual({ message: '400 Bad request - Search query is less than 3 characters' });
    expect((await server.request('GET', `${base}?search=qa-&name=x`, { token: reporter.token })).status).toBe(
      400,
    );
    const page = await server.request('GET', `${base}?per_page=2&page=2`, { token: reporter.token });
    expect(page.headers.get('x-total')).toBe('4');
    expect((page.body as Json[]).map((e) => e.name)).toEqual(['qa-two', 'Demo 1']);
    for (const list of ['environments', 'deployments']) {
      const far = await server.request(
        'GET',
        `/projects/${project.id}/${list}?page=1000000000&per_page=100`,
        {
          token: reporter.token,
        },
      );
      expect([far.status, far.body]).toEqual([200, []]);
    }

    const id = (made.body as Json).id as number;
    const updated = await server.request('PUT', `${base}/${id}`, {
      token: developer.token,
      json: { external_url: 'https://prod.example.com', description: 'Main', tier: 'other' },
    });
    expect(updated.body).toMatchObject({
      external_url: 'https://prod.example.com',
      description: 'Main',
      tier: 'other',
    });
    const stopped = await server.request('POST', `${base}/${id}/stop`, {
      token: developer.token,
      json: { force: true },
    });
    expect(stopped.body).toMatchObject({ state: 'stopped' });
    expect((await server.request('POST', `${base}/${id}/stop`, { token: reporter.token })).status).toBe(403);

    const stale = (before: string) =>
      server.request('POST', `${base}/stop_stale`, { token: developer.token, json: { before } });
    expect((await stale(new Date().toISOString())).body).toEqual({
      message: '400 Bad request - Invalid Date',
    });
    const ok = await stale(new Date(Date.now() - 8 * 86_400_000).toISOString());
    expect(ok.body).toEqual({ message: 'Successfully requested stop for all stale environments' });
    const other = await server.factories.ownedProjectWithReadme();
    expect(
      (
        await server.request('GET', `/projects/${other.project.id}/environments/${id}`, {
          token: other.owner.token,
        })
      ).status,
    ).toBe(404);
  });

  it('schedules stopped review apps for deletion, and deletes them when their time comes', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
    const base = `/projects/${project.id}/environments`;
    const ids: Record<string, number> = {};
    for (const name of ['review/old', 'review/older', 'review/running', 'staging']) {
      const made = await server.request('POST', base, { token: owner.token, json: { name } });
      ids[name] = (made.body as Json).id as number;
      if (name !== 'review/running')
        await server.request('POST', `${base}/${ids[name]}/stop`, { token: owner.token });
    }
    await server.dataSource.query(
      `UPDATE environments SET created_at = now() - interval '40 days' - (id * interval '1 second') WHERE project_id = $1`,
      [project.id],
    );
    const reviewApps = (query: string, token = owner.token) =>
      server.request('DELETE', `${base}/review_apps${query}`, { token });
    expect((await reviewApps('', reporter.token)).status).toBe(403);
    const dry = await reviewApps('');
    expect(dry.status, dry.text).toBe(200);
    const names = (res: { body: unknown }) =>
      ((res.body as Json).scheduled_entries as Json[]).map((e) => e.name);
    expect(names(dry)).toEqual(['review/older', 'review/old']);
    expect((dry.body as Json).unprocessable_entries).toEqual([]);
    const real = await reviewApps('?dry_run=false&limit=1');
    expect([real.status, names(real)]).toEqual([202, ['review/older']]);
    expect(names(await reviewApps('?dry_run=false'))).toEqual(['review/old']);
    expect(names(await reviewApps(''))).toEqual([]);
    // A week later (moved here by hand), the scheduled review apps go.
    await server.dataSource.query(
      `UPDATE environments SET auto_delete_at = now() - interval '1 second'
       WHERE project_id = $1 AND auto_delete_at IS NOT NULL`,
      [project.id],
    );
    for (const name of ['review/old', 'review/older', 'staging'])
      await server.services.environments.autoDelete(ids[name]);
    expect((await envs(owner.token, project.id)).map((e) => e.name).sort()).toEqual([
      'review/running',
      'staging',
    ]);
  });

  it('creates and updates deployments made outside CI, and refuses those of jobs', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const developer = await server.factories.memberOf(project, AccessLevel.Developer);
    const base = `/projects/${project.id}/deployments`;
    const sha = 'b'.repeat(40);
    const made = await server.request('POST', base, {
      token: developer.token,
      json: { environment: 'review/x', sha, ref: 'main', tag: false, status: 'running' },
    });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({
      iid: 1,
      status: 'running',
      deployable: null,
      user: { id: developer.user.id },
      environment: { name: 'review/x' },
    });
    const id = (made.body as Json).id as number;
    const done = await server.request('PUT', `${base}/${id}`, {
      token: developer.token,
      json: { status: 'success' },
    });
    expect(done.body).toMatchObject({ status: 'success' });
    const second = await server.request('POST', base, {
      token: developer.token,
      form: { environment: 'review/x', sha, ref: 'main', tag: 'false', status: 'failed' },
    });
    expect(second.status, second.text).toBe(201);
    const secondId = (second.body as Json).id as number;
    expect((await server.request('DELETE', `${base}/${id}`, { token: developer.token })).status).toBe(403);
    expect((await server.request('DELETE', `${base}/${id}`, { token: owner.token })).body).toEqual({
      message: 'Deployment currently deployed to environment',
    });
    expect((await server.request('DELETE', `${base}/${secondId}`, { token: owner.token })).status).toBe(204);
    expect((await server.request('GET', `${base}/${secondId}`, { token: owner.token })).status).toBe(404);
    expect(
      (await server.request('PUT', `${base}/${id}`, { token: developer.token, json: { status: 'created' } }))
        .status,
    ).toBe(400);

    const pipeline = await pipelineFor(
      owner.token,
      project,
      await commit(owner.token, project, { '.gitlab-ci.yml': 'd: { script: x, environment: review/x }\n' }),
    );
    await settle(owner.token, project, pipeline.id, { d: 'pending' });
    const [ci] = await deployments(owner.token, project.id, '?sort=desc&per_page=1');
    expect(ci).toMatchObject({ iid: 3, status: 'created', deployable: { name: 'd' } });
    const refused = await server.request('PUT', `${base}/${ci.id as number}`, {
      token: developer.token,
      json: { status: 'success' },
    });
    expect(refused.body).toEqual({
      message: '403 Forbidden - Deployments created using GitLab CI can not be updated using the API',
    });
    expect(
      (await server.request('DELETE', `${base}/${ci.id as number}`, { token: owner.token })).body,
    ).toEqual({
      message: 'Cannot destroy running deployment',
    });
  });

  it.skipIf(!pythonGitlab)(
    'drives project.environments and project.deployments (needs Debian python3-gitlab)',
    async () => {
      const { owner, project } = await server.factories.ownedProjectWithReadme();
      const stdout = await runPythonClient('python_gitlab_environments.py', [
        server.url,
        owner.token,
        String(project.id),
      ]);
      expect(JSON.parse(stdout.trim())).toEqual({
        created: ['py-staging', 'available', 'staging', 'https://py.example.com'],
        saved: 'https://py2.example.com',
        listed: ['py-staging'],
        by_name: [true],
        deployment: ['running', 'py-staging', null],
        deployment_saved: 'success',
        deployments: [1],
        last_deployment: true,
        stopped: 'stopped',
        gone: 404,
      });
    },
  );
});

import { describe, expect, it } from 'vitest';
import { pipelineHelpers } from '../helpers/pipelines.js';
import { useTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

type Json = Record<string, unknown>;
const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });

const { commit, pipelineFor, get, jobsOf, settle, run, byName } = pipelineHelpers(server);

describe('job statuses', () => {
  it('skips what follows a failure, runs on_failure and always jobs, and passes with warnings', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const sha = await commit(owner.token, project, {
      '.gitlab-ci.yml': `
stages: [a, b, c]
flaky: { stage: a, script: x, allow_failure: true }
unit: { stage: a, script: x }
after: { stage: b, script: x }
cleanup: { stage: c, script: x, when: on_failure }
report: { stage: c, script: x, when: always }
`,
    });
    const pipeline = await pipelineFor(owner.token, project, sha);
    let jobs = await settle(owner.token, project, pipeline.id, { flaky: 'pending', unit: 'pending' });
    await run(byName(jobs, 'flaky').id, 'running', 'failed');
    await run(byName(jobs, 'unit').id, 'running', 'failed');
    jobs = await settle(owner.token, project, pipeline.id, {
      after: 'skipped',
      cleanup: 'pending',
      report: 'pending',
    });
    expect(byName(jobs, 'unit')).toMatchObject({ failure_reason: 'script_failure' });
    await run(byName(jobs, 'cleanup').id, 'running', 'success');
    await run(byName(jobs, 'report').id, 'running', 'success');
    expect((await get(owner.token, `/projects/${project.id}/pipelines/${pipeline.id}`)).status).toBe(
      'failed',
    );

    // Retrying the failed job makes a new attempt; its success lets the skipped job run.
    const retried = await server.request(
      'POST',
      `/projects/${project.id}/jobs/${byName(jobs, 'unit').id}/retry`,
      {
        token: owner.token,
      },
    );
    expect(retried.status, retried.text).toBe(201);
    const retry = retried.body as Json & { id: number };
    expect(retry).toMatchObject({ name: 'unit', status: 'pending' });
    const all = await jobsOf(owner.token, project, pipeline.id, '&include_retried=true');
    expect(all.filter((j) => j.name === 'unit').map((j) => j.status)).toEqual(['failed', 'pending']);
    await run(retry.id, 'running', 'success');
    jobs = await settle(owner.token, project, pipeline.id, { after: 'pending' });
    await run(byName(jobs, 'after').id, 'running', 'success');
    const detail = await waitFor(
      () => get(owner.token, `/projects/${project.id}/pipelines/${pipeline.id}`),
      (p) => p.status === 'success',
    );
    expect(detail.detailed_status).toMatchObject({
      icon: 'status_warning',
      text: 'Warning',
      label: 'passed with warnings',
    });
  });

  it('cancels the rest of a pipeline on a failure with workflow:auto_cancel:on_job_failure all', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const sha = await commit(owner.token, project, {
      '.gitlab-ci.yml': `workflow:
  auto_cancel:
    on_job_failure: all
a: { script: x }
b: { script: x }
c: { stage: deploy, script: x }
`,
    });
    const pipeline = await pipelineFor(owner.token, project, sha);
    const jobs = await settle(owner.token, project, pipeline.id, { a: 'pending', b: 'pending' });
    await run(byName(jobs, 'a').id, 'running', 'failed');
    await settle(owner.token, project, pipeline.id, { a: 'failed', b: 'canceled', c: 'canceled' });
    expect((await get(owner.token, `/projects/${project.id}/pipelines/${pipeline.id}`)).status).toBe(
      'failed',
    );
  });

  it('cancels, retries and erases through the API, and refuses what GitLab refuses', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const sha = await commit(owner.token, project, {
      '.gitlab-ci.yml': 'one: { script: x }\ntwo: { script: y }\n',
    });
    const pipeline = await pipelineFor(owner.token, project, sha);
    const jobs = await settle(owner.token, project, pipeline.id, { one: 'pending', two: 'pending' });
    const one = byName(jobs, 'one');
    const base = `/projects/${project.id}/jobs/${one.id}`;
    const post = (path: string, json?: unknown) =>
      server.request('POST', `${base}${path}`, { token: owner.token, json });
    expect((await post('/play')).status).toBe(400);
    expect((await post('/erase')).status).toBe(403);
    expect((await post('/retry')).status).toBe(403);
    const canceled = await post('/cancel');
    expect(canceled.status).toBe(201);
    expect(canceled.body).toMatchObject({ status: 'canceled' });
    const trace = await server.request('GET', `${base}/trace`, { token: owner.token });
    expect([trace.status, trace.text, trace.headers.get('content-type')]).toEqual([
      200,
      '',
      'text/plain; charset=utf-8',
    ]);
    await server.services.pipelines.jobs.appendTrace(one.id, 'Running with gitlab-runner\n');
    expect((await server.request('GET', `${base}/trace`, { token: owner.token })).text).toBe(
      'Running with gitlab-runner\n',
    );
    const erased = await post('/erase');
    expect(erased.status, erased.text).toBe(201);
    expect((erased.body as Json).erased_at).not.toBeNull();
    expect((await server.request('GET', `${base}/trace`, { token: owner.token })).text).toBe('');

    const cancel = await server.request('POST', `/projects/${project.id}/pipelines/${pipeline.id}/cancel`, {
      token: owner.token,
    });
    expect(cancel.status).toBe(201);
    expect(cancel.body).toMatchObject({ status: 'canceled' });
    const retry = await server.request('POST', `/projects/${project.id}/pipelines/${pipeline.id}/retry`, {
      token: owner.token,
    });
    expect(retry.status).toBe(201);
    expect(retry.body).toMatchObject({ status: 'pending' });
    expect((await jobsOf(owner.token, project, pipeline.id)).map((j) => j.status)).toEqual([
      'pending',
      'pending',
    ]);
    const single = await get(owner.token, `/projects/${project.id}/jobs/${one.id}`);
    expect(single).toMatchObject({
      id: one.id,
      name: 'one',
      pipeline: { id: pipeline.id },
      commit: { id: sha },
    });
    const projectJobs = await server.request('GET', `/projects/${project.id}/jobs?scope[]=pending`, {
      token: owner.token,
    });
    expect((projectJobs.body as Json[]).map((j) => j.name).sort()).toEqual(['one', 'two']);

    const del = await server.request('DELETE', `/projects/${project.id}/pipelines/${pipeline.id}`, {
      token: owner.token,
    });
    expect(del.status).toBe(204);
    expect(
      (
        await server.request('GET', `/projects/${project.id}/pipelines/${pipeline.id}`, {
          token: owner.token,
        })
      ).status,
    ).toBe(404);
    expect((await server.request('GET', base, { token: owner.token })).status).toBe(404);
  });

  it('holds a job of a busy resource group, lets delayed jobs start later, and auto-cancels older pipelines', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const config = `
deploy: { script: x, resource_group: production }
later: { script: x, when: delayed, start_in: 1 second }
`;
    const first = await pipelineFor(
      owner.token,
      project,
      await commit(owner.token, project, { '.gitlab-ci.yml': config }),
    );
    const firstJobs = await settle(owner.token, project, first.id, { deploy: 'pending', later: 'scheduled' });
    await run(byName(firstJobs, 'deploy').id, 'running');
    await settle(owner.token, project, first.id, { later: 'pending' });
    const sha = await commit(owner.token, project, { 'other.txt': 'x' }, { message: 'Another' });
    const second = await pipelineFor(owner.token, project, sha);
    const secondJobs = await settle(owner.token, project, second.id, { deploy: 'waiting_for_resource' });
    // The first pipeline's deploy job is running and not interruptible: it is not auto-canceled.
    expect((await get(owner.token, `/projects/${project.id}/pipelines/${first.id}`)).status).toBe('running');
    await run(byName(firstJobs, 'deploy').id, 'success');
    await settle(owner.token, project, second.id, { deploy: 'pending' });
    expect(byName(secondJobs, 'deploy').status).toBe('waiting_for_resource');

    const interruptible = await server.factories.ownedProjectWithReadme();
    const cfg = 'job: { script: x, interruptible: true }\n';
    const old = await pipelineFor(
      interruptible.owner.token,
      interruptible.project,
      await commit(interruptible.owner.token, interruptible.project, { '.gitlab-ci.yml': cfg }),
    );
    await commit(interruptible.owner.token, interruptible.project, { 'b.txt': 'x' }, { message: 'Newer' });
    await waitFor(
      () => get(interruptible.owner.token, `/projects/${interruptible.project.id}/pipelines/${old.id}`),
      (p) => p.status === 'canceled',
    );
  });
});

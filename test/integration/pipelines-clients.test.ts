/** Pipelines and jobs through the real clients: @gitbeaker/rest 43 and python-gitlab 3.12. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import type { Project } from '../../src/projects/project.entity.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });
type Json = Record<string, unknown>;

const CONFIG = `build: { stage: build, script: make }
deploy: { stage: deploy, script: deploy, when: manual }
child: { stage: deploy, trigger: { include: child.yml } }
`;

/** A project whose push made a pipeline: its build job ran with a log, its deploy job is manual. */
async function world() {
  const { owner, project } = await server.factories.ownedProjectWithReadme();
  const res = await server.request('POST', `/projects/${project.id}/repository/commits`, {
    token: owner.token,
    json: {
      branch: 'main',
      commit_message: 'CI',
      actions: [
        { action: 'create', file_path: '.gitlab-ci.yml', content: CONFIG },
        { action: 'create', file_path: 'child.yml', content: 'inner: { script: x }\n' },
      ],
    },
  });
  expect(res.status).toBe(201);
  const pipeline = await firstPipeline(owner.token, project);
  const jobs = server.services.pipelines.jobs;
  const list = await waitFor(
    () =>
      server.request('GET', `/projects/${project.id}/pipelines/${pipeline.id}/jobs`, { token: owner.token }),
    (r) => (r.body as Json[]).some((j) => j.status === 'pending'),
  );
  const id = (name: string) => (list.body as Json[]).find((j) => j.name === name)!.id as number;
  await jobs.updateStatus(id('build'), 'running');
  await jobs.appendTrace(id('build'), 'Hello from the runner\n');
  await jobs.updateStatus(id('build'), 'success');
  await waitFor(
    () =>
      server.request('GET', `/projects/${project.id}/pipelines/${pipeline.id}/bridges`, {
        token: owner.token,
      }),
    (r) => (r.body as Json[])[0]?.downstream_pipeline != null,
  );
  return { owner, project, pipelineId: pipeline.id, buildId: id('build'), manualId: id('deploy') };
}

async function firstPipeline(token: string, project: Project) {
  const res = await waitFor(
    () => server.request('GET', `/projects/${project.id}/pipelines`, { token }),
    (r) => (r.body as Json[]).length > 0,
  );
  return (res.body as Json[])[0] as Json & { id: number };
}

describe('@gitbeaker/rest', () => {
  it('lists, creates, cancels and retries pipelines and drives their jobs (Pipelines, Jobs)', async () => {
    const { owner, project, pipelineId, buildId, manualId } = await world();
    const api = new Gitlab({ host: server.url, token: owner.token });
    expect((await api.Pipelines.all(project.id)).map((p) => p.id)).toEqual([pipelineId]);
    expect(await api.Pipelines.show(project.id, pipelineId)).toMatchObject({
      id: pipelineId,
      source: 'push',
    });
    expect((await api.Pipelines.showLatest(project.id)).id).toBe(pipelineId);
    const created = await api.Pipelines.create(project.id, 'main', {
      variables: [{ key: 'BEAKER', value: '1', variable_type: 'env_var' }],
    });
    expect(created).toMatchObject({ source: 'api', ref: 'main' });
    expect((await api.Pipelines.allVariables(project.id, created.id)).map((v) => v.key)).toEqual(['BEAKER']);
    expect((await api.Pipelines.cancel(project.id, created.id)).status).toBe('canceled');
    expect((await api.Pipelines.retry(project.id, created.id)).status).toBe('pending');
    expect((await api.Jobs.all(project.id, { pipelineId })).map((j) => j.name)).toEqual(['build', 'deploy']);
    const bridges = await api.Jobs.allPipelineBridges(project.id, pipelineId);
    expect(bridges.map((b) => b.name)).toEqual(['child']);
    expect((await api.Jobs.show(project.id, buildId)).status).toBe('success');
    expect(await api.Jobs.showLog(project.id, buildId)).toBe('Hello from the runner\n');
    expect((await api.Jobs.erase(project.id, buildId)).erased_at).not.toBeNull();
    expect((await api.Jobs.retry(project.id, buildId)).status).toBe('pending');
    expect((await api.Jobs.play(project.id, manualId)).status).toBe('pending');
    expect((await api.Jobs.cancel(project.id, manualId)).status).toBe('canceled');
    await api.Pipelines.remove(project.id, created.id);
    await expect(api.Pipelines.show(project.id, created.id)).rejects.toThrow();
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'drives pipelines, variables, bridges and jobs (needs Debian python3-gitlab)',
    async () => {
      const { owner, project, pipelineId, buildId, manualId } = await world();
      const stdout = await runPythonClient('python_gitlab_pipelines.py', [
        server.url,
        owner.token,
        String(project.id),
        String(pipelineId),
        String(buildId),
        String(manualId),
      ]);
      expect(JSON.parse(stdout.trim())).toEqual({
        listed: [pipelineId],
        // The manual job may be skipped (allow_failure by default): the pipeline passes, as in GitLab.
        pipeline: ['success', 'success', 'push'],
        jobs: ['build', 'deploy'],
        bridges: [['child', true]],
        created: ['api', 'main'],
        variables: [['PY', 'yes', 'env_var']],
        canceled: 'canceled',
        retried: 'pending',
        trace: 'Hello from the runner\n',
        erased: true,
        played: 'pending',
        job_canceled: 'canceled',
      });
    },
  );
});

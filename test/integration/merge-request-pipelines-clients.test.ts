/** Merge request pipelines and commit statuses through the real clients. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });

const CONFIG = `test:
  script: echo test
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
`;

/** A project that merges only after a successful pipeline, and its Maintainer. */
async function world() {
  const { project, owner } = await server.factories.ownedProjectWithReadme();
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  const res = await server.request('PUT', `/projects/${project.id}`, {
    token: owner.token,
    json: { only_allow_merge_if_pipeline_succeeds: true },
  });
  expect(res.status, res.text).toBe(200);
  return { project, maintainer };
}

describe('@gitbeaker/rest', () => {
  it('lists and creates merge request pipelines, posts statuses and merges when the pipeline succeeds', async () => {
    const w = await world();
    const api = new Gitlab({ host: server.url, token: w.maintainer.token });
    await api.Commits.create(
      w.project.id,
      'gb/feature',
      'CI',
      [{ action: 'create', filePath: '.gitlab-ci.yml', content: CONFIG }],
      {
        startBranch: 'main',
      },
    );
    const mr = await api.MergeRequests.create(w.project.id, 'gb/feature', 'main', 'Pipelines from gitbeaker');
    const opened = await waitFor(
      () => api.MergeRequests.allPipelines(w.project.id, mr.iid),
      (list) => list.length > 0,
    );
    expect(opened[0]).toMatchObject({ source: 'merge_request_event', sha: mr.sha });
    const created = await api.MergeRequests.createPipeline(w.project.id, mr.iid);
    expect(created).toMatchObject({ source: 'merge_request_event', sha: mr.sha, project_id: w.project.id });

    const status = await api.Commits.editStatus(w.project.id, mr.sha, 'running', {
      name: 'gb',
      ref: 'gb/feature',
    });
    expect(status).toMatchObject({ status: 'running', name: 'gb', ref: 'gb/feature' });
    await expect(
      api.Commits.editStatus(w.project.id, mr.sha, 'running', { name: 'gb', ref: 'gb/feature' }),
    ).rejects.toMatchObject({ cause: { response: { status: 400 } } });
    const statuses = await api.Commits.allStatuses(w.project.id, mr.sha, { name: 'gb' });
    expect(statuses.map((s) => s.status)).toEqual(['running']);

    const waiting = await api.MergeRequests.accept(w.project.id, mr.iid, { mergeWhenPipelineSucceeds: true });
    expect(waiting).toMatchObject({ state: 'opened', merge_when_pipeline_succeeds: true });
    await api.Commits.editStatus(w.project.id, mr.sha, 'success', { name: 'gb', ref: 'gb/feature' });
    const merged = await waitFor(
      () => api.MergeRequests.show(w.project.id, mr.iid),
      (shown) => shown.state === 'merged',
    );
    expect(merged.state).toBe('merged');
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'uses mr.pipelines and commit.statuses (needs Debian python3-gitlab)',
    async () => {
      const w = await world();
      const stdout = await runPythonClient('python_gitlab_merge_request_pipelines.py', [
        server.url,
        w.maintainer.token,
        String(w.project.id),
      ]);
      expect(JSON.parse(stdout.trim())).toEqual({
        opened: ['merge_request_event', true],
        created: ['merge_request_event'],
        listed: true,
        status: ['running', 'py', 'py/feature'],
        // The merge request pipelines' jobs are statuses of the commit too.
        statuses: ['py', 'test', 'test'],
        before: 'ci_still_running',
        waiting: ['opened', true],
        merged: 'merged',
        commit: ['success', 'external'],
      });
    },
  );
});

import { describe, expect, it } from 'vitest';
import type { Project } from '../../src/projects/project.entity.js';
import { useTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

type Json = Record<string, unknown>;
const server = useTestServer();

async function commit(
  token: string,
  project: Project,
  files: Record<string, string>,
  message = 'Add CI',
  branch = 'main',
  from?: string,
) {
  const res = await server.request('POST', `/projects/${project.id}/repository/commits`, {
    token,
    json: {
      branch,
      ...(from ? { start_branch: from } : {}),
      commit_message: message,
      actions: Object.entries(files).map(([file_path, content]) => ({
        action: 'create',
        file_path,
        content,
      })),
    },
  });
  expect(res.status, res.text).toBe(201);
  return (res.body as Json).id as string;
}

async function pipelineFor(token: string, project: Project, sha: string) {
  const list = await waitFor(
    () => server.request('GET', `/projects/${project.id}/pipelines?sha=${sha}`, { token }),
    (res) => (res.body as Json[]).length > 0,
  );
  expect((list.body as Json[]).length, list.text).toBe(1);
  return (list.body as Json[])[0];
}

async function jobsOf(token: string, project: Project, pipelineId: number) {
  const res = await server.request(
    'GET',
    `/projects/${project.id}/pipelines/${pipelineId}/jobs?per_page=100`,
    { token },
  );
  expect(res.status, res.text).toBe(200);
  return res.body as Json[];
}

describe('pipelines after a push', () => {
  it('makes the stages and jobs of the configuration, the first stage pending', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const sha = await commit(owner.token, project, {
      '.gitlab-ci.yml': `
stages: [build, test, deploy]
build:
  stage: build
  script: make
test:
  stage: test
  script: make test
deploy:
  stage: deploy
  script: make deploy
  when: manual
`,
    });
    const pipeline = await pipelineFor(owner.token, project, sha);
    expect(pipeline).toMatchObject({ source: 'push', ref: 'main', sha });
    const jobs = await waitFor(
      () => jobsOf(owner.token, project, pipeline.id as number),
      (list) => list.some((job) => job.status === 'pending'),
    );
    expect(jobs.map((job) => [job.name, job.stage, job.status])).toEqual([
      ['build', 'build', 'pending'],
      ['test', 'test', 'created'],
      ['deploy', 'deploy', 'created'],
    ]);
  });
});

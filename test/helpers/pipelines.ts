/** What the pipelines' tests do again and again: commit a configuration, find its pipeline, move its jobs. */
import { expect } from 'vitest';
import type { CiStatus } from '../../src/pipelines/pipeline.entity.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestServer } from './server.js';
import { waitFor } from './wait.js';

type Json = Record<string, unknown>;
export type JobJson = Json & { id: number; name: string; status: string };

export function pipelineHelpers(server: TestServer) {
  /** Commits `files` through the API (a push, as far as pipelines go) and answers the commit's id. */
  async function commit(
    token: string,
    project: Project,
    files: Record<string, string>,
    options: { message?: string; branch?: string; from?: string; action?: 'create' | 'update' } = {},
  ) {
    const res = await server.request('POST', `/projects/${project.id}/repository/commits`, {
      token,
      json: {
        branch: options.branch ?? 'main',
        ...(options.from ? { start_branch: options.from } : {}),
        commit_message: options.message ?? 'Add CI',
        actions: Object.entries(files).map(([file_path, content]) => ({
          action: options.action ?? 'create',
          file_path,
          content,
        })),
      },
    });
    expect(res.status, res.text).toBe(201);
    return (res.body as Json).id as string;
  }

  /** The one pipeline of `sha`, once the queue has made it. */
  async function pipelineFor(token: string, project: Project, sha: string, query = '') {
    const list = await waitFor(
      () => server.request('GET', `/projects/${project.id}/pipelines?sha=${sha}${query}`, { token }),
      (res) => (res.body as Json[]).length > 0,
    );
    expect((list.body as Json[]).length, list.text).toBe(1);
    return (list.body as Json[])[0] as Json & { id: number };
  }

  async function get(token: string, path: string) {
    const res = await server.request('GET', path, { token });
    expect(res.status, res.text).toBe(200);
    return res.body as Json & { id: number };
  }

  const jobsOf = async (token: string, project: Project, pipelineId: number, query = '') =>
    (await get(
      token,
      `/projects/${project.id}/pipelines/${pipelineId}/jobs?per_page=100${query}`,
    )) as unknown as JobJson[];

  /** Waits until the jobs' statuses (by name) are as given. */
  async function settle(
    token: string,
    project: Project,
    pipelineId: number,
    expected: Record<string, string>,
  ) {
    const jobs = await waitFor(
      () => jobsOf(token, project, pipelineId),
      (list) =>
        Object.entries(expected).every(
          ([name, status]) => list.find((j) => j.name === name)?.status === status,
        ),
    );
    expect(Object.fromEntries(jobs.map((j) => [j.name, j.status]))).toMatchObject(expected);
    return jobs;
  }

  /** Moves a job through `statuses` as a runner would report them. */
  const run = (jobId: number, ...statuses: CiStatus[]) =>
    statuses.reduce(
      (done, status) =>
        done.then(() => server.services.pipelines.jobs.updateStatus(jobId, status)).then(() => undefined),
      Promise.resolve(),
    );

  const byName = (jobs: Array<Json & { id: number; name: string }>, name: string) =>
    jobs.find((j) => j.name === name)!;

  return { commit, pipelineFor, get, jobsOf, settle, run, byName };
}

/**
 * Merge request pipelines: created on request, when a merge request opens and when its source branch
 * moves; the merge request's `head_pipeline`; and the merge checks and automatic merge that wait on it.
 */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });

type Json = Record<string, unknown>;

const MR_JOBS = `test:
  script: echo test
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
`;
const BRANCH_JOBS = `build:
  script: echo build
`;

async function world(settings: Json = {}) {
  const { owner, project } = await server.factories.ownedProjectWithReadme();
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
  if (Object.keys(settings).length > 0) {
    const res = await server.request('PUT', `/projects/${project.id}`, {
      token: owner.token,
      json: settings,
    });
    expect(res.status, res.text).toBe(200);
  }
  return { owner, project, maintainer, developer, reporter };
}

/** A commit adding `path` to `branch`, made from `main` unless `onto` says the branch exists. */
async function commitFile(
  user: TestUser,
  project: Project,
  branch: string,
  path: string,
  content: string,
  onto = false,
) {
  const res = await server.request('POST', `/projects/${project.id}/repository/commits`, {
    token: user.token,
    json: {
      branch,
      ...(onto ? {} : { start_branch: 'main' }),
      commit_message: `Change ${path}`,
      actions: [{ action: 'create', file_path: path, content }],
    },
  });
  expect(res.status, res.text).toBe(201);
  return (res.body as Json).id as string;
}

async function openMr(user: TestUser, project: Project, branch: string): Promise<Json> {
  const res = await server.request('POST', `/projects/${project.id}/merge_requests`, {
    token: user.token,
    json: { source_branch: branch, target_branch: 'main', title: 'Add a feature' },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as Json;
}

const pipelines = async (user: TestUser, project: Project, iid: number) => {
  const res = await server.request('GET', `/projects/${project.id}/merge_requests/${iid}/pipelines`, {
    token: user.token,
  });
  expect(res.status, res.text).toBe(200);
  return res.body as Json[];
};

const getMr = async (user: TestUser, project: Project, iid: number) => {
  const res = await server.request('GET', `/projects/${project.id}/merge_requests/${iid}`, {
    token: user.token,
  });
  expect(res.status, res.text).toBe(200);
  return res.body as Json;
};

/** The merge request once its merge status check ran. */
const checkedMr = (user: TestUser, project: Project, iid: number) =>
  waitFor(
    () => getMr(user, project, iid),
    (mr) => !['unchecked', 'checking'].includes(mr.merge_status as string),
  );

const postStatus = async (user: TestUser, project: Project, sha: string, json: Json) => {
  const res = await server.request('POST', `/projects/${project.id}/statuses/${sha}`, {
    token: user.token,
    json,
  });
  expect(res.status, res.text).toBe(201);
  return res.body as Json;
};

describe('merge request pipelines', () => {
  it('are made when a merge request opens, when its branch moves, and on request', async () => {
    const w = await world();
    const head = await commitFile(w.developer, w.project, 'feature', '.gitlab-ci.yml', MR_JOBS);
    const mr = await openMr(w.developer, w.project, 'feature');
    const iid = mr.iid as number;

    const first = await waitFor(
      () => pipelines(w.reporter, w.project, iid),
      (list) => list.some((p) => p.source === 'merge_request_event'),
    );
    const opened = first.find((p) => p.source === 'merge_request_event')!;
    expect(opened).toMatchObject({
      sha: head,
      ref: `refs/merge-requests/${iid}/head`,
      project_id: w.project.id,
    });

    const shown = await getMr(w.reporter, w.project, iid);
    expect(shown.head_pipeline).toMatchObject({ id: opened.id, sha: head, source: 'merge_request_event' });
    expect((shown.head_pipeline as Json).user).toMatchObject({ id: w.developer.user.id });
    expect(shown.pipeline).toMatchObject({ id: opened.id });

    // A push to the source branch: a pipeline on the new head, which becomes the head pipeline.
    const next = await commitFile(w.developer, w.project, 'feature', 'more.txt', 'more\n', true);
    const moved = await waitFor(
      () => pipelines(w.reporter, w.project, iid),
      (list) => list.some((p) => p.source === 'merge_request_event' && p.sha === next),
    );
    const newest = moved.find((p) => p.sha === next && p.source === 'merge_request_event')!;
    expect(moved[0].id).toBe(newest.id);
    expect((await getMr(w.reporter, w.project, iid)).head_pipeline).toMatchObject({
      id: newest.id,
      sha: next,
    });

    // On request: a new one each time, as the caller; async answers 202 and makes it on the queue.
    const created = await server.request(
      'POST',
      `/projects/${w.project.id}/merge_requests/${iid}/pipelines`,
      {
        token: w.developer.token,
      },
    );
    expect(created.status, created.text).toBe(200);
    expect(created.body).toMatchObject({
      source: 'merge_request_event',
      sha: next,
      user: { id: w.developer.user.id },
      detailed_status: { group: expect.any(String) },
    });
    const queued = await server.request(
      'POST',
      `/projects/${w.project.id}/merge_requests/${iid}/pipelines?async=true`,
      { token: w.developer.token },
    );
    expect(queued.status, queued.text).toBe(202);
    const after = await waitFor(
      () => pipelines(w.reporter, w.project, iid),
      (list) => list.filter((p) => p.sha === next && p.source === 'merge_request_event').length >= 3,
    );
    expect(after.filter((p) => p.sha === next && p.source === 'merge_request_event')).toHaveLength(3);

    // Pages, newest first.
    const page = await server.request(
      'GET',
      `/projects/${w.project.id}/merge_requests/${iid}/pipelines?per_page=2`,
      { token: w.reporter.token },
    );
    expect((page.body as Json[]).map((p) => p.id)).toEqual(after.slice(0, 2).map((p) => p.id));
    expect(page.headers.get('x-total')).toBe(String(after.length));
  });

  it('refuses a configuration without merge request jobs, closed merge requests and Reporters', async () => {
    const w = await world();
    await commitFile(w.developer, w.project, 'feature', '.gitlab-ci.yml', BRANCH_JOBS);
    const mr = await openMr(w.developer, w.project, 'feature');
    const path = `/projects/${w.project.id}/merge_requests/${mr.iid as number}/pipelines`;
    const empty = await server.request('POST', path, { token: w.developer.token });
    expect(empty.status, empty.text).toBe(400);
    expect(empty.body).toEqual({ message: { base: [expect.stringContaining('rules configuration')] } });
    expect((await server.request('POST', path, { token: w.reporter.token })).status).toBe(403);
    expect((await server.request('GET', path, { token: w.reporter.token })).status).toBe(200);
    expect(
      (
        await server.request('POST', `/projects/${w.project.id}/merge_requests/99/pipelines`, {
          token: w.developer.token,
        })
      ).status,
    ).toBe(404);
    const closed = await server.request(
      'PUT',
      `/projects/${w.project.id}/merge_requests/${mr.iid as number}`,
      {
        token: w.developer.token,
        json: { state_event: 'close' },
      },
    );
    expect(closed.status, closed.text).toBe(200);
    const refused = await server.request('POST', path, { token: w.developer.token });
    expect(refused.status).toBe(405);
    expect(refused.body).toEqual({ message: '405 Method Not Allowed' });
  });
});

describe('rules: changes', () => {
  it('compare a merge request pipeline with the merge request base', async () => {
    const w = await world();
    const config = `test:
  script: echo test
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
      changes: [src/**/*]
`;
    await commitFile(w.developer, w.project, 'feature', '.gitlab-ci.yml', config);
    const mr = await openMr(w.developer, w.project, 'feature');
    const path = `/projects/${w.project.id}/merge_requests/${mr.iid as number}/pipelines`;
    expect((await server.request('POST', path, { token: w.developer.token })).status).toBe(400);
    await commitFile(w.developer, w.project, 'feature', 'src/app.txt', 'app\n', true);
    await waitFor(
      () => getMr(w.reporter, w.project, mr.iid as number),
      (shown) => (shown.diff_refs as Json | null)?.head_sha === shown.sha && shown.changes_count === '2',
    );
    const created = await server.request('POST', path, { token: w.developer.token });
    expect(created.status, created.text).toBe(200);
  });
});

describe('merge request pipelines of a fork', () => {
  it('run in the fork, as its member, and only its members may ask for one', async () => {
    const owner = await server.factories.user();
    const created = await server.request('POST', '/projects', {
      token: owner.token,
      json: {
        name: `up-${Math.random().toString(36).slice(2, 8)}`,
        initialize_with_readme: true,
        visibility: 'public',
      },
    });
    expect(created.status, created.text).toBe(201);
    const upstream = created.body as Json;
    const contributor = await server.factories.user();
    const forked = await server.request('POST', `/projects/${upstream.id as number}/fork`, {
      token: contributor.token,
    });
    expect(forked.status, forked.text).toBe(201);
    const fork = forked.body as Json;
    const res = await server.request('POST', `/projects/${fork.id as number}/repository/commits`, {
      token: contributor.token,
      json: {
        branch: 'feature',
        start_branch: 'main',
        commit_message: 'CI',
        actions: [{ action: 'create', file_path: '.gitlab-ci.yml', content: MR_JOBS }],
      },
    });
    expect(res.status, res.text).toBe(201);
    const opened = await server.request('POST', `/projects/${fork.id as number}/merge_requests`, {
      token: contributor.token,
      json: {
        source_branch: 'feature',
        target_branch: 'main',
        target_project_id: upstream.id,
        title: 'From a fork',
      },
    });
    expect(opened.status, opened.text).toBe(201);
    const path = `/projects/${upstream.id as number}/merge_requests/${(opened.body as Json).iid as number}/pipelines`;
    const list = await waitFor(
      async () => (await server.request('GET', path, { token: owner.token })).body as Json[],
      (items) => items.length > 0,
    );
    expect(list[0]).toMatchObject({
      project_id: fork.id,
      source: 'merge_request_event',
      web_url: `${server.url}/${fork.path_with_namespace as string}/-/pipelines/${list[0].id as number}`,
    });
    // The upstream's owner may not create pipelines in the fork: 405, as GitLab.
    expect((await server.request('POST', path, { token: owner.token })).status).toBe(405);
  });
});

describe('merging on a pipeline', () => {
  it('holds the merge until the head pipeline succeeds, and an automatic merge goes through then', async () => {
    const w = await world({ only_allow_merge_if_pipeline_succeeds: true });
    const head = await commitFile(w.developer, w.project, 'feature', 'feature.txt', 'x\n');
    const mr = await openMr(w.developer, w.project, 'feature');
    const iid = mr.iid as number;
    const merge = (json: Json = {}) =>
      server.request('PUT', `/projects/${w.project.id}/merge_requests/${iid}/merge`, {
        token: w.maintainer.token,
        json,
      });

    // No pipeline: the CI check fails.
    expect(await checkedMr(w.reporter, w.project, iid)).toMatchObject({
      detailed_merge_status: 'ci_must_pass',
      head_pipeline: null,
    });
    expect((await merge()).status).toBe(405);

    await postStatus(w.developer, w.project, head, { state: 'running', ref: 'feature', name: 'ci' });
    expect(await getMr(w.reporter, w.project, iid)).toMatchObject({
      detailed_merge_status: 'ci_still_running',
      head_pipeline: { status: 'running', source: 'external', sha: head },
    });
    expect((await merge()).status).toBe(405);
    const auto = await merge({ merge_when_pipeline_succeeds: true });
    expect(auto.status, auto.text).toBe(200);
    expect(auto.body).toMatchObject({ state: 'opened', merge_when_pipeline_succeeds: true });

    // A failed pipeline holds the merge back and leaves the automatic merge set.
    await postStatus(w.developer, w.project, head, { state: 'failed', ref: 'feature', name: 'ci' });
    expect(await getMr(w.reporter, w.project, iid)).toMatchObject({
      detailed_merge_status: 'ci_must_pass',
      merge_when_pipeline_succeeds: true,
      state: 'opened',
    });

    // The job posted again, successfully: the pipeline succeeds and the merge request merges.
    await postStatus(w.developer, w.project, head, { state: 'success', ref: 'feature', name: 'ci' });
    const merged = await waitFor(
      () => getMr(w.reporter, w.project, iid),
      (shown) => shown.state === 'merged',
    );
    expect(merged).toMatchObject({ state: 'merged', merged_by: { id: w.maintainer.user.id } });
  });

  it('lets a skipped pipeline through only with allow_merge_on_skipped_pipeline', async () => {
    const cases: Array<[boolean, string]> = [
      [false, 'ci_must_pass'],
      [true, 'mergeable'],
    ];
    for (const [allowSkipped, expected] of cases) {
      const w = await world({
        only_allow_merge_if_pipeline_succeeds: true,
        allow_merge_on_skipped_pipeline: allowSkipped,
      });
      const head = await commitFile(w.developer, w.project, 'feature', 'feature.txt', 'x\n');
      const mr = await openMr(w.developer, w.project, 'feature');
      await postStatus(w.developer, w.project, head, { state: 'skipped', ref: 'feature' });
      const shown = await checkedMr(w.reporter, w.project, mr.iid as number);
      expect([allowSkipped, shown.detailed_merge_status]).toEqual([allowSkipped, expected]);
    }
  });

  it('ignores pipelines when the project does not require them', async () => {
    const w = await world();
    const head = await commitFile(w.developer, w.project, 'feature', 'feature.txt', 'x\n');
    const mr = await openMr(w.developer, w.project, 'feature');
    await postStatus(w.developer, w.project, head, { state: 'failed', ref: 'feature' });
    const shown = await checkedMr(w.reporter, w.project, mr.iid as number);
    expect(shown).toMatchObject({ detailed_merge_status: 'mergeable', head_pipeline: { status: 'failed' } });
    const list = await server.request('GET', `/projects/${w.project.id}/merge_requests`, {
      token: w.reporter.token,
    });
    expect((list.body as Json[])[0]).toMatchObject({ pipeline: { status: 'failed', sha: head } });
  });
});

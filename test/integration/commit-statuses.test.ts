/**
 * Commit statuses: posting them (the external pipeline, GitLab's transitions, who may), listing them,
 * and the commit's `status` and `last_pipeline` they move.
 */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

/** A project with a README on its protected `main`, a `feature` branch one commit ahead, and members. */
async function world() {
  const { owner, project } = await server.factories.ownedProjectWithReadme();
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
  const res = await server.request('POST', `/projects/${project.id}/repository/commits`, {
    token: developer.token,
    json: {
      branch: 'feature',
      start_branch: 'main',
      commit_message: 'Add a feature',
      actions: [{ action: 'create', file_path: 'feature.txt', content: 'x\n' }],
    },
  });
  expect(res.status, res.text).toBe(201);
  const main = (await commit(owner, project, 'main')).id as string;
  return { owner, project, developer, reporter, feature: (res.body as Json).id as string, main };
}

async function commit(user: TestUser, project: Project, ref: string): Promise<Json> {
  const res = await server.request('GET', `/projects/${project.id}/repository/commits/${ref}`, {
    token: user.token,
  });
  expect(res.status, res.text).toBe(200);
  return res.body as Json;
}

const post = (user: TestUser, project: Project, sha: string, json: Json) =>
  server.request('POST', `/projects/${project.id}/statuses/${sha}`, { token: user.token, json });

const list = (user: TestUser, project: Project, sha: string, query = '') =>
  server.request('GET', `/projects/${project.id}/repository/commits/${sha}/statuses${query}`, {
    token: user.token,
  });

describe('posting a status', () => {
  it('makes an external pipeline for the first status of a commit and keeps later ones in it', async () => {
    const w = await world();
    expect(await commit(w.developer, w.project, w.feature)).toMatchObject({
      status: null,
      last_pipeline: null,
    });

    const first = await post(w.developer, w.project, w.feature, {
      state: 'pending',
      ref: 'feature',
      target_url: 'https://ci.example.com/builds/1',
      description: 'Queued',
      coverage: 81.5,
    });
    expect(first.status, first.text).toBe(201);
    const status = first.body as Json;
    expect(status).toMatchObject({
      sha: w.feature,
      ref: 'feature',
      status: 'pending',
      name: 'default',
      target_url: 'https://ci.example.com/builds/1',
      description: 'Queued',
      coverage: 81.5,
      allow_failure: false,
      finished_at: null,
      author: { id: w.developer.user.id, username: w.developer.user.username },
    });

    const detail = await commit(w.developer, w.project, w.feature);
    expect(detail.status).toBe('pending');
    expect(detail.last_pipeline).toMatchObject({
      id: status.pipeline_id,
      project_id: w.project.id,
      sha: w.feature,
      ref: 'feature',
      status: 'pending',
      source: 'external',
    });

    // The same name again updates that status; `context` is `name`'s alias.
    const running = await post(w.developer, w.project, w.feature, { state: 'running', context: 'default' });
    expect(running.status, running.text).toBe(201);
    expect(running.body).toMatchObject({
      id: status.id,
      status: 'running',
      target_url: 'https://ci.example.com/builds/1',
    });
    expect((running.body as Json).started_at).toEqual(expect.any(String));

    // Another name joins the same pipeline; the pipeline's status follows its jobs.
    const lint = await post(w.developer, w.project, w.feature, {
      state: 'failed',
      name: 'lint',
      ref: 'feature',
    });
    expect(lint.status, lint.text).toBe(201);
    expect(lint.body).toMatchObject({ pipeline_id: status.pipeline_id, status: 'failed' });
    await post(w.developer, w.project, w.feature, { state: 'success', ref: 'feature' });
    expect((await commit(w.developer, w.project, w.feature)).status).toBe('failed');
    // A finished status posted again is a new one; the older one is kept as retried.
    const again = await post(w.developer, w.project, w.feature, {
      state: 'success',
      name: 'lint',
      ref: 'feature',
    });
    expect(again.status, again.text).toBe(201);
    expect((again.body as Json).id).not.toBe((lint.body as Json).id);
    expect((await commit(w.developer, w.project, w.feature)).status).toBe('success');
  });

  it('takes the first branch containing the commit when no ref is given', async () => {
    const w = await world();
    const res = await post(w.owner, w.project, w.main, { state: 'success' });
    expect(res.status, res.text).toBe(201);
    // `feature` and `main` both contain main's head: `feature` comes first by name.
    expect(res.body).toMatchObject({ ref: 'feature', status: 'success' });
    const named = await post(w.owner, w.project, 'main', { state: 'success', ref: 'main', name: 'by-ref' });
    expect(named.status, named.text).toBe(201);
    expect(named.body).toMatchObject({ sha: w.main, ref: 'main' });
  });

  // GitLab's state machine: a new status is `created`; an existing one is pending or running.
  const transitions: Array<[string, string, string | null]> = [
    [
      'pending',
      'pending',
      'Cannot transition status via :enqueue from :pending (Reason(s): Status cannot transition via "enqueue")',
    ],
    ['pending', 'running', null],
    ['pending', 'success', null],
    ['pending', 'failed', null],
    ['pending', 'canceled', null],
    ['pending', 'skipped', null],
    [
      'running',
      'pending',
      'Cannot transition status via :enqueue from :running (Reason(s): Status cannot transition via "enqueue")',
    ],
    [
      'running',
      'running',
      'Cannot transition status via :run from :running (Reason(s): Status cannot transition via "run")',
    ],
    ['running', 'success', null],
    ['running', 'failed', null],
    ['running', 'canceled', null],
    [
      'running',
      'skipped',
      'Cannot transition status via :skip from :running (Reason(s): Status cannot transition via "skip")',
    ],
  ];

  it('moves a status as GitLab allows, and refuses the rest with its messages', async () => {
    const w = await world();
    for (const [index, [from, to, refusal]] of transitions.entries()) {
      const name = `t${index}`;
      const first = await post(w.developer, w.project, w.feature, { state: from, name, ref: 'feature' });
      expect(first.status, first.text).toBe(201);
      const second = await post(w.developer, w.project, w.feature, { state: to, name, ref: 'feature' });
      if (refusal) {
        expect([from, to, second.status]).toEqual([from, to, 400]);
        expect(second.body).toEqual({ message: refusal });
      } else {
        expect([from, to, second.status], second.text).toEqual([from, to, 201]);
        expect(second.body).toMatchObject({ id: (first.body as Json).id, status: to });
      }
    }
    // Every new state works from nothing.
    for (const state of ['pending', 'running', 'success', 'failed', 'canceled', 'skipped']) {
      const res = await post(w.developer, w.project, w.feature, {
        state,
        name: `new-${state}`,
        ref: 'feature',
      });
      expect([state, res.status], res.text).toEqual([state, 201]);
      expect((res.body as Json).status).toBe(state);
    }
  });

  it('refuses bad input, unknown commits and pipelines, and callers without the right', async () => {
    const w = await world();
    const bad: Array<[Json, number, unknown]> = [
      [{}, 400, { error: 'state is missing' }],
      [{ state: 'done' }, 400, { error: 'state does not have a valid value' }],
      [
        { state: 'success', ref: 'r'.repeat(256) },
        400,
        expect.objectContaining({ error: expect.any(String) }),
      ],
      [
        { state: 'success', target_url: 'ftp://ci.example.com/1' },
        400,
        { message: { target_url: ['is blocked: Only allowed schemes are http, https'] } },
      ],
      [
        { state: 'success', pipeline_id: 2147483647 },
        404,
        { message: '404 Pipeline for pipeline_id, sha and ref Not Found' },
      ],
    ];
    for (const [json, code, body] of bad) {
      const res = await post(w.developer, w.project, w.feature, json);
      expect([json, res.status], res.text).toEqual([json, code]);
      expect(res.body).toEqual(body);
    }
    const unknown = await post(w.developer, w.project, '0123456789abcdef0123456789abcdef01234567', {
      state: 'success',
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Commit Not Found' });

    // A commit no branch contains any more (its branch was deleted) needs a ref.
    const res = await server.request('DELETE', `/projects/${w.project.id}/repository/branches/feature`, {
      token: w.owner.token,
    });
    expect(res.status, res.text).toBe(204);
    const orphan = await post(w.developer, w.project, w.feature, { state: 'success' });
    expect(orphan.status).toBe(404);
    expect(orphan.body).toEqual({ message: '404 References for commit Not Found' });

    // A Reporter may not post; a Developer may not post on the protected main (Maintainers push there).
    expect((await post(w.reporter, w.project, w.main, { state: 'success', ref: 'main' })).status).toBe(403);
    const protectedRef = await post(w.developer, w.project, w.main, { state: 'success', ref: 'main' });
    expect(protectedRef.status).toBe(403);
    expect(protectedRef.body).toEqual({ message: '403 Forbidden' });
    expect((await post(w.owner, w.project, w.main, { state: 'success', ref: 'main' })).status).toBe(201);
  });

  it('adds to the pipeline pipeline_id names, and to the newest pipeline of the ref otherwise', async () => {
    const w = await world();
    const a = (await post(w.owner, w.project, w.main, { state: 'running', ref: 'main', name: 'a' }))
      .body as Json;
    // Another ref of the same commit gets a pipeline of its own.
    const b = (await post(w.owner, w.project, w.main, { state: 'running', ref: 'feature', name: 'b' }))
      .body as Json;
    expect(b.pipeline_id).not.toBe(a.pipeline_id);
    const c = await post(w.owner, w.project, w.main, {
      state: 'success',
      name: 'c',
      pipeline_id: a.pipeline_id,
    });
    expect(c.status, c.text).toBe(201);
    expect(c.body).toMatchObject({ pipeline_id: a.pipeline_id, ref: 'main' });
    // Without either, the newest pipeline of the commit, with its ref.
    const d = await post(w.owner, w.project, w.main, { state: 'success', name: 'd' });
    expect(d.body).toMatchObject({ pipeline_id: b.pipeline_id, ref: 'feature' });
  });
});

describe('listing statuses', () => {
  it('lists the latest statuses with filters, order and pages; all=true adds the retried ones', async () => {
    const w = await world();
    for (const name of ['one', 'two', 'three'])
      expect(
        (await post(w.developer, w.project, w.feature, { state: 'running', name, ref: 'feature' })).status,
      ).toBe(201);
    await post(w.developer, w.project, w.feature, { state: 'success', name: 'one', ref: 'feature' });
    const retried = await post(w.developer, w.project, w.feature, {
      state: 'failed',
      name: 'one',
      ref: 'feature',
    });
    expect(retried.status).toBe(201);

    const all = await list(w.reporter, w.project, w.feature);
    expect(all.status, all.text).toBe(200);
    expect((all.body as Json[]).map((s) => [s.name, s.status])).toEqual([
      ['two', 'running'],
      ['three', 'running'],
      ['one', 'failed'],
    ]);
    expect(all.headers.get('x-total')).toBe('3');
    const withRetried = await list(w.reporter, w.project, w.feature, '?all=true');
    expect((withRetried.body as Json[]).map((s) => s.name)).toEqual(['one', 'two', 'three', 'one']);

    const cases: Array<[string, string[]]> = [
      ['?name=two', ['two']],
      ['?stage=external&sort=desc', ['one', 'three', 'two']],
      ['?stage=test', []],
      ['?ref=main', []],
      ['?ref=feature&order_by=pipeline_id', ['two', 'three', 'one']],
      [`?pipeline_id=${(retried.body as Json).pipeline_id}`, ['two', 'three', 'one']],
      ['?pipeline_id=2147483647', []],
      ['?per_page=2&page=2', ['one']],
    ];
    for (const [query, names] of cases) {
      const res = await list(w.reporter, w.project, w.feature, query);
      expect([query, res.status], res.text).toEqual([query, 200]);
      expect([query, (res.body as Json[]).map((s) => s.name)]).toEqual([query, names]);
    }
    const page = await list(w.reporter, w.project, w.feature, '?per_page=2');
    expect(page.headers.get('link')).toContain('rel="next"');

    expect((await list(w.reporter, w.project, 'feature')).status).toBe(200);
    const missing = await list(w.reporter, w.project, '0123456789abcdef0123456789abcdef01234567');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Commit Not Found' });
    const outsider = await server.factories.user();
    expect((await list(outsider, w.project, w.feature)).status).toBe(404);
    expect(
      (await server.request('GET', `/projects/${w.project.id}/repository/commits/${w.feature}/statuses`))
        .status,
    ).toBe(401);
  });
});

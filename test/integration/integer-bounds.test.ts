/**
 * Integers at and beyond PostgreSQL's `integer` range: beyond it a 400 from validation (or GitLab's 404
 * for a path id), within it the answer any other value gets, and a page past the end of every offset
 * list an empty page with the list's usual headers. Never a database error.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSpec } from '../../src/core/contract.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer, type RequestOptions } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

/** Out of range both ways: ±2^31 (and one beyond), ±2^63 (and one beyond). */
const BEYOND = [
  '2147483648',
  '2147483649',
  '-2147483649',
  '9223372036854775807',
  '9223372036854775808',
  '9223372036854775809',
  '-9223372036854775808',
  '-9223372036854775809',
];
/** The edges of PostgreSQL's `integer`, and just inside them. */
const WITHIN = ['2147483647', '2147483646', '-2147483648', '-2147483647', '0', '-1'];

let admin: TestUser;
let ids: Record<string, number | string>;

beforeAll(async () => {
  admin = await server.factories.user({ admin: true });
  const token = admin.token;
  const post = async (path: string, json: Json) => {
    const response = await server.request('POST', path, { token, json });
    expect(response.status, `${path}: ${response.text}`).toBe(201);
    return response.body as Json;
  };
  const group = await post('/groups', { name: 'bounds', path: `bounds-${Date.now()}` });
  const project = await post('/projects', {
    name: 'bounds',
    namespace_id: group.id,
    initialize_with_readme: true,
  });
  const id = project.id as number;
  await post(`/projects/${id}/repository/branches`, { branch: 'feature', ref: 'main' });
  await post(`/projects/${id}/repository/commits`, {
    branch: 'feature',
    commit_message: 'a change',
    actions: [{ action: 'create', file_path: 'lib/parser.rb', content: 'x' }],
  });
  const mr = await post(`/projects/${id}/merge_requests`, {
    source_branch: 'feature',
    target_branch: 'main',
    title: 'bounds',
  });
  const note = await post(`/projects/${id}/merge_requests/${mr.iid}/notes`, { body: 'a note' });
  const agent = await post(`/projects/${id}/cluster_agents`, { name: 'agent' });
  const snippet = await post('/snippets', {
    title: 'bounds',
    visibility: 'public',
    files: [{ file_path: 'a.txt', content: 'a' }],
  });
  ids = { project: id, group: group.id as number, mr: mr.iid as number, note: note.id as number };
  ids.agent = agent.id as number;
  ids.snippet = snippet.id as number;
  const ci = await post(`/projects/${id}/repository/commits`, {
    branch: 'main',
    commit_message: 'CI',
    actions: [{ action: 'create', file_path: '.gitlab-ci.yml', content: 'job: { script: x }\n' }],
  });
  ids.sha = ci.id as string;
  ids.pipeline = (await post(`/projects/${id}/pipeline`, { ref: 'main' })).id as number;
  ids.schedule = (
    await post(`/projects/${id}/pipeline_schedules`, {
      description: 'nightly',
      ref: 'main',
      cron: '0 1 * * *',
    })
  ).id as number;
  ids.runner = (await post('/user/runners', { runner_type: 'project_type', project_id: id })).id as number;
});

/** Every offset-paginated list of the contract, its path ids filled from the data above. */
const LISTS = [
  '/projects',
  '/projects/:project/forks',
  '/projects/:project/members',
  '/projects/:project/members/all',
  '/groups/:group/members',
  '/groups/:group/members/all',
  '/personal_access_tokens',
  '/projects/:project/access_tokens',
  '/groups/:group/access_tokens',
  '/users',
  '/groups',
  '/groups/:group/subgroups',
  '/groups/:group/descendant_groups',
  '/groups/:group/projects',
  '/projects/:project/repository/tree',
  '/projects/:project/repository/contributors',
  '/projects/:project/repository/branches',
  '/projects/:project/repository/commits',
  // An author filter walks through `git log --skip`, which git reads as a C int.
  '/projects/:project/repository/commits?author=User',
  '/projects/:project/repository/tags',
  '/projects/:project/protected_tags',
  '/projects/:project/protected_branches',
  '/projects/:project/labels',
  '/groups/:group/labels',
  '/projects/:project/milestones',
  '/groups/:group/milestones',
  '/merge_requests?scope=all',
  '/projects/:project/merge_requests',
  '/groups/:group/merge_requests',
  '/projects/:project/merge_requests/:mr/commits',
  '/projects/:project/merge_requests/:mr/diffs',
  '/projects/:project/merge_requests/:mr/versions',
  '/projects/:project/merge_requests/:mr/notes',
  '/projects/:project/merge_requests/:mr/discussions',
  '/projects/:project/merge_requests/:mr/award_emoji',
  '/projects/:project/merge_requests/:mr/notes/:note/award_emoji',
  '/projects/:project/merge_requests/:mr/resource_label_events',
  '/projects/:project/merge_requests/:mr/resource_milestone_events',
  '/projects/:project/merge_requests/:mr/resource_state_events',
  '/projects/:project/approval_rules',
  '/projects/:project/merge_requests/:mr/approval_rules',
  '/projects/:project/cluster_agents',
  '/projects/:project/cluster_agents/:agent/tokens',
  '/projects/:project/feature_flags_user_lists',
  '/projects/:project/feature_flags',
  '/projects/:project/remote_mirrors',
  '/projects/:project/variables',
  '/groups/:group/variables',
  '/admin/ci/variables',
  '/projects/:project/pipelines',
  '/projects/:project/pipelines/:pipeline/jobs',
  '/projects/:project/pipelines/:pipeline/bridges',
  '/projects/:project/jobs',
  '/projects/:project/merge_requests/:mr/pipelines',
  '/projects/:project/repository/commits/:sha/statuses',
  '/projects/:project/triggers',
  '/projects/:project/pipeline_schedules',
  '/projects/:project/pipeline_schedules/:schedule/pipelines',
  '/projects/:project/environments',
  '/runners',
  '/runners/all',
  '/runners/:runner/jobs',
  '/projects/:project/runners',
  '/groups/:group/runners',
  '/projects/:project/job_token_scope/allowlist',
  '/projects/:project/job_token_scope/groups_allowlist',
  '/projects/:project/deployments',
  '/templates/gitlab_ci_ymls',
  '/projects/:project/snippets',
  '/snippets',
  '/snippets/public',
  '/snippets/all',
  '/projects/:project/uploads',
  '/project_repository_storage_moves',
  '/projects/:project/repository_storage_moves',
  '/group_repository_storage_moves',
  '/groups/:group/repository_storage_moves',
  '/snippet_repository_storage_moves',
  '/snippets/:snippet/repository_storage_moves',
];

const filled = (list: string) => list.replace(/:([a-z]+)/g, (_, name: string) => String(ids[name]));
const withQuery = (path: string, query: string) => `${path}${path.includes('?') ? '&' : '?'}${query}`;
const PAGE_HEADERS = ['x-page', 'x-per-page', 'x-total', 'x-total-pages', 'x-next-page', 'x-prev-page'];
const present = (headers: Headers) => PAGE_HEADERS.filter((name) => headers.has(name));

describe('a page past the end', () => {
  it('covers every list of the contract that takes a page', () => {
    type Operation = { parameters?: Array<{ name?: string; $ref?: string }> };
    const paths = loadSpec().paths as Record<string, { get?: Operation }>;
    const paged = Object.entries(paths)
      .filter(([, item]) => item.get?.parameters?.some((p) => p.name === 'page' || p.$ref?.endsWith('/Page')))
      .map(([path]) => path.replace(/\{[a-z_]+\}/g, '{}'));
    const listed = LISTS.map((list) => list.split('?')[0].replace(/:[a-z]+/g, '{}'));
    expect(new Set(listed)).toEqual(new Set(paged));
  });

  it.each(LISTS)(
    '%s: the last pages of the widest ranges are empty, with the usual headers',
    async (list) => {
      const path = filled(list);
      const first = await server.request('GET', withQuery(path, 'per_page=1'), { token: admin.token });
      expect(first.status, first.text).toBe(200);
      // A billion pages in (an offset past PostgreSQL's integer), and the widest page the contract allows.
      for (const [page, perPage] of [
        ['1000000000', '100'],
        ['2147483647', '2147483647'],
      ]) {
        const response = await server.request('GET', withQuery(path, `page=${page}&per_page=${perPage}`), {
          token: admin.token,
        });
        expect(response.status, `page=${page}&per_page=${perPage}: ${response.text}`).toBe(200);
        expect(response.body).toEqual([]);
        expect(present(response.headers)).toEqual(present(first.headers));
        if (first.headers.has('x-page')) expect(response.headers.get('x-page')).toBe(page);
        if (first.headers.has('x-per-page'))
          expect(response.headers.get('x-per-page')).toBe(String(Math.min(Number(perPage), 100)));
        if (first.headers.has('x-total'))
          expect(response.headers.get('x-total')).toBe(first.headers.get('x-total'));
        if (first.headers.has('x-next-page')) expect(response.headers.get('x-next-page')).toBe('');
        expect(response.headers.has('link')).toBe(first.headers.has('link'));
      }
    },
  );

  it.each(LISTS)('%s: page and per_page beyond their bounds are a 400', async (list) => {
    for (const query of ['page=2147483648', 'page=-9223372036854775809', 'page=0', 'per_page=2147483648']) {
      const response = await server.request('GET', withQuery(filled(list), query), { token: admin.token });
      expect(response.status, `${query}: ${response.text}`).toBe(400);
      expect(response.body).toEqual({ error: `${query.split('=')[0]} is invalid` });
    }
  });
});

describe('ids beyond PostgreSQL integer', () => {
  /** A JSON body with the integer written exactly as given (JSON.stringify would round it). */
  const rawJson = (fields: string): RequestOptions => ({
    body: `{${fields}}`,
    headers: { 'Content-Type': 'application/json' },
  });
  /** Each cited request with the integer in place, and what an in-range value that names nothing gets. */
  const CITED: Array<[string, (value: string) => [string, string, RequestOptions], number[]]> = [
    ['GET /projects?id_after', (v) => ['GET', `/projects?id_after=${v}`, {}], [200]],
    ['GET /projects?id_before', (v) => ['GET', `/projects?id_before=${v}`, {}], [200]],
    [
      'GET /personal_access_tokens?user_id',
      (v) => ['GET', `/personal_access_tokens?user_id=${v}`, {}],
      // GitLab's 404 for a user that does not exist.
      [200, 404],
    ],
    [
      'POST /projects namespace_id',
      (v) => ['POST', '/projects', rawJson(`"name":"n${v.replace('-', 'm')}","namespace_id":${v}`)],
      [404],
    ],
    [
      'POST /projects/:id/share group_id',
      (v) => ['POST', `/projects/${ids.project}/share`, rawJson(`"group_id":${v},"group_access":30`)],
      [404],
    ],
    [
      'GET /projects/:id/members/:user_id',
      (v) => ['GET', `/projects/${ids.project}/members/${v}`, {}],
      [404],
    ],
  ];

  it.each(CITED)('%s: beyond is a 400 naming the parameter', async (label, request) => {
    const name = label.split(/[ ?]/).pop()!;
    for (const value of BEYOND) {
      const [method, path, options] = request(value);
      const response = await server.request(method, path, { token: admin.token, ...options });
      // A path id beyond the column names no record: GitLab's 404.
      if (path.endsWith(`/${value}`)) expect(response.status, `${value}: ${response.text}`).toBe(404);
      else {
        expect(response.status, `${value}: ${response.text}`).toBe(400);
        expect(response.body).toEqual({ error: `${name} is invalid` });
      }
    }
  });

  it.each(CITED)('%s: within, the answer of any other value', async (_label, request, statuses) => {
    for (const value of WITHIN) {
      const [method, path, options] = request(value);
      const response = await server.request(method, path, { token: admin.token, ...options });
      expect(statuses, `${value}: ${response.status} ${response.text}`).toContain(response.status);
    }
  });
});

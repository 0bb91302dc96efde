/** CI lint (static and dry run, project and instance level) and the CI templates. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
type Json = Record<string, unknown>;
const CORPUS = path.join(import.meta.dirname, '../unit/ci-config/corpus');
const corpus = (name: string) => ({
  content: fs.readFileSync(path.join(CORPUS, `${name}.yml`), 'utf8'),
  errors: (
    JSON.parse(fs.readFileSync(path.join(CORPUS, `${name}.expected.json`), 'utf8')) as { errors: string[] }
  ).errors,
});

async function world() {
  const { owner, project } = await server.factories.ownedProjectWithReadme();
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
  return { owner, project, developer, reporter, lint: `/projects/${project.id}/ci/lint` };
}

async function commit(
  project: Project,
  token: string,
  branch: string,
  files: Record<string, string>,
  start?: string,
) {
  const res = await server.request('POST', `/projects/${project.id}/repository/commits`, {
    token,
    json: {
      branch,
      ...(start ? { start_branch: start } : {}),
      commit_message: 'ci files',
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

describe('project CI lint', () => {
  it('checks content statically, with its jobs and local includes', async () => {
    const { project, owner, developer, lint } = await world();
    await commit(project, owner.token, 'main', {
      'ci/build.yml': 'build:\n  stage: build\n  script: make\n  tags: [docker]\n',
    });
    const res = await server.request('POST', lint, {
      token: developer.token,
      json: {
        content: [
          'include: ci/build.yml',
          'test:',
          '  script: [make test]',
          '  environment: review',
          'deploy:',
          '  stage: deploy',
          '  script: make deploy',
          '  rules:',
          '    - if: $CI_COMMIT_BRANCH == "main"',
          '      when: manual',
        ].join('\n'),
        include_jobs: true,
      },
    });
    expect(res.status, res.text).toBe(200);
    const result = res.body as Json;
    expect(result).toMatchObject({ valid: true, errors: [], warnings: [] });
    expect(result.merged_yaml).toContain('make deploy');
    expect(result.includes).toMatchObject([{ type: 'local', location: 'ci/build.yml' }]);
    expect(result.jobs).toEqual([
      expect.objectContaining({
        name: 'build',
        stage: 'build',
        script: ['make'],
        tag_list: ['docker'],
        only: { refs: ['branches', 'tags'] },
      }),
      expect.objectContaining({
        name: 'test',
        stage: 'test',
        environment: 'review',
        when: 'on_success',
        allow_failure: false,
      }),
      expect.objectContaining({ name: 'deploy', stage: 'deploy', only: null, except: null, needs: null }),
    ]);
  });

  it.each([
    '80-unknown-keyword',
    '81-no-script',
    '83-needs-undefined',
    '88-invalid-rules-if',
    '97-stage-missing',
  ])('answers GitLab’s errors for %s', async (name) => {
    const { developer, lint } = await world();
    const { content, errors } = corpus(name);
    const res = await server.request('POST', lint, { token: developer.token, form: { content } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: false, errors });
    expect(res.body).not.toHaveProperty('jobs');
  });

  it('reports a missing local include of the project', async () => {
    const { developer, lint } = await world();
    const res = await server.request('POST', lint, {
      token: developer.token,
      json: { content: 'include: ci/none.yml\nbuild:\n  script: make\n' },
    });
    expect(res.body).toMatchObject({ valid: false, errors: ['Local file `ci/none.yml` does not exist!'] });
  });

  it('simulates a pipeline on a ref with the project’s variables and the ref’s rules', async () => {
    const { project, owner, developer, lint } = await world();
    const variable = await server.request('POST', `/projects/${project.id}/variables`, {
      token: owner.token,
      json: { key: 'DEPLOY_TARGET', value: 'staging' },
    });
    expect(variable.status, variable.text).toBe(201);
    await commit(project, developer.token, 'feature', { 'notes.txt': 'x' }, 'main');
    const content = [
      'build:',
      '  script: make',
      'deploy:',
      '  script: make deploy',
      '  rules:',
      '    - if: $DEPLOY_TARGET == "staging" && $CI_COMMIT_BRANCH == "main"',
      'feature-only:',
      '  script: echo',
      '  rules:',
      '    - if: $CI_COMMIT_BRANCH == "feature"',
    ].join('\n');
    const onMain = await server.request('POST', lint, {
      token: developer.token,
      json: { content, dry_run: true, include_jobs: true },
    });
    expect(onMain.status, onMain.text).toBe(200);
    expect(onMain.body).toMatchObject({ valid: true, errors: [] });
    expect(((onMain.body as Json).jobs as Json[]).map((j) => j.name)).toEqual(['build', 'deploy']);
    const onFeature = await server.request('POST', lint, {
      token: developer.token,
      json: { content, dry_run: true, ref: 'feature', include_jobs: true },
    });
    expect(((onFeature.body as Json).jobs as Json[]).map((j) => j.name)).toEqual(['build', 'feature-only']);
    const nowhere = await server.request('POST', lint, {
      token: developer.token,
      json: { content, dry_run: true, ref: 'no-such-branch' },
    });
    expect(nowhere.body).toMatchObject({ valid: false, errors: ['Reference not found'] });
    const none = await server.request('POST', lint, {
      token: developer.token,
      json: { content: 'job:\n  script: x\n  rules:\n    - if: $NOPE\n', dry_run: true },
    });
    expect((none.body as Json).errors).toEqual([
      'Pipeline will not run for the selected trigger. The rules configuration prevented any jobs from being added to the pipeline.',
    ]);
  });

  it('holds a dry run to the plan’s needs limit', async () => {
    const { developer, lint } = await world();
    const admin = await server.factories.user({ admin: true });
    const setLimit = (n: number) =>
      server.request('PUT', '/application/plan_limits', {
        token: admin.token,
        json: { plan_name: 'default', ci_needs_size_limit: n },
      });
    expect((await setLimit(1)).status).toBe(200);
    try {
      const content = 'a:\n  script: x\nb:\n  script: x\nc:\n  stage: deploy\n  script: x\n  needs: [a, b]\n';
      const res = await server.request('POST', lint, {
        token: developer.token,
        json: { content, dry_run: true },
      });
      expect(res.body).toMatchObject({
        valid: false,
        errors: [
          'c: one job can only need 1 others, but you have listed 2. See needs keyword documentation for more details',
        ],
      });
    } finally {
      await setLimit(50);
    }
  });

  it('checks the project’s own file at a ref, and refuses what GitLab refuses', async () => {
    const { project, owner, reporter, lint } = await world();
    const empty = await server.request('GET', lint, { token: reporter.token });
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ valid: false, errors: ['Please provide content of .gitlab-ci.yml'] });
    const sha = await commit(project, owner.token, 'main', {
      '.gitlab-ci.yml': 'build:\n  script: make\n',
    });
    const read = await server.request('GET', `${lint}?content_ref=${sha}&include_jobs=true`, {
      token: reporter.token,
    });
    expect(read.body).toMatchObject({ valid: true, jobs: [{ name: 'build' }] });
    const deprecated = await server.request('GET', `${lint}?sha=main&dry_run=true&ref=main`, {
      token: reporter.token,
    });
    expect(deprecated.body).toMatchObject({ valid: true });
    const both = await server.request('GET', `${lint}?sha=main&content_ref=main`, { token: reporter.token });
    expect(both.status).toBe(400);
    expect(both.body).toEqual({ error: 'sha, content_ref are mutually exclusive' });
    const unknown = await server.request('GET', `${lint}?content_ref=nope`, { token: reporter.token });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Commit Not Found' });
    // POST needs Developer (create_pipeline).
    const refused = await server.request('POST', lint, { token: reporter.token, json: { content: 'a: b' } });
    expect(refused.status).toBe(403);
  });
});

describe('instance CI lint (GitLab 15.x, deprecated)', () => {
  it('answers status, errors and warnings, and merged YAML and jobs on request', async () => {
    const user = await server.factories.user();
    const valid = await server.request('POST', '/ci/lint', {
      token: user.token,
      json: { content: 'build:\n  script: make\n', include_merged_yaml: true, include_jobs: true },
    });
    expect(valid.status).toBe(200);
    expect(valid.body).toMatchObject({
      status: 'valid',
      errors: [],
      warnings: [],
      jobs: [{ name: 'build' }],
    });
    expect((valid.body as Json).merged_yaml).toContain('make');
    const { content, errors } = corpus('81-no-script');
    const invalid = await server.request('POST', '/ci/lint', { token: user.token, json: { content } });
    expect(invalid.body).toEqual({ status: 'invalid', errors, warnings: [] });
    const anonymous = await server.request('POST', '/ci/lint', { json: { content } });
    expect(anonymous.status).toBe(401);
  });
});

describe('CI templates', () => {
  it('lists and reads the shipped templates without a token', async () => {
    const list = await server.request('GET', '/templates/gitlab_ci_ymls?per_page=2');
    expect(list.status).toBe(200);
    expect(list.headers.get('x-total')).toBe('5');
    expect(list.body).toEqual([
      { key: 'Docker', name: 'Docker' },
      { key: 'Nodejs', name: 'Nodejs' },
    ]);
    const one = await server.request('GET', '/templates/gitlab_ci_ymls/Nodejs');
    expect(one.status).toBe(200);
    expect((one.body as Json).name).toBe('Nodejs');
    expect((one.body as Json).content).toContain('npm');
    const missing = await server.request('GET', '/templates/gitlab_ci_ymls/Cobol');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Template Not Found' });
  });
});

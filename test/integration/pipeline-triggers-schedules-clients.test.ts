/** Trigger tokens, pipeline schedules and CI lint through the real clients: @gitbeaker/rest and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const server = useTestServer();

/** A project whose `main` has a CI configuration, and a Maintainer with a gitbeaker client. */
async function world() {
  const { project } = await server.factories.ownedProjectWithReadme();
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  const res = await server.request('POST', `/projects/${project.id}/repository/commits`, {
    token: maintainer.token,
    json: {
      branch: 'main',
      commit_message: 'CI',
      actions: [{ action: 'create', file_path: '.gitlab-ci.yml', content: 'build:\n  script: make\n' }],
    },
  });
  expect(res.status, res.text).toBe(201);
  return { project, maintainer, api: new Gitlab({ host: server.url, token: maintainer.token }) };
}

describe('@gitbeaker/rest', () => {
  it('drives trigger tokens and triggers a pipeline (PipelineTriggerTokens)', async () => {
    const { project, maintainer, api } = await world();
    const trigger = await api.PipelineTriggerTokens.create(project.id, 'beaker');
    expect(trigger.token).toMatch(/^glptt-/);
    expect(
      (await api.PipelineTriggerTokens.edit(project.id, trigger.id, { description: 'renamed' })).description,
    ).toBe('renamed');
    expect((await api.PipelineTriggerTokens.all(project.id)).map((t) => t.description)).toEqual(['renamed']);
    // gitbeaker sends token and ref in the query string and the variables as a form.
    const pipeline = await api.PipelineTriggerTokens.trigger(project.id, 'main', trigger.token as string, {
      variables: { DEPLOY: 'beaker' },
    });
    expect(pipeline).toMatchObject({ source: 'trigger', ref: 'main' });
    const variables = await server.request(
      'GET',
      `/projects/${project.id}/pipelines/${pipeline.id as number}/variables`,
      {
        token: maintainer.token,
      },
    );
    expect(
      (variables.body as Array<{ key: string; value: string }>).map((v) => [v.key, v.value]),
    ).toContainEqual(['DEPLOY', 'beaker']);
    expect((await api.PipelineTriggerTokens.show(project.id, trigger.id)).last_used).not.toBeNull();
    await api.PipelineTriggerTokens.remove(project.id, trigger.id);
    expect(await api.PipelineTriggerTokens.all(project.id)).toEqual([]);
  });

  it('drives schedules and their variables, and runs one (PipelineSchedules, PipelineScheduleVariables)', async () => {
    const { project, api } = await world();
    const schedule = await api.PipelineSchedules.create(project.id, 'beaker nightly', 'main', '0 1 * * *', {
      cronTimezone: 'Asia/Tokyo',
    });
    expect(schedule).toMatchObject({ cron_timezone: 'Asia/Tokyo', active: true });
    const variable = await api.PipelineScheduleVariables.create(project.id, schedule.id, 'TARGET', 'nightly');
    expect(variable).toMatchObject({ key: 'TARGET', value: 'nightly' });
    expect(
      (await api.PipelineScheduleVariables.edit(project.id, schedule.id, 'TARGET', 'weekly')).value,
    ).toBe('weekly');
    expect((await api.PipelineSchedules.edit(project.id, schedule.id, { active: false })).active).toBe(false);
    expect((await api.PipelineSchedules.show(project.id, schedule.id)).variables).toEqual([
      { key: 'TARGET', value: 'weekly', variable_type: 'env_var', raw: false },
    ]);
    expect((await api.PipelineSchedules.all(project.id, { scope: 'inactive' })).map((s) => s.id)).toEqual([
      schedule.id,
    ]);
    await api.PipelineSchedules.takeOwnership(project.id, schedule.id);
    await api.PipelineSchedules.run(project.id, schedule.id);
    const pipelines = await waitFor(
      () => api.PipelineSchedules.allTriggeredPipelines(project.id, schedule.id),
      (list) => list.length > 0,
    );
    expect(pipelines).toMatchObject([{ source: 'schedule' }]);
    await api.PipelineScheduleVariables.remove(project.id, schedule.id, 'TARGET');
    await api.PipelineSchedules.remove(project.id, schedule.id);
    expect(await api.PipelineSchedules.all(project.id)).toEqual([]);
  });

  it('lints content and the project’s file (Lint)', async () => {
    const { project, api } = await world();
    const linted = await api.Lint.lint(project.id, 'build:\n  script: make\n', {
      includeJobs: true,
      dryRun: true,
    });
    expect(linted).toMatchObject({ valid: true, jobs: [{ name: 'build' }] });
    const broken = await api.Lint.lint(project.id, 'build:\n  image: x\n');
    expect(broken.valid).toBe(false);
    expect(await api.Lint.check(project.id, { includeJobs: true })).toMatchObject({ valid: true });
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'drives triggers, schedules and CI lint (needs Debian python3-gitlab)',
    async () => {
      const { project, maintainer } = await world();
      const stdout = await runPythonClient('python_gitlab_pipeline_triggers_schedules.py', [
        server.url,
        maintainer.token,
        String(project.id),
      ]);
      const invalid = 'jobs build config should implement the script:, run:, or trigger: keyword';
      expect(JSON.parse(stdout.trim())).toEqual({
        trigger: [true, 'py-trigger (main)'],
        listed: ['py-trigger (main)'],
        pipeline: ['trigger', 'main'],
        variables: ['DEPLOY', 'TRIGGER_PAYLOAD'],
        last_used: true,
        deleted: 404,
        schedule: [
          '30 2 * * 1',
          'Europe/Paris',
          [{ key: 'TARGET', value: 'weekly', variable_type: 'env_var', raw: false }],
        ],
        played: { message: '201 Created' },
        after_delete: [],
        bad_cron: [400, { cron: ['syntax is invalid'] }],
        schedules: ['py-nightly'],
        lint: [true, ['build']],
        invalid,
        own: true,
        legacy: ['valid', true],
        legacy_invalid: invalid,
      });
    },
    60_000,
  );
});

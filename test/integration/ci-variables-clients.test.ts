/** CI/CD variables and plan limits through the real clients: @gitbeaker/rest and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

async function world() {
  const admin = await server.factories.user({ admin: true });
  const group = await server.factories.group();
  const project = await server.factories.project({ owner: admin, namespace: group });
  return { admin, group, project, api: new Gitlab({ host: server.url, token: admin.token }) };
}

describe('@gitbeaker/rest', () => {
  it('drives ProjectVariables, with filter', async () => {
    const { project, api } = await world();
    const created = await api.ProjectVariables.create(project.id, 'GB_TOKEN', 'everywhere');
    expect(created).toMatchObject({ key: 'GB_TOKEN', value: 'everywhere', environment_scope: '*' });
    await api.ProjectVariables.create(project.id, 'GB_TOKEN', 'prod', {
      environmentScope: 'production',
      protected: true,
    });
    expect((await api.ProjectVariables.all(project.id)).map((v) => v.environment_scope)).toEqual([
      '*',
      'production',
    ]);
    await expect(api.ProjectVariables.show(project.id, 'GB_TOKEN')).rejects.toThrow(
      /There are multiple variables/,
    );
    const filter = { filter: { environment_scope: 'production' } };
    expect(await api.ProjectVariables.show(project.id, 'GB_TOKEN', filter)).toMatchObject({
      value: 'prod',
      protected: true,
    });
    // The edit's filter travels in the JSON body.
    const edited = await api.ProjectVariables.edit(project.id, 'GB_TOKEN', 'prod2', filter);
    expect(edited).toMatchObject({ value: 'prod2', environment_scope: 'production' });
    await api.ProjectVariables.remove(project.id, 'GB_TOKEN', { filter: { environment_scope: '*' } });
    expect(await api.ProjectVariables.show(project.id, 'GB_TOKEN')).toMatchObject({ value: 'prod2' });
    await api.ProjectVariables.remove(project.id, 'GB_TOKEN');
    expect(await api.ProjectVariables.all(project.id)).toEqual([]);
  });

  it('drives GroupVariables, a masked and hidden one included', async () => {
    const { group, api } = await world();
    // gitbeaker 43 types `masked_and_hidden` for projects only; it sends the option all the same.
    const hiddenOption = { maskedAndHidden: true } as Parameters<typeof api.GroupVariables.create>[3];
    const hidden = await api.GroupVariables.create(group.id, 'GB_HIDDEN', 'c2VjcmV0LXZhbHVl', hiddenOption);
    expect(hidden).toMatchObject({ key: 'GB_HIDDEN', value: null, hidden: true, masked: true });
    await api.GroupVariables.create(group.id, 'GB_PLAIN', 'plain', { variableType: 'file' });
    expect((await api.GroupVariables.all(group.id)).map((v) => [v.key, v.value])).toEqual([
      ['GB_HIDDEN', null],
      ['GB_PLAIN', 'plain'],
    ]);
    const edited = await api.GroupVariables.edit(group.id, 'GB_PLAIN', 'changed', {
      raw: true,
      filter: { environment_scope: '*' },
    });
    expect(edited).toMatchObject({ value: 'changed', raw: true, variable_type: 'file' });
    expect(await api.GroupVariables.show(group.id, 'GB_PLAIN')).toMatchObject({ value: 'changed' });
    await api.GroupVariables.remove(group.id, 'GB_PLAIN');
    await api.GroupVariables.remove(group.id, 'GB_HIDDEN');
    expect(await api.GroupVariables.all(group.id)).toEqual([]);
  });

  it('drives InstanceLevelCICDVariables and ApplicationPlanLimits', async () => {
    const { admin, api } = await world();
    const created = await api.InstanceLevelCICDVariables.create('GB_INSTANCE', 'one', { protected: true });
    expect(created).toMatchObject({ key: 'GB_INSTANCE', value: 'one', protected: true });
    expect(await api.InstanceLevelCICDVariables.edit('GB_INSTANCE', 'two')).toMatchObject({ value: 'two' });
    expect(await api.InstanceLevelCICDVariables.show('GB_INSTANCE')).toMatchObject({ value: 'two' });
    expect((await api.InstanceLevelCICDVariables.all()).map((v) => v.key)).toContain('GB_INSTANCE');
    // gitbeaker 43's `remove` sends GET, which reads the variable; the deletion is a DELETE.
    expect(await api.InstanceLevelCICDVariables.remove('GB_INSTANCE')).toMatchObject({ key: 'GB_INSTANCE' });
    const deleted = await server.request('DELETE', '/admin/ci/variables/GB_INSTANCE', { token: admin.token });
    expect(deleted.status).toBe(204);

    const limits = await api.ApplicationPlanLimits.show();
    expect(limits).toMatchObject({ ci_instance_level_variables: 25, pipeline_hierarchy_size: 1000 });
    // gitbeaker sends the plan and the limits in the query string.
    const edited = await api.ApplicationPlanLimits.edit('default', {
      ciPipelineSize: 300,
      helmMaxFileSize: 10485760,
    });
    expect(edited).toMatchObject({
      ci_pipeline_size: 300,
      helm_max_file_size: 10485760,
      ci_pipeline_schedules: 10,
    });
    await api.ApplicationPlanLimits.edit('default', { ciPipelineSize: 0, helmMaxFileSize: 5242880 });
    expect(await api.ApplicationPlanLimits.show({ planName: 'default' })).toMatchObject({
      ci_pipeline_size: 0,
    });
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'drives project.variables, group.variables and gl.variables (needs Debian python3-gitlab)',
    async () => {
      const { admin, group, project } = await world();
      const stdout = await runPythonClient('python_gitlab_ci_variables.py', [
        server.url,
        admin.token,
        String(group.id),
        String(project.id),
      ]);
      expect(JSON.parse(stdout.trim())).toEqual({
        created: ['PY_TOKEN', 'everywhere', '*', false],
        listed: ['PY_TOKEN@*', 'PY_TOKEN@production'],
        ambiguous: [
          409,
          "There are multiple variables with provided parameters. Please use 'filter[environment_scope]'",
        ],
        prod: ['prod', true],
        updated: 'prod2',
        saved: 'prod3',
        project_after: 0,
        group_created: ['PY_GROUP', true],
        group_saved: 'bmV3LXNlY3JldA==',
        group_bad_key: [400, { key: ["can contain only letters, digits and '_'."] }],
        group_after: 0,
        instance_created: ['PY_INSTANCE', 'one'],
        instance_saved: 'two',
        instance_listed: ['PY_INSTANCE'],
        instance_after: [],
      });
    },
  );
});

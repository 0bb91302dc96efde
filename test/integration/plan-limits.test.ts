/** Plan limits: GitLab's defaults, changes by administrators, and the parameters' rules. */
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const DEFAULTS = {
  ci_instance_level_variables: 25,
  ci_pipeline_size: 0,
  ci_active_jobs: 0,
  ci_project_subscriptions: 2,
  ci_pipeline_schedules: 10,
  ci_needs_size_limit: 50,
  ci_registered_group_runners: 1000,
  ci_registered_project_runners: 1000,
  conan_max_file_size: 3221225472,
  dotenv_size: 5120,
  dotenv_variables: 20,
  enforcement_limit: 0,
  generic_packages_max_file_size: 5368709120,
  helm_max_file_size: 5242880,
  maven_max_file_size: 3221225472,
  notification_limit: 0,
  npm_max_file_size: 524288000,
  nuget_max_file_size: 524288000,
  pipeline_hierarchy_size: 1000,
  pypi_max_file_size: 3221225472,
  storage_size_limit: 0,
  terraform_module_max_file_size: 1073741824,
};

describe('plan limits', () => {
  it('reads GitLab’s defaults of the default plan, and planLimits.current() gives the same', async () => {
    const admin = await server.factories.user({ admin: true });
    for (const path of ['/application/plan_limits', '/application/plan_limits?plan_name=default']) {
      const response = await server.request('GET', path, { token: admin.token });
      expect([response.status, response.body]).toEqual([200, DEFAULTS]);
    }
    expect(await server.services.planLimits.current()).toEqual(DEFAULTS);
  });

  it('changes the limits given, in the body or the query string, and keeps the others', async () => {
    const admin = await server.factories.user({ admin: true });
    const token = admin.token;
    const body = await server.request('PUT', '/application/plan_limits', {
      token,
      json: { plan_name: 'default', ci_pipeline_size: 500, conan_max_file_size: 6442450944 },
    });
    expect([body.status, body.body]).toEqual([
      200,
      { ...DEFAULTS, ci_pipeline_size: 500, conan_max_file_size: 6442450944 },
    ]);
    // gitbeaker sends every limit in the query string, with an empty JSON body.
    const query = await server.request(
      'PUT',
      '/application/plan_limits?plan_name=default&pipeline_hierarchy_size=2000&ci_pipeline_size=0',
      { token, json: {} },
    );
    expect(query.body).toEqual({
      ...DEFAULTS,
      conan_max_file_size: 6442450944,
      pipeline_hierarchy_size: 2000,
    });
    expect((await server.services.planLimits.current()).pipeline_hierarchy_size).toBe(2000);
    const restored = await server.request('PUT', '/application/plan_limits', {
      token,
      form: { plan_name: 'default', conan_max_file_size: '3221225472', pipeline_hierarchy_size: '1000' },
    });
    expect(restored.body).toEqual(DEFAULTS);
  });

  const refused: Array<[string, string, string, unknown, number, unknown]> = [
    [
      'no plan_name',
      'PUT',
      '/application/plan_limits',
      { ci_pipeline_size: 1 },
      400,
      { error: 'plan_name is missing' },
    ],
    [
      'an unknown plan',
      'PUT',
      '/application/plan_limits',
      { plan_name: 'gold', ci_pipeline_size: 1 },
      400,
      { error: 'plan_name does not have a valid value' },
    ],
    [
      'an unknown plan to read',
      'GET',
      '/application/plan_limits?plan_name=gold',
      undefined,
      400,
      { error: 'plan_name does not have a valid value' },
    ],
  ];
  it.each(refused)('refuses %s', async (_, method, path, json, status, body) => {
    const admin = await server.factories.user({ admin: true });
    const response = await server.request(method, path, { token: admin.token, json });
    expect([response.status, response.body]).toEqual([status, body]);
  });

  it('refuses a negative limit and keeps the plan as it was', async () => {
    const admin = await server.factories.user({ admin: true });
    const response = await server.request('PUT', '/application/plan_limits', {
      token: admin.token,
      json: { plan_name: 'default', ci_pipeline_size: 5, dotenv_size: -1 },
    });
    expect(response.status).toBe(400);
    expect(await server.services.planLimits.current()).toEqual(DEFAULTS);
  });

  it('is for administrators only', async () => {
    const user = await server.factories.user();
    expect((await server.request('GET', '/application/plan_limits', { token: user.token })).status).toBe(403);
    expect((await server.request('GET', '/application/plan_limits')).status).toBe(401);
    const put = await server.request('PUT', '/application/plan_limits', {
      token: user.token,
      json: { plan_name: 'default', ci_pipeline_size: 1 },
    });
    expect(put.status).toBe(403);
  });
});

/** The git layer's guarantees seen from the API: user input never reaches git as an option, and fixes found by use. */
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

describe('a branch created right after the repository was initialised', () => {
  it.each([
    ['with a README', { initialize_with_readme: 'true' }],
    ['empty (the branch request writes the first commit)', {}],
  ])('%s: leaves the default branch and its protection, and the branch can be deleted', async (_, init) => {
    const owner = await server.factories.user();
    const created = await server.request('POST', '/projects', {
      token: owner.token,
      form: { name: 'fresh', ...init },
    });
    expect(created.status).toBe(201);
    const id = (created.body as Json).id as number;
    const branch = await server.request('POST', `/projects/${id}/repository/branches`, {
      token: owner.token,
      form: { branch: 'my.branch.name', ref: 'main' },
    });
    expect(branch.status).toBe(201);
    expect(branch.body).toMatchObject({ name: 'my.branch.name', default: false, protected: false });
    const project = await server.request('GET', `/projects/${id}`, { token: owner.token });
    expect(project.body).toMatchObject({ default_branch: 'main', empty_repo: false });
    const protectedBranches = await server.request('GET', `/projects/${id}/protected_branches`, {
      token: owner.token,
    });
    expect((protectedBranches.body as Json[]).map((rule) => rule.name)).toEqual(['main']);
    const deleted = await server.request('DELETE', `/projects/${id}/repository/branches/my.branch.name`, {
      token: owner.token,
    });
    expect(deleted.status).toBe(204);
    const main = await server.request('GET', `/projects/${id}/repository/branches/main`, {
      token: owner.token,
    });
    expect(main.body).toMatchObject({ name: 'main', default: true, protected: true });
  });
});

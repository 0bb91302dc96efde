/** Tags and protected tags through the real clients: @gitbeaker/rest and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

describe('@gitbeaker/rest', () => {
  it('creates, lists, shows and removes tags, and reads signatures', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const api = new Gitlab({ host: server.url, token: owner.token });
    const annotated = await api.Tags.create(project.id, 'v1.9.0', 'main', { message: 'Release 1.9.0' });
    expect(annotated).toMatchObject({ name: 'v1.9.0', message: 'Release 1.9.0', protected: false });
    await api.Tags.create(project.id, 'v1.10.0', 'v1.9.0');
    await api.Tags.create(project.id, 'release/2', 'main');

    const byVersion = await api.Tags.all(project.id, { orderBy: 'version', sort: 'asc', search: '^v' });
    expect(byVersion.map((tag) => tag.name)).toEqual(['v1.9.0', 'v1.10.0']);
    const paged = await api.Tags.all(project.id, { orderBy: 'name', perPage: 1 });
    expect(paged.map((tag) => tag.name)).toEqual(['v1.9.0', 'v1.10.0', 'release/2']);

    const shown = await api.Tags.show(project.id, 'release/2');
    expect(shown).toMatchObject({ name: 'release/2', message: null, created_at: null });
    await expect(api.Tags.showSignature(project.id, 'v1.9.0')).rejects.toMatchObject({
      cause: { response: { status: 404 } },
    });
    await expect(api.Tags.create(project.id, 'v1.9.0', 'main')).rejects.toMatchObject({
      cause: { response: { status: 405 } },
    });

    await api.Tags.remove(project.id, 'release/2');
    await expect(api.Tags.show(project.id, 'release/2')).rejects.toMatchObject({
      cause: { response: { status: 404 } },
    });
  });

  it('protects, lists, shows and unprotects tags', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const developer = await server.factories.user();
    await server.factories.member(project, developer.user, AccessLevel.Developer);
    const api = new Gitlab({ host: server.url, token: owner.token });

    const rule = await api.ProtectedTags.protect(project.id, 'v*', {
      createAccessLevel: 40,
      allowedToCreate: [{ userId: developer.user.id }],
    });
    expect(rule).toMatchObject({
      name: 'v*',
      create_access_levels: [
        { access_level: 40, access_level_description: 'Maintainers' },
        { user_id: developer.user.id, access_level_description: developer.user.name },
      ],
    });
    await api.ProtectedTags.protect(project.id, 'stable');
    const all = await api.ProtectedTags.all(project.id, { perPage: 1 });
    expect(all.map((r) => r.name)).toEqual(['v*', 'stable']);
    expect(await api.ProtectedTags.show(project.id, 'v*')).toMatchObject({ name: 'v*' });

    // The named developer may now create v-tags.
    const asDeveloper = new Gitlab({ host: server.url, token: developer.token });
    expect(await asDeveloper.Tags.create(project.id, 'v1', 'main')).toMatchObject({ protected: true });

    await api.ProtectedTags.unprotect(project.id, 'v*');
    await expect(api.ProtectedTags.show(project.id, 'v*')).rejects.toMatchObject({
      cause: { response: { status: 404 } },
    });
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)('drives tags and protected tags (needs Debian python3-gitlab)', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const stdout = await runPythonClient('python_gitlab_tags.py', [
      server.url,
      owner.token,
      String(project.id),
    ]);
    expect(JSON.parse(stdout)).toEqual({
      rule: ['v*', [30]],
      rules: ['v*', 'release/*'],
      got_rule: 'v*',
      annotated: ['v1.0.0', 'Release 1.0.0', true, 'Initial commit'],
      lightweight: ['release/1.0', null, true],
      listed: ['nightly', 'release/1.0', 'v1.0.0'],
      searched: ['v1.0.0'],
      fetched: ['release/1.0', true],
      duplicate: [405, 'Tag v1.0.0 already exists'],
      after_delete: 404,
      remaining: ['release/*'],
    });
  });
});

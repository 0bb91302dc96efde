/** Branches and protected branches through the real clients: @gitbeaker/rest and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

/** A project with a README on main, its Maintainer and a Developer. */
async function world() {
  const { project } = await server.factories.ownedProjectWithReadme();
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  return { project, maintainer, developer };
}

const status = (code: number) => ({ cause: { response: { status: code } } });

describe('@gitbeaker/rest', () => {
  it('creates, shows, lists and removes branches', async () => {
    const w = await world();
    const api = new Gitlab({ host: server.url, token: w.maintainer.token });
    const created = await api.Branches.create(w.project.id, 'gb/feature', 'main');
    expect(created).toMatchObject({ name: 'gb/feature', protected: false, can_push: true, default: false });
    await api.Branches.create(w.project.id, 'gb/merged', 'main');
    const shown = await api.Branches.show(w.project.id, 'gb/feature');
    expect(shown.commit.id).toBe(created.commit.id);
    const all = await api.Branches.all(w.project.id, { perPage: 1 });
    expect(all.map((b) => b.name)).toEqual(['gb/feature', 'gb/merged', 'main']);
    const searched = await api.Branches.all(w.project.id, { search: 'feat' });
    expect(searched.map((b) => b.name)).toEqual(['gb/feature']);
    await api.Branches.remove(w.project.id, 'gb/feature');
    await expect(api.Branches.show(w.project.id, 'gb/feature')).rejects.toMatchObject(status(404));
    await expect(api.Branches.create(w.project.id, 'main', 'main')).rejects.toMatchObject(status(400));
    // gb/merged points at main's head: not "merged", so it stays.
    await api.Branches.removeMerged(w.project.id);
    expect((await api.Branches.all(w.project.id)).map((b) => b.name)).toEqual(['gb/merged', 'main']);
  });

  it('protects, shows, lists, edits and unprotects', async () => {
    const w = await world();
    const api = new Gitlab({ host: server.url, token: w.maintainer.token });
    // gitbeaker sends these in the query string with bracket notation, and `{}` as the body.
    const rule = await api.ProtectedBranches.protect(w.project.id, 'gb-*', {
      pushAccessLevel: 0,
      mergeAccessLevel: 30,
      allowForcePush: true,
      allowedToPush: [{ userId: w.developer.user.id }],
    });
    expect(rule).toMatchObject({
      name: 'gb-*',
      allow_force_push: true,
      push_access_levels: [
        { access_level: 0, access_level_description: 'No one' },
        { access_level: null, user_id: w.developer.user.id },
      ],
      merge_access_levels: [{ access_level: 30, access_level_description: 'Developers + Maintainers' }],
    });
    const shown = await api.ProtectedBranches.show(w.project.id, 'gb-*');
    expect(shown.id).toBe(rule.id);
    const all = await api.ProtectedBranches.all(w.project.id, { search: 'gb' });
    expect(all.map((r) => r.name)).toEqual(['gb-*']);

    const levels = rule.push_access_levels!;
    const noOne = levels.find((level) => level.access_level === 0)!;
    const userEntry = levels.find((level) => level.user_id === w.developer.user.id)!;
    // An entry is changed or removed by its id; gitbeaker's types want a level beside it.
    const edited = await api.ProtectedBranches.edit(w.project.id, 'gb-*', {
      allowForcePush: false,
      allowedToPush: [
        { id: noOne.id, accessLevel: 30 },
        { id: userEntry.id, accessLevel: 0, _destroy: true },
      ],
    });
    expect(edited).toMatchObject({
      allow_force_push: false,
      push_access_levels: [
        { id: noOne.id, access_level: 30, access_level_description: 'Developers + Maintainers' },
      ],
    });
    expect(edited.push_access_levels).toHaveLength(1);

    await expect(api.ProtectedBranches.protect(w.project.id, 'gb-*')).rejects.toMatchObject(status(409));
    await api.ProtectedBranches.unprotect(w.project.id, 'gb-*');
    await expect(api.ProtectedBranches.show(w.project.id, 'gb-*')).rejects.toMatchObject(status(404));

    const developerApi = new Gitlab({ host: server.url, token: w.developer.token });
    await expect(developerApi.ProtectedBranches.protect(w.project.id, 'x')).rejects.toMatchObject(
      status(403),
    );
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'drives branches and protected branches (needs Debian python3-gitlab)',
    async () => {
      const w = await world();
      const stdout = await runPythonClient('python_gitlab_branches.py', [
        server.url,
        w.maintainer.token,
        String(w.project.id),
        String(w.developer.user.id),
      ]);
      expect(JSON.parse(stdout.trim())).toEqual({
        created: ['py/feature', false, true],
        fetched: 'py/feature',
        searched: ['py/feature', 'py/other'],
        paged: ['main', 'py/feature', 'py/other'],
        deleted: [404, '404 Branch Not Found'],
        invalid: [400, 'Branch name is invalid'],
        rule_name: 'py/*',
        rule_push: [
          [0, null],
          [null, w.developer.user.id],
        ],
        got_id: true,
        listed: ['main', 'py/*'],
        duplicate: [409, "Protected branch 'py/*' already exists"],
        protected_branch: [true, false],
        after_unprotect: [404, '404 Not found'],
      });
    },
  );
});

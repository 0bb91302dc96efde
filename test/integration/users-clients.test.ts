import crypto from 'node:crypto';
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { User } from '../../src/users/user.entity.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const fresh = (prefix: string) => `${prefix}-${crypto.randomBytes(3).toString('hex')}`;

describe('@gitbeaker/rest', () => {
  it('shows the current user, creates, lists, shows, edits and blocks users', async () => {
    const root = await server.factories.user({ admin: true });
    const api = new Gitlab({ host: server.url, token: root.token });

    const me = await api.Users.showCurrentUser();
    expect(me).toMatchObject({ id: root.user.id, username: root.user.username, is_admin: true });

    const username = fresh('beaker');
    const created = await api.Users.create({
      email: `${username}@example.com`,
      username,
      name: 'Beaker Person',
      password: 'correct horse battery',
      skipConfirmation: true,
      projectsLimit: 12,
    });
    expect(created).toMatchObject({ username, name: 'Beaker Person', projects_limit: 12, is_admin: false });

    const shown = await api.Users.show(created.id);
    expect(shown).toMatchObject({ id: created.id, email: `${username}@example.com` });

    const listed = await api.Users.all({ search: username });
    expect(listed.map((u) => u.id)).toEqual([created.id]);

    const edited = await api.Users.edit(created.id, {
      name: 'Beaker Renamed',
      projectsLimit: 3,
      external: true,
    });
    expect(edited).toMatchObject({ name: 'Beaker Renamed', projects_limit: 0, external: true });

    const user = await server.dataSource.getRepository(User).findOneByOrFail({ id: created.id });
    const token = await server.factories.token(user, ['api']);
    const own = new Gitlab({ host: server.url, token });
    expect(await own.Users.showCurrentUser()).toMatchObject({ id: created.id, external: true });
    expect(await own.Users.all({ search: username })).toEqual([
      expect.not.objectContaining({ email: expect.anything() }),
    ]);

    expect(await api.Users.block(created.id)).toBe(true);
    await expect(own.Users.showCurrentUser()).rejects.toMatchObject({ cause: { response: { status: 401 } } });
    expect(await api.Users.unblock(created.id)).toBe(true);
    expect(await own.Users.showCurrentUser()).toMatchObject({ id: created.id, state: 'active' });
  });

  it('reports GitLab errors', async () => {
    const root = await server.factories.user({ admin: true });
    const alice = await server.factories.user();
    const api = new Gitlab({ host: server.url, token: root.token });
    await expect(api.Users.show(99999999)).rejects.toMatchObject({
      cause: { description: '404 User Not Found', response: { status: 404 } },
    });
    await expect(
      api.Users.create({
        email: alice.user.email,
        username: fresh('dup'),
        name: 'Dup',
        password: 'correct horse battery',
      }),
    ).rejects.toMatchObject({
      cause: { description: 'Email has already been taken', response: { status: 409 } },
    });
    const notAdmin = new Gitlab({ host: server.url, token: alice.token });
    await expect(notAdmin.Users.block(root.user.id)).rejects.toMatchObject({
      cause: { description: '403 Forbidden', response: { status: 403 } },
    });
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'authenticates, creates, saves, lists and blocks users (needs Debian python3-gitlab)',
    async () => {
      const root = await server.factories.user({ admin: true });
      const alice = await server.factories.user();
      const username = fresh('py');
      const stdout = await runPythonClient('python_gitlab_users.py', [
        server.url,
        root.token,
        alice.token,
        username,
      ]);
      const result = JSON.parse(stdout.trim());
      const namespace = await server.services.users.personalNamespace(
        (await server.dataSource.getRepository(User).findOneByOrFail({ username })).id,
      );
      expect(result).toEqual({
        me: root.user.username,
        me_is_admin: true,
        regular_has_email: true,
        regular_has_is_admin: false,
        created_username: username,
        created_namespace_id: namespace!.id,
        created_by: root.user.id,
        saved_name: 'Python Renamed',
        refetched_name: 'Python Renamed',
        refetched_projects_limit: 5,
        found: [username],
        found_has_email: [true],
        seen_by_user: [username],
        seen_by_user_has_email: [false],
        public_bio: 'from python-gitlab',
        public_has_email: false,
        missing: [404, '404 User Not Found'],
        duplicate: [409, 'Email has already been taken'],
        blocked: true,
        state_after_block: 'blocked',
        while_blocked: 401,
        unblocked: true,
        state_after_unblock: 'active',
      });
    },
  );
});

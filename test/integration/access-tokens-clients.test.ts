import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { addDays, utcToday } from '../../src/access_tokens/token-rules.js';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

/** A user who owns a private project and a private group, and an administrator. */
async function fixture() {
  const alice = await server.factories.user();
  const admin = await server.factories.user({ admin: true });
  const project = await server.factories.project({ owner: alice, visibility: 'private' });
  const group = await server.factories.group({ visibility: 'private' });
  await server.factories.member(group, alice.user, AccessLevel.Owner);
  return { alice, admin, project, group };
}

describe('@gitbeaker/rest', () => {
  it('creates, lists, shows, rotates and revokes personal access tokens', async () => {
    const { alice, admin } = await fixture();
    const api = new Gitlab({ host: server.url, token: alice.token });
    const adminApi = new Gitlab({ host: server.url, token: admin.token });
    const expiresAt = addDays(utcToday(), 30);

    const created = await adminApi.PersonalAccessTokens.create(alice.user.id, 'beaker', ['read_api'], {
      expiresAt,
    });
    expect(created).toMatchObject({ user_id: alice.user.id, scopes: ['read_api'], expires_at: expiresAt });
    expect(created.token).toMatch(/^glpat-/);

    const all = await api.PersonalAccessTokens.all({ perPage: 1 });
    expect(all.map((token) => token.id)).toContain(created.id);
    const shown = await api.PersonalAccessTokens.show({ tokenId: created.id });
    expect(shown).toMatchObject({ id: created.id, name: 'beaker', active: true });
    const self = await new Gitlab({ host: server.url, token: created.token }).PersonalAccessTokens.show();
    expect(self.id).toBe(created.id);

    const rotated = await api.PersonalAccessTokens.rotate(created.id, { expiresAt: addDays(utcToday(), 5) });
    expect(rotated).toMatchObject({ name: 'beaker', expires_at: addDays(utcToday(), 5) });
    await expect(
      new Gitlab({ host: server.url, token: created.token }).PersonalAccessTokens.show(),
    ).rejects.toMatchObject({ cause: { response: { status: 401 } } });

    await api.PersonalAccessTokens.remove({ tokenId: rotated.id });
    const revoked = await api.PersonalAccessTokens.show({ tokenId: rotated.id });
    expect(revoked).toMatchObject({ revoked: true, active: false });
  });

  it('creates, lists, shows, rotates and revokes project and group access tokens', async () => {
    const { alice, project, group } = await fixture();
    const api = new Gitlab({ host: server.url, token: alice.token });
    const expiresAt = addDays(utcToday(), 60);

    const created = await api.ProjectAccessTokens.create(project.id, 'beaker-bot', ['read_api'], expiresAt, {
      accessLevel: 30,
    });
    expect(created).toMatchObject({ name: 'beaker-bot', access_level: 30, expires_at: expiresAt });
    const bot = new Gitlab({ host: server.url, token: created.token });
    expect((await bot.Projects.show(project.id)).id).toBe(project.id);

    const listed = await api.ProjectAccessTokens.all(project.id);
    expect(listed.map((token) => token.id)).toEqual([created.id]);
    const shown = await api.ProjectAccessTokens.show(project.id, created.id);
    expect(shown).toMatchObject({ id: created.id, access_level: 30 });

    const rotated = await api.ProjectAccessTokens.rotate(project.id, created.id);
    expect(rotated).toMatchObject({ user_id: created.user_id, access_level: 30 });
    await expect(bot.Projects.show(project.id)).rejects.toMatchObject({
      cause: { response: { status: 401 } },
    });
    await api.ProjectAccessTokens.revoke(project.id, rotated.id);
    const rotatedBot = new Gitlab({ host: server.url, token: rotated.token as string });
    await expect(rotatedBot.Projects.show(project.id)).rejects.toMatchObject({
      cause: { response: { status: 401 } },
    });

    const groupToken = await api.GroupAccessTokens.create(group.id, 'beaker-group', ['api'], expiresAt);
    expect(groupToken).toMatchObject({ name: 'beaker-group', access_level: 40 });
    const groupTokens = await api.GroupAccessTokens.all(group.id);
    expect(groupTokens.map((token) => token.id)).toEqual([groupToken.id]);

    await expect(
      api.ProjectAccessTokens.create(project.id, 'bad', ['read_user' as 'api'], expiresAt),
    ).rejects.toMatchObject({ cause: { response: { status: 400 } } });
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'manages personal, project and group access tokens (needs Debian python3-gitlab)',
    async () => {
      const { alice, admin, project, group } = await fixture();
      const stdout = await runPythonClient('python_gitlab_access_tokens.py', [
        server.url,
        admin.token,
        alice.token,
        String(alice.user.id),
        String(project.id),
        String(group.id),
      ]);
      const result = JSON.parse(stdout.trim());
      expect(result).toMatchObject({
        created: {
          user_id: alice.user.id,
          scopes: ['read_api', 'read_user'],
          expires_at: addDays(utcToday(), 30),
          has_token: true,
        },
        own_has_created: true,
        by_user: [alice.user.id],
        self_id: true,
        rotated_name: 'py',
        old_after_rotation: 401,
        rotated_after_delete: 401,
        listed: [[result.bot_token_id, 30]],
        bot_sees: project.id,
        fetched_access_level: 30,
        invalid: [400, 'scopes does not have a valid value'],
        bot_after_revoke: 401,
        group_listed: [result.group_token_id],
        group_after_revoke: [true],
      });
    },
  );
});

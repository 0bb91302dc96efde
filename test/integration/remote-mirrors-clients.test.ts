/** Push mirrors through the real clients: @gitbeaker/rest and python-gitlab, each mirroring for real. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { git } from '../../src/git/git.js';
import type { Project } from '../../src/projects/project.entity.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { remoteUrl } from '../helpers/git-cli.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5', FORGE_ALLOW_LOCAL_REQUESTS: 'true' } });

const refsOf = async (project: Project) =>
  (
    await git(['for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/tags'], {
      gitDir: server.services.storage.diskPath(project.repositoryStorage, project.id),
    })
  ).stdout.toString();

/** A source with a README and a `topic` branch, an empty target, and a mirror URL with a token. */
async function world() {
  const { owner, project: source } = await server.factories.ownedProjectWithReadme();
  const target = await server.factories.project({ owner });
  const api = new Gitlab({ host: server.url, token: owner.token });
  await api.Branches.create(source.id, 'topic', 'main');
  const targetPath = (await api.Projects.show(target.id)).path_with_namespace;
  const url = remoteUrl(server.url, targetPath, owner.token);
  return { owner, source, target, api, url };
}

describe('@gitbeaker/rest', () => {
  it('creates, shows, edits, syncs and removes a push mirror that really pushes', async () => {
    const { owner, source, target, api, url } = await world();
    const mirror = await api.ProjectRemoteMirrors.createPushMirror(source.id, url, { enabled: true });
    expect(mirror.url).toMatch(/^http:\/\/\*{5}:\*{5}@/);
    expect(mirror.enabled).toBe(true);
    // gitbeaker 43.8 sends `edit` as POST, which GitLab answers 405 too; the update is a PUT.
    await expect(
      api.ProjectRemoteMirrors.edit(source.id, mirror.id, { keepDivergentRefs: true }),
    ).rejects.toThrow(/405/);
    const edited = await server.request('PUT', `/projects/${source.id}/remote_mirrors/${mirror.id}`, {
      token: owner.token,
      json: { keep_divergent_refs: true },
    });
    expect((edited.body as { keep_divergent_refs: boolean }).keep_divergent_refs).toBe(true);
    await api.ProjectRemoteMirrors.sync(source.id, mirror.id);
    const deadline = Date.now() + 60_000;
    let shown = await api.ProjectRemoteMirrors.show(source.id, mirror.id);
    while (shown.update_status !== 'finished' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      shown = await api.ProjectRemoteMirrors.show(source.id, mirror.id);
    }
    expect(shown.update_status).toBe('finished');
    expect(await refsOf(target)).toBe(await refsOf(source));
    expect((await api.ProjectRemoteMirrors.all(source.id)).map((m) => m.id)).toEqual([mirror.id]);
    await api.ProjectRemoteMirrors.remove(source.id, mirror.id);
    expect(await api.ProjectRemoteMirrors.all(source.id)).toEqual([]);
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)('drives project.remote_mirrors (needs Debian python3-gitlab)', async () => {
    const { owner, source, target, url } = await world();
    const stdout = await runPythonClient('python_gitlab_remote_mirrors.py', [
      server.url,
      owner.token,
      String(source.id),
      url,
    ]);
    expect(JSON.parse(stdout.trim())).toEqual({
      created: [true, true, 'http://*****:*****'],
      saved: false,
      status: 'finished',
      error: null,
      key: 'ssh-ed25519',
      password_key: 404,
      listed: [
        [true, 'password'],
        [false, 'ssh_public_key'],
      ],
      after_delete: 1,
    });
    expect(await refsOf(target)).toBe(await refsOf(source));
  });
});

/** Merge requests from forks through the real clients: @gitbeaker/rest and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

describe('@gitbeaker/rest', () => {
  it('opens a merge request from a fork into its upstream', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme({ visibility: 'public' });
    const contributor = await server.factories.user();
    const api = new Gitlab({ host: server.url, token: contributor.token });
    const fork = (await api.Projects.fork(project.id)) as Json;
    await api.Commits.create(
      fork.id as number,
      'topic',
      'Add a file',
      [{ action: 'create', filePath: 'topic.txt', content: 'topic\n' }],
      { startBranch: 'main' },
    );
    const mr = (await api.MergeRequests.create(fork.id as number, 'topic', 'main', 'From a fork', {
      targetProjectId: project.id,
    })) as Json;
    expect(mr).toMatchObject({ project_id: project.id, source_project_id: fork.id, iid: 1 });
    const upstream = new Gitlab({ host: server.url, token: owner.token });
    const diffs = await upstream.MergeRequests.allDiffs(project.id, 1);
    expect(diffs.map((d) => d.new_path)).toEqual(['topic.txt']);
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'opens a fork merge request and collaborates on it (needs Debian python3-gitlab)',
    async () => {
      const { owner, project } = await server.factories.ownedProjectWithReadme({ visibility: 'public' });
      const contributor = await server.factories.user();
      const stdout = await runPythonClient('python_gitlab_fork_merge_requests.py', [
        server.url,
        contributor.token,
        owner.token,
        String(project.id),
      ]);
      const findings = JSON.parse(stdout) as Json;
      expect(findings).toEqual({
        created: [project.id, expect.any(Number), project.id, 1],
        allow: [true, true],
        web_url: true,
        again: 409,
        seen: [(findings.created as number[])[1], true],
        changes: ['py.txt'],
        commits: true,
        pushed: true,
      });
      expect((findings.created as number[])[1]).not.toBe(project.id);
    },
  );
});

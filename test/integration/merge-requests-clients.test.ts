/** Merge requests through the real clients: @gitbeaker/rest and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

async function world() {
  const { project } = await server.factories.ownedProjectWithReadme();
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
  return { project, developer, reporter };
}

const status = (code: number) => ({ cause: { response: { status: code } } });

describe('@gitbeaker/rest', () => {
  it('creates, lists, shows and edits merge requests', async () => {
    const w = await world();
    const api = new Gitlab({ host: server.url, token: w.developer.token });
    await api.Commits.create(
      w.project.id,
      'gb/feature',
      'Add a file',
      [{ action: 'create', filePath: 'gb.txt', content: 'gb\n' }],
      { startBranch: 'main' },
    );
    const created = await api.MergeRequests.create(w.project.id, 'gb/feature', 'main', 'Add gb', {
      reviewerIds: [w.reporter.user.id],
      squash: true,
    });
    expect(created).toMatchObject({
      iid: 1,
      state: 'opened',
      squash: true,
      reviewers: [{ id: w.reporter.user.id }],
    });
    const all = await api.MergeRequests.all({ projectId: w.project.id, state: 'opened' });
    expect(all.map((mr) => mr.iid)).toEqual([1]);
    const mine = await api.MergeRequests.all({ scope: 'created_by_me' });
    expect(mine.map((mr) => mr.iid)).toEqual([1]);
    const shown = await api.MergeRequests.show(w.project.id, 1);
    expect(shown.diff_refs).toMatchObject({ head_sha: created.sha });
    const edited = await api.MergeRequests.edit(w.project.id, 1, {
      title: '(Draft) Add gb',
      stateEvent: 'close',
    });
    expect(edited).toMatchObject({ draft: true, state: 'closed' });
    const labelled = await api.MergeRequests.edit(w.project.id, 1, {
      labels: 'bug',
      addLabels: 'ui,Backend',
    });
    expect(labelled.labels).toEqual(['Backend', 'bug', 'ui']);
    const trimmed = await api.MergeRequests.edit(w.project.id, 1, { removeLabels: 'bug' });
    expect(trimmed.labels).toEqual(['Backend', 'ui']);
    const byLabel = await api.MergeRequests.all({ projectId: w.project.id, labels: 'ui', state: 'closed' });
    expect(byLabel.map((mr) => mr.iid)).toEqual([1]);
    const notByLabel = await api.MergeRequests.all({ projectId: w.project.id, not: { labels: 'ui' } });
    expect(notByLabel).toEqual([]);
    await expect(api.MergeRequests.create(w.project.id, 'gb/none', 'main', 'Nothing')).rejects.toMatchObject(
      status(400),
    );
    const reporterApi = new Gitlab({ host: server.url, token: w.reporter.token });
    await expect(reporterApi.MergeRequests.remove(w.project.id, 1)).rejects.toMatchObject(status(403));
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)('drives merge requests (needs Debian python3-gitlab)', async () => {
    const w = await world();
    const stdout = await runPythonClient('python_gitlab_merge_requests.py', [
      server.url,
      w.developer.token,
      String(w.project.id),
      String(w.reporter.user.id),
    ]);
    expect(JSON.parse(stdout.trim())).toEqual({
      created: [1, 'opened', false, '!1', w.reporter.user.id],
      after_save: ['Draft: Add the parser', true, true],
      labelled: [['bug', 'parser'], 'py-v1'],
      by_labels: [1],
      without: [],
      listed: [1],
      by_author: [1],
      by_iids: [1],
      commits: ['Add the parser'],
      changes: ['parser.py'],
      versions: [true],
      participants: [w.developer.user.id, w.reporter.user.id],
      estimate: '1h 30m',
      spent: 1800,
      duplicate: [409, ['Another open merge request already exists for this source branch: !1']],
      missing: [400, { source_branch: ['does not exist'] }],
      closed: 'closed',
    });
  });
});

/** Resource events through the real clients: @gitbeaker/rest and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

/** A project with an open merge request !1 by its Developer, and a milestone. */
async function world() {
  const { project } = await server.factories.ownedProjectWithReadme();
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const api = new Gitlab({ host: server.url, token: developer.token });
  await api.Commits.create(
    project.id,
    'feature',
    'Add a file',
    [{ action: 'create', filePath: 'new.txt', content: 'new\n' }],
    { startBranch: 'main' },
  );
  await api.MergeRequests.create(project.id, 'feature', 'main', 'Add a file');
  const milestone = await api.ProjectMilestones.create(project.id, 'v1.0');
  return { project, developer, api, milestone };
}

describe('@gitbeaker/rest', () => {
  it('lists and shows label, milestone and state events', async () => {
    const { project, api, milestone } = await world();
    await api.MergeRequests.edit(project.id, 1, { labels: 'bug', milestoneId: milestone.id });
    await api.MergeRequests.edit(project.id, 1, { stateEvent: 'close' });
    const labels = await api.MergeRequestLabelEvents.all(project.id, 1);
    expect(labels.map((e) => [(e.label as { name: string }).name, e.action])).toEqual([['bug', 'add']]);
    expect((await api.MergeRequestLabelEvents.show(project.id, 1, labels[0].id)).id).toBe(labels[0].id);
    const milestones = await api.MergeRequestMilestoneEvents.all(project.id, 1);
    expect(milestones.map((e) => [(e.milestone as { id: number }).id, e.action])).toEqual([
      [milestone.id, 'add'],
    ]);
    expect((await api.MergeRequestMilestoneEvents.show(project.id, 1, milestones[0].id)).action).toBe('add');
    const states = await api.MergeRequestStateEvents.all(project.id, 1);
    expect(states.map((e) => e.state)).toEqual(['closed']);
    expect((await api.MergeRequestStateEvents.show(project.id, 1, states[0].id)).state).toBe('closed');
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'saves labels, a milestone and a close, then reads their events (needs Debian python3-gitlab)',
    async () => {
      const { project, developer, milestone } = await world();
      const stdout = await runPythonClient('python_gitlab_resource_events.py', [
        server.url,
        developer.token,
        String(project.id),
        '1',
        String(milestone.id),
      ]);
      expect(JSON.parse(stdout.trim())).toEqual({
        labels: [
          ['bug', 'add', 'MergeRequest', true],
          ['feature', 'add', 'MergeRequest', true],
        ],
        label_event: [true, developer.user.username],
        milestones: [[true, 'add']],
        milestone_event: 'v1.0',
        states: ['closed'],
        state_event: 'closed',
        missing: 404,
      });
    },
  );
});

/** Labels and milestones through the real clients: @gitbeaker/rest and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

/** A group with a project in it, owned by one user. */
async function setup() {
  const owner = await server.factories.user();
  const group = await server.factories.group();
  await server.factories.member(group, owner.user, AccessLevel.Owner);
  const project = await server.factories.projectWithReadme({ owner, namespace: group });
  return { owner, group, project };
}

describe('@gitbeaker/rest', () => {
  it('creates, lists, shows, edits and removes project and group labels', async () => {
    const { owner, group, project } = await setup();
    const api = new Gitlab({ host: server.url, token: owner.token });
    const groupLabel = await api.GroupLabels.create(group.id, 'security', '#FF0000');
    expect(groupLabel).toMatchObject({ name: 'security', text_color: '#FFFFFF', subscribed: false });
    const label = await api.ProjectLabels.create(project.id, 'bug', '#FFF', {
      description: 'Broken',
      priority: 1,
    });
    expect(label).toMatchObject({ name: 'bug', text_color: '#1F1E24', priority: 1, is_project_label: true });
    await api.ProjectLabels.create(project.id, 'docs', 'navy');

    const all = await api.ProjectLabels.all(project.id, { perPage: 1, withCounts: true });
    expect(all.map((l) => l.name)).toEqual(['bug', 'docs', 'security']);
    expect(all[0]).toMatchObject({ open_merge_requests_count: 0 });
    expect(await api.ProjectLabels.show(project.id, 'security')).toMatchObject({ is_project_label: false });

    const edited = await api.ProjectLabels.edit(project.id, label.id, { newName: 'defect' });
    expect(edited).toMatchObject({ id: label.id, name: 'defect', text_color: '#1F1E24' });
    const recoloured = await api.ProjectLabels.edit(project.id, 'defect', { color: '#000000' });
    expect(recoloured).toMatchObject({ id: label.id, text_color: '#FFFFFF' });
    await api.GroupLabels.edit(group.id, 'security', { color: '#FFFFFF' });
    expect(await api.GroupLabels.show(group.id, groupLabel.id)).toMatchObject({ color: '#FFFFFF' });

    await api.ProjectLabels.remove(project.id, 'defect');
    await api.GroupLabels.remove(group.id, groupLabel.id);
    expect((await api.ProjectLabels.all(project.id)).map((l) => l.name)).toEqual(['docs']);
    await expect(api.ProjectLabels.show(project.id, 'defect')).rejects.toMatchObject({
      cause: { response: { status: 404 } },
    });
  });

  // gitbeaker's label subscribe() posts to `/issues/:id/subscribe` (its bug), so only promote() is driven here.
  it('promotes a project label to the group', async () => {
    const { owner, group, project } = await setup();
    const api = new Gitlab({ host: server.url, token: owner.token });
    const label = await api.ProjectLabels.create(project.id, 'triage', '#FFAA00');
    const promoted = await api.ProjectLabels.promote(project.id, 'triage');
    expect(promoted).toMatchObject({ id: label.id, name: 'triage', subscribed: false });
    expect(await api.GroupLabels.show(group.id, label.id)).toMatchObject({ name: 'triage' });
    expect(await api.ProjectLabels.show(project.id, 'triage')).toMatchObject({ is_project_label: false });
  });

  it('creates, lists, edits, closes and removes milestones', async () => {
    const { owner, group, project } = await setup();
    const api = new Gitlab({ host: server.url, token: owner.token });
    const v1 = await api.ProjectMilestones.create(project.id, 'v1.0', { dueDate: '2026-03-31' });
    expect(v1).toMatchObject({ iid: 1, project_id: project.id, state: 'active', due_date: '2026-03-31' });
    await api.ProjectMilestones.create(project.id, 'v2.0');
    const q3 = await api.GroupMilestones.create(group.id, 'Q3');
    expect(q3).toMatchObject({ iid: 1, group_id: group.id });

    const listed = await api.ProjectMilestones.all(project.id, { perPage: 1, includeParentMilestones: true });
    expect(listed.map((m) => m.title)).toEqual(['v1.0', 'Q3', 'v2.0']);
    const closed = await api.ProjectMilestones.edit(project.id, v1.id, { stateEvent: 'close' });
    expect(closed).toMatchObject({ state: 'closed' });
    expect((await api.ProjectMilestones.all(project.id, { state: 'active' })).map((m) => m.title)).toEqual([
      'v2.0',
    ]);
    expect(await api.ProjectMilestones.show(project.id, v1.id)).toMatchObject({ title: 'v1.0' });
    expect(await api.GroupMilestones.show(group.id, q3.id)).toMatchObject({ title: 'Q3' });

    await api.ProjectMilestones.remove(project.id, v1.id);
    await api.GroupMilestones.remove(group.id, q3.id);
    await expect(api.ProjectMilestones.show(project.id, v1.id)).rejects.toMatchObject({
      cause: { response: { status: 404 } },
    });
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)('drives labels and milestones (needs Debian python3-gitlab)', async () => {
    const { owner, group, project } = await setup();
    const stdout = await runPythonClient('python_gitlab_labels.py', [
      server.url,
      owner.token,
      String(project.id),
      String(group.id),
    ]);
    expect(JSON.parse(stdout)).toEqual({
      security: ['security', '#FFFFFF'],
      group_labels: [['security', 'Vulnerabilities']],
      bug: ['bug', '#FF0000', '#FFFFFF', 2, true],
      paged: ['bug', 'docs', 'security'],
      own: ['bug', 'docs'],
      renamed: ['defect', '#428BCA', true],
      duplicate: [409, 'Label already exists'],
      after_delete: [404, '404 Label Not Found'],
      subscriptions: [true, 304, false, [true, false, true]],
      promoted: [true, 'triage', true, false],
      closed: ['v1.0'],
      milestones: [
        [1, 'v1.0', 'closed'],
        [2, 'v2.0', 'active'],
      ],
      by_iid: ['v2.0'],
      bad_dates: [400, 'Failed to create milestone {:due_date=>["must be greater than start date"]}'],
      remaining: ['v2.0'],
      group_milestones: [[1, 'Q3', true]],
    });
  });
});

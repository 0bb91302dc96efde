/** Draft notes through the real clients: @gitbeaker/rest and python-gitlab. */
import { createHash } from 'node:crypto';
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/**
 * A project whose merge request !1, by its Developer, changes lib.txt from a/b/c to a/B/c/d, with two
 * threads of the Developer's; and a second Developer who reviews it.
 */
async function world() {
  const { project, owner } = await server.factories.ownedProjectWithReadme();
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const reviewer = await server.factories.memberOf(project, AccessLevel.Developer);
  const admin = new Gitlab({ host: server.url, token: owner.token });
  await admin.Commits.create(project.id, 'main', 'lib', [
    { action: 'create', filePath: 'lib.txt', content: 'a\nb\nc\n' },
  ]);
  await admin.Commits.create(
    project.id,
    'lib',
    'lib',
    [{ action: 'update', filePath: 'lib.txt', content: 'a\nB\nc\nd\n' }],
    { startBranch: 'main' },
  );
  const api = new Gitlab({ host: server.url, token: developer.token });
  await api.MergeRequests.create(project.id, 'lib', 'main', 'Change lib');
  const open = await api.MergeRequestDiscussions.create(project.id, 1, 'Why a/B?');
  const toResolve = await api.MergeRequestDiscussions.create(project.id, 1, 'Is d needed?');
  return { project, reviewer, threads: [open.id, toResolve.id] as const };
}

describe('@gitbeaker/rest', () => {
  it('creates three draft notes, one on a diff line, and bulk publishes them into their threads', async () => {
    const { project, reviewer, threads } = await world();
    const api = new Gitlab({ host: server.url, token: reviewer.token });
    const mr = await api.MergeRequests.show(project.id, 1);
    const refs = mr.diff_refs as { base_sha: string; start_sha: string; head_sha: string };
    const onLine = await api.MergeRequestDraftNotes.create(project.id, 1, 'This line is new.', {
      position: {
        baseSha: refs.base_sha,
        startSha: refs.start_sha,
        headSha: refs.head_sha,
        positionType: 'text',
        oldPath: 'lib.txt',
        newPath: 'lib.txt',
        newLine: 4,
      } as never,
    });
    expect(onLine).toMatchObject({ line_code: `${sha1('lib.txt')}_4_4`, position: { new_line: 4 } });
    // gitbeaker types the discussion id as a number; GitLab's are 40 hex characters.
    const reply = await api.MergeRequestDraftNotes.create(project.id, 1, 'Agreed.', {
      inReplyToDiscussionId: threads[0] as never,
    });
    const resolving = await api.MergeRequestDraftNotes.create(project.id, 1, 'Fixed.', {
      inReplyToDiscussionId: threads[1] as never,
      resolveDiscussion: true,
    });
    expect(resolving).toMatchObject({ discussion_id: threads[1], resolve_discussion: true });
    expect((await api.MergeRequestDraftNotes.show(project.id, 1, reply.id)).note).toBe('Agreed.');
    expect((await api.MergeRequestDraftNotes.all(project.id, 1)).map((d) => d.id)).toEqual([
      onLine.id,
      reply.id,
      resolving.id,
    ]);

    expect(await api.MergeRequestDraftNotes.publishBulk(project.id, 1)).toBeNull();
    expect(await api.MergeRequestDraftNotes.all(project.id, 1)).toEqual([]);

    const discussions = await api.MergeRequestDiscussions.all(project.id, 1);
    const byId = new Map(discussions.map((d) => [d.id, d.notes!]));
    expect(byId.get(threads[0])!.map((n) => [n.body, n.resolved])).toEqual([
      ['Why a/B?', false],
      ['Agreed.', false],
    ]);
    expect(byId.get(threads[1])!.map((n) => [n.body, n.resolved])).toEqual([
      ['Is d needed?', true],
      ['Fixed.', true],
    ]);
    const diff = discussions.find((d) => d.notes![0].type === 'DiffNote')!;
    expect(
      diff.notes!.map((n) => [n.body, n.author.id, (n.position as { new_line: number }).new_line]),
    ).toEqual([['This line is new.', reviewer.user.id, 4]]);
  });

  it('publishes and removes single drafts', async () => {
    const { project, reviewer } = await world();
    const api = new Gitlab({ host: server.url, token: reviewer.token });
    const kept = await api.MergeRequestDraftNotes.create(project.id, 1, 'Publish me.');
    const dropped = await api.MergeRequestDraftNotes.create(project.id, 1, 'Drop me.');
    expect(await api.MergeRequestDraftNotes.publish(project.id, 1, kept.id)).toBeNull();
    await api.MergeRequestDraftNotes.remove(project.id, 1, dropped.id);
    expect(await api.MergeRequestDraftNotes.all(project.id, 1)).toEqual([]);
    const notes = await api.MergeRequestNotes.all(project.id, 1);
    expect(notes.map((n) => n.body)).toContain('Publish me.');
    expect(notes.map((n) => n.body)).not.toContain('Drop me.');
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'creates three drafts, one on a diff line, and bulk publishes them (needs Debian python3-gitlab)',
    async () => {
      const { project, reviewer, threads } = await world();
      const stdout = await runPythonClient('python_gitlab_draft_notes.py', [
        server.url,
        reviewer.token,
        String(project.id),
        '1',
        ...threads,
      ]);
      expect(JSON.parse(stdout.trim())).toEqual({
        line_code: `${sha1('lib.txt')}_4_4`,
        position: ['text', 4],
        fetched: 'Agreed, mostly.',
        listed: [
          ['This line is new.', null, false],
          ['Agreed, mostly.', threads[0], false],
          ['Fixed.', threads[1], true],
        ],
        left: 0,
        diff: [['This line is new.', 4]],
        open: [
          ['Why a/B?', false],
          ['Agreed, mostly.', false],
        ],
        resolved: [
          ['Is d needed?', true],
          ['Fixed.', true],
        ],
      });
    },
  );
});

/** Merge request notes and discussions through the real clients: @gitbeaker/rest and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

/** A project with an open merge request !1 by its Developer that adds a text file and an image. */
async function world() {
  const { project } = await server.factories.ownedProjectWithReadme();
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const api = new Gitlab({ host: server.url, token: developer.token });
  await api.Commits.create(
    project.id,
    'feature',
    'Add a file',
    [
      { action: 'create', filePath: 'new.txt', content: 'new\n' },
      // A 1×1 PNG, for a thread on the image.
      {
        action: 'create',
        filePath: 'logo.png',
        content:
          'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
        encoding: 'base64',
      },
    ],
    { startBranch: 'main' },
  );
  await api.MergeRequests.create(project.id, 'feature', 'main', 'Add a file');
  return { project, developer, api };
}

describe('@gitbeaker/rest', () => {
  it('starts a thread on a point of an image', async () => {
    const { project, api } = await world();
    const mr = await api.MergeRequests.show(project.id, 1);
    const refs = mr.diff_refs as { base_sha: string; start_sha: string; head_sha: string };
    const thread = await api.MergeRequestDiscussions.create(project.id, 1, 'Too dark', {
      position: {
        positionType: 'image',
        baseSha: refs.base_sha,
        startSha: refs.start_sha,
        headSha: refs.head_sha,
        newPath: 'logo.png',
        oldPath: 'logo.png',
        width: '64',
        height: '48',
        x: 3,
        y: 4,
      },
    });
    expect(thread.notes?.[0]).toMatchObject({
      type: 'DiffNote',
      position: { position_type: 'image', new_path: 'logo.png', width: 64, height: 48, x: 3, y: 4 },
    });
  });

  it('comments, edits, starts a thread, replies and resolves it', async () => {
    const { project, api } = await world();
    const note = await api.MergeRequestNotes.create(project.id, 1, 'First look');
    expect(note).toMatchObject({ body: 'First look', noteable_iid: 1, system: false });
    const edited = await api.MergeRequestNotes.edit(project.id, 1, note.id, { body: 'Edited' });
    expect(edited.body).toBe('Edited');
    expect((await api.MergeRequestNotes.show(project.id, 1, note.id)).body).toBe('Edited');
    const thread = await api.MergeRequestDiscussions.create(project.id, 1, 'Lazily?');
    await api.MergeRequestDiscussions.addNote(project.id, 1, thread.id, 'Yes');
    const resolved = await api.MergeRequestDiscussions.resolve(project.id, 1, thread.id, true);
    expect(resolved.notes?.map((n) => n.resolved)).toEqual([true, true]);
    const all = await api.MergeRequestDiscussions.all(project.id, 1);
    expect(all.map((d) => d.individual_note)).toEqual([true, false]);
    const notes = await api.MergeRequestNotes.all(project.id, 1);
    expect(notes).toHaveLength(3);
    await api.MergeRequestNotes.remove(project.id, 1, note.id);
    expect(await api.MergeRequestNotes.all(project.id, 1)).toHaveLength(2);
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)('drives notes and discussions (needs Debian python3-gitlab)', async () => {
    const { project, developer } = await world();
    const stdout = await runPythonClient('python_gitlab_notes.py', [
      server.url,
      developer.token,
      String(project.id),
      '1',
    ]);
    expect(JSON.parse(stdout.trim())).toEqual({
      note: ['First look, edited', 1, false],
      listed: ['First look, edited'],
      after_delete: true,
      discussion: [40, 'Yes', 'DiscussionNote'],
      resolved: [true, true],
      threads: [1, 2],
      image: [
        'DiffNote',
        { position_type: 'image', new_path: 'logo.png', width: 64, height: 48, x: 10.5, y: 20 },
        true,
      ],
      user_notes_count: 4,
    });
  });
});

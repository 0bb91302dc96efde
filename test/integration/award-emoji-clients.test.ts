/** Emoji reactions through the real clients: @gitbeaker/rest and python-gitlab. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

/** A project with an open merge request !1 by its Developer. */
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
  return { project, developer, api };
}

describe('@gitbeaker/rest', () => {
  it('awards, lists, shows and removes reactions on a merge request and a note', async () => {
    const { project, api } = await world();
    const award = await api.MergeRequestAwardEmojis.award(project.id, 1, 'thumbsup');
    expect(award).toMatchObject({ name: 'thumbsup', awardable_type: 'MergeRequest' });
    await api.MergeRequestAwardEmojis.award(project.id, 1, 'tada');
    const all = await api.MergeRequestAwardEmojis.all(project.id, 1, { perPage: 1 });
    expect(all.map((a) => a.name)).toEqual(['thumbsup', 'tada']);
    expect((await api.MergeRequestAwardEmojis.show(project.id, 1, award.id)).name).toBe('thumbsup');
    expect((await api.MergeRequests.show(project.id, 1)).upvotes).toBe(1);
    await api.MergeRequestAwardEmojis.remove(project.id, 1, award.id);
    expect((await api.MergeRequestAwardEmojis.all(project.id, 1)).map((a) => a.name)).toEqual(['tada']);

    const note = await api.MergeRequestNotes.create(project.id, 1, 'Nice');
    const onNote = await api.MergeRequestNoteAwardEmojis.award(project.id, 1, note.id, 'heart');
    expect(onNote).toMatchObject({ name: 'heart', awardable_type: 'Note', awardable_id: note.id });
    expect(await api.MergeRequestNoteAwardEmojis.all(project.id, 1, note.id)).toHaveLength(1);
    expect((await api.MergeRequestNoteAwardEmojis.show(project.id, 1, note.id, onNote.id)).name).toBe(
      'heart',
    );
    await api.MergeRequestNoteAwardEmojis.remove(project.id, 1, note.id, onNote.id);
    expect(await api.MergeRequestNoteAwardEmojis.all(project.id, 1, note.id)).toHaveLength(0);
  });
});

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'drives reactions on a merge request and a note (needs Debian python3-gitlab)',
    async () => {
      const { project, developer } = await world();
      const stdout = await runPythonClient('python_gitlab_award_emoji.py', [
        server.url,
        developer.token,
        String(project.id),
        '1',
      ]);
      expect(JSON.parse(stdout.trim())).toEqual({
        award: ['thumbsup', 'MergeRequest', true],
        fetched: 'thumbsup',
        listed: ['thumbsup', 'tada', 'rocket', 'eyes'],
        upvotes: 1,
        repeat: [404, '404 Award Emoji Name has already been taken Not Found'],
        after_delete: ['tada', 'rocket', 'eyes'],
        note: [['heart', 'Note', true]],
        note_fetched: 'heart',
        note_after_delete: 0,
      });
    },
  );
});

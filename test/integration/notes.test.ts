/** Notes on merge requests: create, list, read, edit, delete; who may; system notes after updates. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/** A 1×1 PNG. */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });

type Json = Record<string, unknown>;

interface World {
  owner: TestUser;
  project: Project;
  maintainer: TestUser;
  developer: TestUser;
  reporter: TestUser;
  guest: TestUser;
  outsider: TestUser;
  iid: number;
  mrId: number;
}

/** A project (public unless told) with one open merge request by its Developer, and a member of each role. */
async function world(visibility: 'public' | 'private' = 'public'): Promise<World> {
  const owner = await server.factories.user();
  const project = await server.factories.projectWithReadme({ owner, visibility });
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
  const guest = await server.factories.memberOf(project, AccessLevel.Guest);
  const outsider = await server.factories.user();
  const branch = await server.request('POST', `/projects/${project.id}/repository/commits`, {
    token: developer.token,
    json: {
      branch: 'feature',
      start_branch: 'main',
      commit_message: 'Add a file',
      actions: [{ action: 'create', file_path: 'new.txt', content: 'new\n' }],
    },
  });
  expect(branch.status, branch.text).toBe(201);
  const mr = await server.request('POST', `/projects/${project.id}/merge_requests`, {
    token: developer.token,
    json: { source_branch: 'feature', target_branch: 'main', title: 'Add a file' },
  });
  expect(mr.status, mr.text).toBe(201);
  const body = mr.body as Json;
  return {
    owner,
    project,
    maintainer,
    developer,
    reporter,
    guest,
    outsider,
    iid: body.iid as number,
    mrId: body.id as number,
  };
}

const notesPath = (w: World) => `/projects/${w.project.id}/merge_requests/${w.iid}/notes`;

async function comment(w: World, user: TestUser, body: string, extra: Json = {}): Promise<Json> {
  const res = await server.request('POST', notesPath(w), { token: user.token, json: { body, ...extra } });
  expect(res.status, res.text).toBe(201);
  return res.body as Json;
}

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('creating and reading notes', () => {
  it('creates a note with GitLab fields, reads it back and counts it on the merge request', async () => {
    const w = await world();
    const note = await comment(w, w.reporter, 'Looks good to me.');
    expect(note).toMatchObject({
      type: null,
      body: 'Looks good to me.',
      author: { id: w.reporter.user.id, username: w.reporter.user.username },
      system: false,
      noteable_id: w.mrId,
      noteable_type: 'MergeRequest',
      noteable_iid: w.iid,
      project_id: w.project.id,
      resolvable: false,
      confidential: false,
      internal: false,
      commands_changes: {},
    });
    expect(note).not.toHaveProperty('resolved');
    const got = await server.request('GET', `${notesPath(w)}/${note.id as number}`, {
      token: w.outsider.token,
    });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(note);
    const mr = await server.request('GET', `/projects/${w.project.id}/merge_requests/${w.iid}`, {
      token: w.owner.token,
    });
    expect((mr.body as Json).user_notes_count).toBe(1);
    const list = await server.request('GET', `/projects/${w.project.id}/merge_requests`, {
      token: w.owner.token,
    });
    expect((list.body as Json[])[0].user_notes_count).toBe(1);
  });

  it.each([
    ['no body', {}, 400, { error: 'body is missing' }],
    ['an empty body', { body: '' }, 400, undefined],
  ])('refuses %s', async (_, json, status, error) => {
    const w = await world();
    const res = await server.request('POST', notesPath(w), { token: w.developer.token, json });
    expect(res.status).toBe(status);
    if (error) expect(res.body).toEqual(error);
  });

  it('answers 404 Note Not Found for a note of another merge request or none', async () => {
    const w = await world();
    const other = await world();
    const note = await comment(other, other.developer, 'elsewhere');
    for (const id of [note.id as number, 2147483647]) {
      const res = await server.request('GET', `${notesPath(w)}/${id}`, { token: w.owner.token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: '404 Note Not Found' });
    }
    const missingMr = await server.request('GET', `/projects/${w.project.id}/merge_requests/999/notes`, {
      token: w.owner.token,
    });
    expect(missingMr.status).toBe(404);
  });

  it('sorts by created_at or updated_at in either direction, and paginates', async () => {
    const w = await world();
    const first = await comment(w, w.developer, 'first');
    const second = await comment(w, w.developer, 'second');
    const third = await comment(w, w.developer, 'third');
    await server.request('PUT', `${notesPath(w)}/${first.id as number}`, {
      token: w.developer.token,
      json: { body: 'first, edited' },
    });
    const ids = async (query: string) =>
      (
        (await server.request('GET', `${notesPath(w)}?${query}`, { token: w.owner.token })).body as Json[]
      ).map((n) => n.id);
    const cases: Array<[string, unknown[]]> = [
      ['', [third.id, second.id, first.id]],
      ['sort=asc', [first.id, second.id, third.id]],
      ['order_by=updated_at', [first.id, third.id, second.id]],
      ['order_by=updated_at&sort=asc', [second.id, third.id, first.id]],
    ];
    for (const [query, expected] of cases) expect(await ids(query), query).toEqual(expected);
    const page = await server.request('GET', `${notesPath(w)}?per_page=2&page=2&sort=asc`, {
      token: w.owner.token,
    });
    expect((page.body as Json[]).map((n) => n.id)).toEqual([third.id]);
    expect(page.headers.get('x-total')).toBe('3');
    expect(page.headers.get('x-total-pages')).toBe('2');
    expect(page.headers.get('x-prev-page')).toBe('1');
  });
});

describe('who may write', () => {
  it.each([
    ['an outsider on a public project', 'outsider', false, 201],
    ['a guest on a public project', 'guest', false, 201],
    ['an outsider on a locked discussion', 'outsider', true, 403],
    ['a guest on a locked discussion', 'guest', true, 201],
    ['a developer on a locked discussion', 'developer', true, 201],
  ] as const)('%s: %s', async (_, who, locked, status) => {
    const w = await world();
    if (locked) {
      const lock = await server.request('PUT', `/projects/${w.project.id}/merge_requests/${w.iid}`, {
        token: w.developer.token,
        json: { discussion_locked: true },
      });
      expect(lock.status).toBe(200);
    }
    const res = await server.request('POST', notesPath(w), { token: w[who].token, json: { body: 'hi' } });
    expect(res.status, res.text).toBe(status);
  });

  it('keeps internal notes to Reporter and above', async () => {
    const w = await world();
    const refused = await server.request('POST', notesPath(w), {
      token: w.guest.token,
      json: { body: 'secret', internal: true },
    });
    expect(refused.status).toBe(403);
    const note = await comment(w, w.reporter, 'secret', { confidential: true });
    expect(note).toMatchObject({ internal: true, confidential: true });
    const path = `${notesPath(w)}/${note.id as number}`;
    expect((await server.request('GET', path, { token: w.outsider.token })).status).toBe(404);
    expect((await server.request('GET', path, { token: w.reporter.token })).status).toBe(200);
    const seen = async (user: TestUser) =>
      ((await server.request('GET', notesPath(w), { token: user.token })).body as Json[]).length;
    expect(await seen(w.outsider)).toBe(0);
    expect(await seen(w.maintainer)).toBe(1);
  });

  it.each([
    ['the author edits', 'reporter', 'PUT', 200],
    ['a maintainer edits', 'maintainer', 'PUT', 403],
    ['the owner edits', 'owner', 'PUT', 403],
    ['a developer deletes', 'developer', 'DELETE', 403],
    ['the author deletes', 'reporter', 'DELETE', 204],
    ['a maintainer deletes', 'maintainer', 'DELETE', 204],
  ] as const)('%s: %s', async (_, who, method, status) => {
    const w = await world();
    const note = await comment(w, w.reporter, 'mine');
    const res = await server.request(method, `${notesPath(w)}/${note.id as number}`, {
      token: w[who].token,
      ...(method === 'PUT' ? { json: { body: 'changed' } } : {}),
    });
    expect(res.status, res.text).toBe(status);
    if (status === 200) expect(res.body).toMatchObject({ id: note.id, body: 'changed' });
    if (status === 204) {
      const gone = await server.request('GET', `${notesPath(w)}/${note.id as number}`, {
        token: w.owner.token,
      });
      expect(gone.status).toBe(404);
    }
  });

  it('requires a body to edit', async () => {
    const w = await world();
    const note = await comment(w, w.reporter, 'mine');
    const res = await server.request('PUT', `${notesPath(w)}/${note.id as number}`, {
      token: w.reporter.token,
      json: {},
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'body is missing' });
  });

  it('hides the notes of a private project from outsiders', async () => {
    const w = await world('private');
    const res = await server.request('GET', notesPath(w), { token: w.outsider.token });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: '404 Project Not Found' });
    const guest = await server.request('GET', notesPath(w), { token: w.guest.token });
    expect(guest.status).toBe(403);
  });
});

describe('system notes', () => {
  it.each([
    ['closing', { state_event: 'close' }, ['closed']],
    ['retitling', { title: 'Add two files' }, ['changed title from **Add a file** to **Add two files**']],
    ['marking draft', { title: 'Draft: Add a file' }, ['marked this merge request as **draft**']],
    ['describing', { description: 'Why' }, ['changed the description']],
    ['locking', { discussion_locked: true }, ['locked the discussion in this merge request']],
  ])('records %s as a system note, not counted as a user note', async (_, json, bodies) => {
    const w = await world();
    const res = await server.request('PUT', `/projects/${w.project.id}/merge_requests/${w.iid}`, {
      token: w.developer.token,
      json,
    });
    expect(res.status, res.text).toBe(200);
    const notes = await waitFor(
      async () => (await server.request('GET', notesPath(w), { token: w.owner.token })).body as Json[],
      (list) => list.length >= bodies.length,
      'system notes',
    );
    expect(notes.map((n) => n.body)).toEqual(bodies);
    expect(notes[0]).toMatchObject({ system: true, resolvable: false, author: { id: w.developer.user.id } });
    expect(notes[0]).not.toHaveProperty('resolved');
    const mr = await server.request('GET', `/projects/${w.project.id}/merge_requests/${w.iid}`, {
      token: w.owner.token,
    });
    expect((mr.body as Json).user_notes_count).toBe(0);
    const id = notes[0].id as number;
    for (const method of ['PUT', 'DELETE'] as const) {
      const write = await server.request(method, `${notesPath(w)}/${id}`, {
        token: w.developer.token,
        ...(method === 'PUT' ? { json: { body: 'x' } } : {}),
      });
      expect(write.status, method).toBe(403);
    }
  });

  it('records assignee and reviewer changes with their usernames', async () => {
    const w = await world();
    const update = (json: Json) =>
      server.request('PUT', `/projects/${w.project.id}/merge_requests/${w.iid}`, {
        token: w.developer.token,
        json,
      });
    expect(
      (await update({ assignee_ids: [w.reporter.user.id], reviewer_ids: [w.maintainer.user.id] })).status,
    ).toBe(200);
    expect((await update({ assignee_ids: [w.developer.user.id], reviewer_ids: [] })).status).toBe(200);
    const notes = await waitFor(
      async () =>
        (await server.request('GET', `${notesPath(w)}?sort=asc`, { token: w.owner.token })).body as Json[],
      (list) => list.length >= 5,
      'system notes',
    );
    const at = (user: TestUser) => `@${user.user.username}`;
    expect(notes.map((n) => n.body)).toEqual([
      `assigned to ${at(w.reporter)}`,
      `requested review from ${at(w.maintainer)}`,
      `assigned to ${at(w.developer)}`,
      `unassigned ${at(w.reporter)}`,
      `removed review request for ${at(w.maintainer)}`,
    ]);
  });

  it('records reopening after closing, in order', async () => {
    const w = await world();
    for (const state_event of ['close', 'reopen'])
      await server.request('PUT', `/projects/${w.project.id}/merge_requests/${w.iid}`, {
        token: w.developer.token,
        json: { state_event },
      });
    const notes = await waitFor(
      async () =>
        (await server.request('GET', `${notesPath(w)}?sort=asc`, { token: w.owner.token })).body as Json[],
      (list) => list.length >= 2,
      'system notes',
    );
    expect(notes.map((n) => n.body)).toEqual(['closed', 'reopened']);
  });
});

const discussionsPath = (w: World) => `/projects/${w.project.id}/merge_requests/${w.iid}/discussions`;

async function thread(w: World, user: TestUser, body: string): Promise<Json> {
  const res = await server.request('POST', discussionsPath(w), { token: user.token, json: { body } });
  expect(res.status, res.text).toBe(201);
  return res.body as Json;
}

const mergeStatus = async (w: World) =>
  (
    (
      await server.request('GET', `/projects/${w.project.id}/merge_requests/${w.iid}`, {
        token: w.owner.token,
      })
    ).body as Json
  ).detailed_merge_status;

describe('discussions', () => {
  it('starts a resolvable thread, replies to it and lists plain notes as individual discussions', async () => {
    const w = await world();
    const plain = await comment(w, w.reporter, 'plain');
    const started = await thread(w, w.reporter, 'Should this parse lazily?');
    expect(started.id).toMatch(/^[0-9a-f]{40}$/);
    expect(started.individual_note).toBe(false);
    expect((started.notes as Json[])[0]).toMatchObject({
      type: 'DiscussionNote',
      resolvable: true,
      resolved: false,
      resolved_by: null,
    });
    const reply = await server.request('POST', `${discussionsPath(w)}/${started.id as string}/notes`, {
      token: w.outsider.token,
      json: { body: 'Yes, on first use.' },
    });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toMatchObject({ type: 'DiscussionNote', body: 'Yes, on first use.' });
    const list = await server.request('GET', discussionsPath(w), { token: w.owner.token });
    expect(list.status).toBe(200);
    expect(list.headers.get('x-total')).toBe('2');
    const discussions = list.body as Json[];
    expect(discussions.map((d) => [d.individual_note, (d.notes as Json[]).map((n) => n.body)])).toEqual([
      [true, ['plain']],
      [false, ['Should this parse lazily?', 'Yes, on first use.']],
    ]);
    expect((discussions[0].notes as Json[])[0].id).toBe(plain.id);
    const paged = await server.request('GET', `${discussionsPath(w)}?per_page=1&page=2`, {
      token: w.owner.token,
    });
    expect((paged.body as Json[]).map((d) => d.id)).toEqual([started.id]);
    const one = await server.request('GET', `${discussionsPath(w)}/${started.id as string}`, {
      token: w.owner.token,
    });
    expect(one.body).toEqual(discussions[1]);
  });

  it('turns a plain note into a thread when replied to', async () => {
    const w = await world();
    await comment(w, w.reporter, 'plain');
    const [discussion] = (await server.request('GET', discussionsPath(w), { token: w.owner.token }))
      .body as Json[];
    const reply = await server.request('POST', `${discussionsPath(w)}/${discussion.id as string}/notes`, {
      token: w.developer.token,
      json: { body: 'reply' },
    });
    expect(reply.status).toBe(201);
    const after = (
      await server.request('GET', `${discussionsPath(w)}/${discussion.id as string}`, {
        token: w.owner.token,
      })
    ).body as Json;
    expect(after.individual_note).toBe(false);
    expect((after.notes as Json[]).map((n) => [n.type, n.resolvable])).toEqual([
      ['DiscussionNote', true],
      ['DiscussionNote', true],
    ]);
  });

  it.each([
    [
      'an unknown discussion',
      'GET',
      '0123456789abcdef0123456789abcdef01234567',
      undefined,
      404,
      { message: '404 Discussion Not Found' },
    ],
    ['a reply without body', 'POST', '{thread}/notes', {}, 400, { error: 'body is missing' }],
    ['resolve without resolved', 'PUT', '{thread}', {}, 400, { error: 'resolved is missing' }],
    [
      'a note edit with both',
      'PUT',
      '{thread}/notes/{note}',
      { body: 'x', resolved: true },
      400,
      { error: 'body, resolved are mutually exclusive' },
    ],
    [
      'a note edit with neither',
      'PUT',
      '{thread}/notes/{note}',
      {},
      400,
      { error: 'body, resolved are missing, exactly one parameter must be provided' },
    ],
    [
      'a note of another discussion',
      'PUT',
      '{thread}/notes/{other}',
      { body: 'x' },
      404,
      { message: '404 Note Not Found' },
    ],
    [
      'resolving a plain note',
      'PUT',
      '{plain}',
      { resolved: true },
      400,
      { message: '400 Bad request - Discussion is not resolvable' },
    ],
  ] as const)('refuses %s', async (_, method, path, json, status, error) => {
    const w = await world();
    const started = await thread(w, w.developer, 'thread');
    const other = await thread(w, w.developer, 'other');
    const plain = await comment(w, w.developer, 'plain');
    const plainDiscussion = (
      (await server.request('GET', discussionsPath(w), { token: w.owner.token })).body as Json[]
    ).find((d) => (d.notes as Json[])[0].id === plain.id)!;
    const resolved = path
      .replace('{thread}', started.id as string)
      .replace('{plain}', plainDiscussion.id as string)
      .replace('{note}', String((started.notes as Json[])[0].id))
      .replace('{other}', String((other.notes as Json[])[0].id));
    const res = await server.request(method, `${discussionsPath(w)}/${resolved}`, {
      token: w.developer.token,
      ...(json ? { json } : {}),
    });
    expect(res.status, res.text).toBe(status);
    expect(res.body).toEqual(error);
  });

  it.each([
    ['the merge request author (a Developer)', 'developer', 200],
    ['a Maintainer', 'maintainer', 200],
    ['a Reporter', 'reporter', 403],
    ['an outsider', 'outsider', 403],
  ] as const)('lets %s resolve a thread', async (_, who, status) => {
    const w = await world();
    const started = await thread(w, w.reporter, 'thread');
    const res = await server.request('PUT', `${discussionsPath(w)}/${started.id as string}`, {
      token: w[who].token,
      json: { resolved: true },
    });
    expect(res.status, res.text).toBe(status);
    if (status === 200)
      expect((res.body as Json).notes).toEqual([
        expect.objectContaining({
          resolved: true,
          resolved_by: expect.objectContaining({ id: w[who].user.id }),
        }),
      ]);
  });

  it('resolves, unresolves and edits single notes of a thread, and deletes them', async () => {
    const w = await world();
    const started = await thread(w, w.reporter, 'thread');
    const noteId = (started.notes as Json[])[0].id as number;
    const notePath = `${discussionsPath(w)}/${started.id as string}/notes/${noteId}`;
    const resolve = await server.request('PUT', notePath, {
      token: w.developer.token,
      json: { resolved: true },
    });
    expect(resolve.status, resolve.text).toBe(200);
    expect(resolve.body).toMatchObject({ resolved: true, resolved_by: { id: w.developer.user.id } });
    expect((resolve.body as Json).resolved_at).toEqual(expect.any(String));
    const unresolve = await server.request('PUT', notePath, {
      token: w.developer.token,
      json: { resolved: false },
    });
    expect(unresolve.body).toMatchObject({ resolved: false, resolved_by: null, resolved_at: null });
    const edit = await server.request('PUT', notePath, { token: w.reporter.token, json: { body: 'edited' } });
    expect(edit.body).toMatchObject({ body: 'edited' });
    const notAuthor = await server.request('PUT', notePath, {
      token: w.developer.token,
      json: { body: 'x' },
    });
    expect(notAuthor.status).toBe(403);
    const remove = await server.request('DELETE', notePath, { token: w.reporter.token });
    expect(remove.status).toBe(204);
    const gone = await server.request('GET', `${discussionsPath(w)}/${started.id as string}`, {
      token: w.owner.token,
    });
    expect(gone.status).toBe(404);
  });

  it('reports discussions_not_resolved while a thread is open, when the project requires it', async () => {
    const w = await world();
    const started = await thread(w, w.reporter, 'thread');
    const mergeable = await waitFor(
      () => mergeStatus(w),
      (s) => s === 'mergeable',
      'the merge status check',
    );
    expect(mergeable).toBe('mergeable');
    const setting = await server.request('PUT', `/projects/${w.project.id}`, {
      token: w.owner.token,
      json: { only_allow_merge_if_all_discussions_are_resolved: true },
    });
    expect(setting.status, setting.text).toBe(200);
    expect(await mergeStatus(w)).toBe('discussions_not_resolved');
    const resolve = (resolved: boolean) =>
      server.request('PUT', `${discussionsPath(w)}/${started.id as string}`, {
        token: w.developer.token,
        json: { resolved },
      });
    await resolve(true);
    expect(await mergeStatus(w)).toBe('mergeable');
    await resolve(false);
    expect(await mergeStatus(w)).toBe('discussions_not_resolved');
    // A reply is a new, unresolved note: resolving the thread covers it too.
    await resolve(true);
    await server.request('POST', `${discussionsPath(w)}/${started.id as string}/notes`, {
      token: w.reporter.token,
      json: { body: 'one more thing' },
    });
    expect(await mergeStatus(w)).toBe('discussions_not_resolved');
  });

  it('takes no replies to system notes', async () => {
    const w = await world();
    await server.request('PUT', `/projects/${w.project.id}/merge_requests/${w.iid}`, {
      token: w.developer.token,
      json: { state_event: 'close' },
    });
    const [system] = await waitFor(
      async () => (await server.request('GET', discussionsPath(w), { token: w.owner.token })).body as Json[],
      (list) => list.length > 0,
      'the system note',
    );
    expect(system.individual_note).toBe(true);
    const reply = await server.request('POST', `${discussionsPath(w)}/${system.id as string}/notes`, {
      token: w.developer.token,
      json: { body: 'why?' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ message: '400 Bad request - Discussion cannot be replied to' });
  });
});

describe('diff notes', () => {
  /** A merge request !2 that changes lib.txt from a/b/c to a/B/c/d, and its diff refs. */
  async function diffWorld() {
    const w = await world();
    // main is protected: its owner commits there.
    const commit = (branch: string, action: string, content: string, from?: string) =>
      server.request('POST', `/projects/${w.project.id}/repository/commits`, {
        token: w.owner.token,
        json: {
          branch,
          ...(from ? { start_branch: from } : {}),
          commit_message: 'lib',
          actions: [{ action, file_path: 'lib.txt', content }],
        },
      });
    expect((await commit('main', 'create', 'a\nb\nc\n')).status).toBe(201);
    expect((await commit('lib', 'update', 'a\nB\nc\nd\n', 'main')).status).toBe(201);
    const image = await server.request('POST', `/projects/${w.project.id}/repository/commits`, {
      token: w.owner.token,
      json: {
        branch: 'lib',
        commit_message: 'logo',
        actions: [{ action: 'create', file_path: 'logo.png', content: PNG, encoding: 'base64' }],
      },
    });
    expect(image.status, image.text).toBe(201);
    const mr = await server.request('POST', `/projects/${w.project.id}/merge_requests`, {
      token: w.developer.token,
      json: { source_branch: 'lib', target_branch: 'main', title: 'Change lib' },
    });
    expect(mr.status, mr.text).toBe(201);
    const refs = (mr.body as Json).diff_refs as Record<string, string>;
    const path = `/projects/${w.project.id}/merge_requests/${(mr.body as Json).iid as number}/discussions`;
    return { w, refs, path };
  }

  const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
  const invalid = { message: '400 Bad request - Note {:position=>["is invalid"]}' };
  const incomplete = { message: '400 Bad request - Note {:position=>["is incomplete"]}' };
  const point = { width: 100, height: 80, x: 12.5, y: 40 };

  it.each([
    ['an added line', { new_line: 2 }, 201, `${sha1('lib.txt')}_3_2`],
    ['a removed line', { old_line: 2 }, 201, `${sha1('lib.txt')}_2_2`],
    ['an unchanged line', { old_line: 3, new_line: 3 }, 201, `${sha1('lib.txt')}_3_3`],
    ['a line the diff does not show', { new_line: 40 }, 400, undefined],
    ['an unchanged line given as added', { new_line: 3 }, 400, undefined],
    ['a file the merge request does not change', { new_path: 'README.md', new_line: 1 }, 400, undefined],
    ['diff refs of no version', { head_sha: '0'.repeat(40), new_line: 2 }, 400, undefined],
  ])('places a diff note on %s', async (_, extra, status, code) => {
    const { refs, path, w } = await diffWorld();
    const position = {
      position_type: 'text',
      base_sha: refs.base_sha,
      start_sha: refs.start_sha,
      head_sha: refs.head_sha,
      new_path: 'lib.txt',
      ...extra,
    };
    const res = await server.request('POST', path, {
      token: w.reporter.token,
      json: { body: 'Here', position },
    });
    expect(res.status, res.text).toBe(status);
    if (status === 400) {
      expect(res.body).toEqual({
        message: `400 Bad request - Note {:line_code=>["can't be blank", "must be a valid line code"]}`,
      });
      return;
    }
    const [note] = (res.body as Json).notes as Json[];
    expect(note).toMatchObject({
      type: 'DiffNote',
      resolvable: true,
      position: {
        position_type: 'text',
        old_path: 'lib.txt',
        new_path: 'lib.txt',
        old_line: (extra as Json).old_line ?? null,
        new_line: (extra as Json).new_line ?? null,
        head_sha: refs.head_sha,
      },
    });
    // The line code is GitLab's; it is stored, not part of the note's API shape.
    const [row] = (await server.dataSource.query('SELECT line_code FROM notes WHERE id = $1', [
      note.id,
    ])) as Array<{ line_code: string }>;
    expect(row.line_code).toBe(code);
    const reply = await server.request('POST', `${path}/${(res.body as Json).id as string}/notes`, {
      token: w.developer.token,
      json: { body: 'Agreed' },
    });
    expect(reply.body).toMatchObject({ type: 'DiffNote', position: note.position });
  });

  it.each<[string, Json, number, Json]>([
    [
      'a point of an image',
      { position_type: 'image', new_path: 'logo.png', ...point },
      201,
      { position_type: 'image', old_path: 'logo.png', new_path: 'logo.png', ...point },
    ],
    [
      'a point at the corner',
      { position_type: 'image', new_path: 'logo.png', old_path: 'logo.png', width: 1, height: 1, x: 0, y: 0 },
      201,
      { position_type: 'image', width: 1, height: 1, x: 0, y: 0 },
    ],
    [
      'a point off the image, which GitLab keeps too',
      { position_type: 'image', new_path: 'logo.png', width: 10, height: 10, x: -2.5, y: 12 },
      201,
      { position_type: 'image', x: -2.5, y: 12 },
    ],
    [
      'an image without its point',
      { position_type: 'image', new_path: 'logo.png', width: 100, height: 80 },
      400,
      incomplete,
    ],
    [
      'an image without its size',
      { position_type: 'image', new_path: 'logo.png', x: 1, y: 2 },
      400,
      incomplete,
    ],
    ['a file that is not an image', { position_type: 'image', new_path: 'lib.txt', ...point }, 400, invalid],
    [
      'an image the diff does not change',
      { position_type: 'image', new_path: 'a.png', ...point },
      400,
      invalid,
    ],
    [
      'an image on diff refs of no version',
      { position_type: 'image', new_path: 'logo.png', head_sha: '0'.repeat(40), ...point },
      400,
      invalid,
    ],
    [
      'a whole file',
      { position_type: 'file', new_path: 'lib.txt', old_path: 'lib.txt', new_line: 2 },
      201,
      { position_type: 'file', old_path: 'lib.txt', new_path: 'lib.txt' },
    ],
    [
      'a whole image file',
      { position_type: 'file', new_path: 'logo.png', old_path: 'logo.png' },
      201,
      { position_type: 'file', new_path: 'logo.png' },
    ],
    ['a file without its old path', { position_type: 'file', new_path: 'lib.txt' }, 400, incomplete],
    [
      'a file the diff does not change',
      { position_type: 'file', new_path: 'README.md', old_path: 'README.md' },
      400,
      invalid,
    ],
    [
      "a file whose old path is not the diff's",
      { position_type: 'file', new_path: 'lib.txt', old_path: 'other.txt' },
      400,
      invalid,
    ],
    [
      'an unknown type',
      { position_type: 'line', new_path: 'lib.txt', old_path: 'lib.txt' },
      400,
      { error: 'position[position_type] does not have a valid value' },
    ],
  ])('places a diff note on %s', async (_, extra, status, expected) => {
    const { refs, path, w } = await diffWorld();
    const position = {
      base_sha: refs.base_sha,
      start_sha: refs.start_sha,
      head_sha: refs.head_sha,
      ...extra,
    };
    const res = await server.request('POST', path, {
      token: w.reporter.token,
      json: { body: 'Here', position },
    });
    expect(res.status, res.text).toBe(status);
    if (status === 400) {
      expect(res.body).toEqual(expected);
      return;
    }
    const [note] = (res.body as Json).notes as Json[];
    expect(note).toMatchObject({
      type: 'DiffNote',
      resolvable: true,
      position: { ...expected, head_sha: refs.head_sha },
    });
    // Only the fields of its type: no lines on an image or a file, no point on a file.
    const fields = Object.keys(note.position as Json).sort();
    const common = ['base_sha', 'head_sha', 'new_path', 'old_path', 'position_type', 'start_sha'];
    expect(fields).toEqual(
      (extra.position_type === 'image' ? [...common, 'height', 'width', 'x', 'y'] : common).sort(),
    );
    const [row] = (await server.dataSource.query('SELECT line_code FROM notes WHERE id = $1', [
      note.id,
    ])) as Array<{ line_code: string | null }>;
    expect(row.line_code).toBeNull();
    const reply = await server.request('POST', `${path}/${(res.body as Json).id as string}/notes`, {
      token: w.developer.token,
      json: { body: 'Agreed' },
    });
    expect(reply.body).toMatchObject({ type: 'DiffNote', position: note.position });
    const listed = await server.request('GET', path, { token: w.guest.token });
    const thread = (listed.body as Json[]).find((d) => d.id === (res.body as Json).id) as Json;
    expect((thread.notes as Json[]).map((n) => n.position)).toEqual([note.position, note.position]);
  });

  it.each<[string, unknown, string]>([
    ['a position that is no hash', 'logo.png', 'position is invalid'],
    [
      'an image position without its diff refs',
      { position_type: 'image', new_path: 'logo.png', width: 1, height: 1, x: 0, y: 0 },
      'position[base_sha] is missing, position[start_sha] is missing, position[head_sha] is missing',
    ],
    [
      'a point whose coordinate is no number',
      { position_type: 'image', new_path: 'logo.png', width: 1, height: 1, x: 'left', y: 0 },
      'position[x] is invalid',
    ],
  ])('refuses %s with Grape’s message', async (_, position, error) => {
    const { path, refs, w } = await diffWorld();
    const withRefs =
      typeof position === 'object' && position !== null && (position as Json).x === 'left'
        ? {
            base_sha: refs.base_sha,
            start_sha: refs.start_sha,
            head_sha: refs.head_sha,
            ...(position as Json),
          }
        : position;
    const res = await server.request('POST', path, {
      token: w.reporter.token,
      json: { body: 'Here', position: withRefs },
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toEqual({ error });
  });

  it('takes an image position in bracket notation, with fractional coordinates', async () => {
    const { refs, path, w } = await diffWorld();
    const form = {
      body: 'Here',
      'position[position_type]': 'image',
      'position[base_sha]': refs.base_sha,
      'position[start_sha]': refs.start_sha,
      'position[head_sha]': refs.head_sha,
      'position[new_path]': 'logo.png',
      'position[old_path]': 'logo.png',
      'position[width]': '320',
      'position[height]': '200',
      'position[x]': '10.25',
      'position[y]': '3',
    };
    const res = await server.request('POST', path, { token: w.reporter.token, form });
    expect(res.status, res.text).toBe(201);
    expect(((res.body as Json).notes as Json[])[0]).toMatchObject({
      position: { position_type: 'image', width: 320, height: 200, x: 10.25, y: 3 },
    });
  });

  it('takes the position in bracket notation, as python-gitlab and gitbeaker send it', async () => {
    const { refs, path, w } = await diffWorld();
    const form = {
      body: 'Here',
      'position[position_type]': 'text',
      'position[base_sha]': refs.base_sha,
      'position[start_sha]': refs.start_sha,
      'position[head_sha]': refs.head_sha,
      'position[new_path]': 'lib.txt',
      'position[old_path]': 'lib.txt',
      'position[new_line]': '4',
    };
    const res = await server.request('POST', path, { token: w.reporter.token, form });
    expect(res.status, res.text).toBe(201);
    expect(((res.body as Json).notes as Json[])[0]).toMatchObject({ position: { new_line: 4 } });
  });
});

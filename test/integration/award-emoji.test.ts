/**
 * Emoji reactions on merge requests and their notes: award, list, read, remove; GitLab's answers to bad
 * names and repeats; who may award and remove; votes on merge requests; the my_reaction_emoji filter;
 * reactions going with their merge request or note.
 */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

interface World {
  project: Project;
  owner: TestUser;
  maintainer: TestUser;
  developer: TestUser;
  reporter: TestUser;
  guest: TestUser;
  outsider: TestUser;
  admin: TestUser;
  iid: number;
  mrId: number;
  noteId: number;
}

/** A project with merge request !1 by its Developer and a note on it by the Developer. */
async function world(visibility: 'public' | 'private' = 'public'): Promise<World> {
  const owner = await server.factories.user();
  const project = await server.factories.projectWithReadme({ owner, visibility });
  const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
  const guest = await server.factories.memberOf(project, AccessLevel.Guest);
  const outsider = await server.factories.user();
  const admin = await server.factories.user({ admin: true });
  const mr = await openMergeRequest(project, developer, 'feature');
  const note = await call(developer, 'POST', `/projects/${project.id}/merge_requests/${mr.iid}/notes`, {
    body: 'A note',
  });
  return {
    project,
    owner,
    maintainer,
    developer,
    reporter,
    guest,
    outsider,
    admin,
    iid: mr.iid as number,
    mrId: mr.id as number,
    noteId: note.id as number,
  };
}

async function openMergeRequest(project: Project, author: TestUser, branch: string): Promise<Json> {
  await call(author, 'POST', `/projects/${project.id}/repository/commits`, {
    branch,
    start_branch: 'main',
    commit_message: `Add ${branch}`,
    actions: [{ action: 'create', file_path: `${branch}.txt`, content: 'new\n' }],
  });
  return call(author, 'POST', `/projects/${project.id}/merge_requests`, {
    source_branch: branch,
    target_branch: 'main',
    title: `Add ${branch}`,
  });
}

/** A request that must succeed; its JSON body. */
async function call(user: TestUser | undefined, method: string, path: string, json?: unknown): Promise<Json> {
  const res = await server.request(method, path, { token: user?.token, json });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body as Json;
}

const mrAwards = (w: World, iid = w.iid) => `/projects/${w.project.id}/merge_requests/${iid}/award_emoji`;
const noteAwards = (w: World, noteId = w.noteId) =>
  `/projects/${w.project.id}/merge_requests/${w.iid}/notes/${noteId}/award_emoji`;

const award = (w: World, user: TestUser, name: string, path = mrAwards(w)) =>
  call(user, 'POST', path, { name });

describe('emoji reactions on a merge request', () => {
  it('awards, lists, reads and removes, in GitLab’s shape', async () => {
    const w = await world();
    const created = await award(w, w.developer, 'thumbsup');
    expect(created).toMatchObject({
      name: 'thumbsup',
      awardable_id: w.mrId,
      awardable_type: 'MergeRequest',
      url: null,
      user: { id: w.developer.user.id, username: w.developer.user.username },
    });
    expect(created.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const listed = await server.request('GET', mrAwards(w));
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([created]);
    expect(listed.headers.get('x-total')).toBe('1');
    expect(await call(undefined, 'GET', `${mrAwards(w)}/${created.id as number}`)).toEqual(created);
    const removed = await server.request('DELETE', `${mrAwards(w)}/${created.id as number}`, {
      token: w.developer.token,
    });
    expect(removed.status).toBe(204);
    expect(await call(undefined, 'GET', mrAwards(w))).toEqual([]);
  });

  it.each([
    ['a name GitLab knows', 'tada', 201, undefined],
    ['an alias', '+1', 201, undefined],
    ['an unknown name', 'not_an_emoji', 404, '404 Award Emoji Name is not a valid emoji name Not Found'],
    ['a name with colons', ':thumbsup:', 404, '404 Award Emoji Name is not a valid emoji name Not Found'],
    ['an emoji character', '👍', 404, '404 Award Emoji Name is not a valid emoji name Not Found'],
  ])('answers %s (%s) with %i', async (_, name, status, message) => {
    const w = await world();
    const res = await server.request('POST', mrAwards(w), { token: w.developer.token, json: { name } });
    expect(res.status, res.text).toBe(status);
    if (message) expect(res.body).toEqual({ message });
    else expect((res.body as Json).name).toBe(name);
  });

  it('needs a name (400), as a JSON body, a form or the query', async () => {
    const w = await world();
    const missing = await server.request('POST', mrAwards(w), { token: w.developer.token, json: {} });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: 'name is missing' });
    const form = await server.request('POST', mrAwards(w), {
      token: w.developer.token,
      form: { name: 'rocket' },
    });
    expect(form.status, form.text).toBe(201);
    const query = await server.request('POST', `${mrAwards(w)}?name=eyes`, { token: w.developer.token });
    expect(query.status, query.text).toBe(201);
  });

  it('takes each emoji once per user and awardable, with GitLab’s 404', async () => {
    const w = await world();
    await award(w, w.developer, 'thumbsup');
    const again = await server.request('POST', mrAwards(w), {
      token: w.developer.token,
      json: { name: 'thumbsup' },
    });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: '404 Award Emoji Name has already been taken Not Found' });
    // Another user, another name, or the note: all new awards.
    await award(w, w.reporter, 'thumbsup');
    await award(w, w.developer, 'thumbsdown');
    await award(w, w.developer, 'thumbsup', noteAwards(w));
    const names = ((await call(undefined, 'GET', mrAwards(w))) as unknown as Json[]).map((a) => a.name);
    expect(names).toEqual(['thumbsup', 'thumbsup', 'thumbsdown']);
  });

  it('paginates in id order with GitLab’s headers', async () => {
    const w = await world();
    const names = ['one', 'two', 'three', 'four', 'five'];
    for (const name of names) await award(w, w.developer, name);
    const first = await server.request('GET', `${mrAwards(w)}?per_page=2`);
    expect((first.body as Json[]).map((a) => a.name)).toEqual(['one', 'two']);
    expect(first.headers.get('x-total')).toBe('5');
    expect(first.headers.get('x-total-pages')).toBe('3');
    expect(first.headers.get('x-next-page')).toBe('2');
    expect(first.headers.get('link')).toContain('rel="next"');
    const last = await server.request('GET', `${mrAwards(w)}?per_page=2&page=3`);
    expect((last.body as Json[]).map((a) => a.name)).toEqual(['five']);
    expect(last.headers.get('x-next-page')).toBe('');
  });

  it('answers 404 Not found for a reaction that is not this awardable’s', async () => {
    const w = await world();
    const second = await openMergeRequest(w.project, w.developer, 'second');
    const elsewhere = await award(w, w.developer, 'tada', mrAwards(w, second.iid as number));
    const onNote = await award(w, w.developer, 'tada', noteAwards(w));
    const onMr = await award(w, w.developer, 'tada');
    for (const path of [
      `${mrAwards(w)}/${elsewhere.id as number}`,
      `${mrAwards(w)}/${onNote.id as number}`,
      `${noteAwards(w)}/${onMr.id as number}`,
      `${mrAwards(w)}/999999`,
      `${mrAwards(w, 999)}`,
    ]) {
      for (const method of ['GET', 'DELETE']) {
        if (method === 'DELETE' && path === mrAwards(w, 999)) continue;
        const res = await server.request(method, path, { token: w.developer.token });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body).toEqual({ message: '404 Not found' });
      }
    }
  });
});

describe('who may award and remove', () => {
  it.each([
    // [visibility, caller, award, read]: reacting is commenting's right (Reporter on a private project).
    ['private', 'anonymous', 401, 404],
    ['private', 'outsider', 404, 404],
    ['private', 'guest', 403, 403],
    ['private', 'reporter', 201, 200],
    ['private', 'developer', 201, 200],
    ['private', 'admin', 201, 200],
    ['public', 'anonymous', 401, 200],
    ['public', 'outsider', 201, 200],
    ['public', 'guest', 201, 200],
  ] as const)('on a %s project, %s gets %i (reads: %i)', async (visibility, who, status, readStatus) => {
    const w = await world(visibility);
    const user = who === 'anonymous' ? undefined : w[who];
    const res = await server.request('POST', mrAwards(w), { token: user?.token, json: { name: 'eyes' } });
    expect(res.status, res.text).toBe(status);
    if (status === 404) expect(res.body).toEqual({ message: '404 Project Not Found' });
    const read = await server.request('GET', mrAwards(w), { token: user?.token });
    expect(read.status).toBe(readStatus);
  });

  it.each([
    ['outsider', 404],
    ['guest', 201],
    ['admin', 201],
  ] as const)('on a locked discussion, %s gets %i', async (who, status) => {
    const w = await world();
    await call(w.developer, 'PUT', `/projects/${w.project.id}/merge_requests/${w.iid}`, {
      discussion_locked: true,
    });
    for (const path of [mrAwards(w), noteAwards(w)]) {
      const res = await server.request('POST', path, { token: w[who].token, json: { name: 'eyes' } });
      expect(res.status, res.text).toBe(status);
      if (status === 404) expect(res.body).toEqual({ message: '404 Award Emoji Not Found' });
    }
  });

  it.each([
    ['the awarder', 'developer', 204],
    ['another member', 'reporter', 401],
    ['a Maintainer', 'maintainer', 401],
    ['an administrator', 'admin', 204],
  ] as const)('removing a reaction: %s (%s) gets %i', async (_, who, status) => {
    const w = await world();
    for (const path of [mrAwards(w), noteAwards(w)]) {
      const created = await award(w, w.developer, 'heart', path);
      const res = await server.request('DELETE', `${path}/${created.id as number}`, { token: w[who].token });
      expect(res.status, res.text).toBe(status);
      if (status === 401) expect(res.body).toEqual({ message: '401 Unauthorized' });
      const left = (await call(undefined, 'GET', path)) as unknown as Json[];
      expect(left.length).toBe(status === 204 ? 0 : 1);
    }
  });
});

describe('emoji reactions on a note', () => {
  it('awards on a note of the merge request, in GitLab’s shape', async () => {
    const w = await world();
    const notePath = `/projects/${w.project.id}/merge_requests/${w.iid}/notes/${w.noteId}`;
    const before = (await call(undefined, 'GET', notePath)).updated_at as string;
    const created = await award(w, w.reporter, 'rocket', noteAwards(w));
    expect(created).toMatchObject({ name: 'rocket', awardable_id: w.noteId, awardable_type: 'Note' });
    // A reaction touches its note, as GitLab's do.
    const after = (await call(undefined, 'GET', notePath)).updated_at as string;
    expect(after).toBe(created.created_at);
    expect(after > before).toBe(true);
    expect(await call(undefined, 'GET', noteAwards(w))).toEqual([created]);
    expect(await call(undefined, 'GET', `${noteAwards(w)}/${created.id as number}`)).toEqual(created);
    // A note's reactions are not the merge request's.
    expect(await call(undefined, 'GET', mrAwards(w))).toEqual([]);
  });

  it('refuses system notes, notes of another merge request and hidden internal notes', async () => {
    const w = await world();
    const [system] = (await server.dataSource.query(
      `INSERT INTO notes (project_id, noteable_type, noteable_id, body, system, discussion_id)
       VALUES ($1, 'MergeRequest', $2, 'changed the description', true, $3) RETURNING id`,
      [w.project.id, w.mrId, 'a'.repeat(40)],
    )) as Array<{ id: number }>;
    const onSystem = await server.request('POST', noteAwards(w, system.id), {
      token: w.developer.token,
      json: { name: 'eyes' },
    });
    expect(onSystem.status).toBe(404);
    expect(onSystem.body).toEqual({ message: '404 Award Emoji Awardable cannot be awarded emoji Not Found' });

    const second = await openMergeRequest(w.project, w.developer, 'second');
    const other = await call(
      w.developer,
      'POST',
      `/projects/${w.project.id}/merge_requests/${second.iid as number}/notes`,
      {
        body: 'Elsewhere',
      },
    );
    const internal = await call(
      w.developer,
      'POST',
      `/projects/${w.project.id}/merge_requests/${w.iid}/notes`,
      {
        body: 'Internal',
        internal: true,
      },
    );
    for (const [noteId, user] of [
      [other.id as number, w.developer],
      [internal.id as number, w.guest],
      [999999, w.developer],
    ] as const) {
      const res = await server.request('POST', noteAwards(w, noteId), {
        token: user.token,
        json: { name: 'eyes' },
      });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: '404 Not found' });
    }
    // A Reporter sees the internal note and reacts to it.
    await award(w, w.reporter, 'eyes', noteAwards(w, internal.id as number));
  });
});

describe('merge request fields and filters', () => {
  it('counts thumbsup and thumbsdown on the merge request as its votes', async () => {
    const w = await world();
    const mrPath = `/projects/${w.project.id}/merge_requests/${w.iid}`;
    await award(w, w.developer, 'thumbsup');
    await award(w, w.reporter, 'thumbsup');
    await award(w, w.guest, 'thumbsdown');
    await award(w, w.guest, 'tada');
    // Votes on notes are the note's.
    await award(w, w.developer, 'thumbsdown', noteAwards(w));
    expect(await call(undefined, 'GET', mrPath)).toMatchObject({ upvotes: 2, downvotes: 1 });
    const second = await openMergeRequest(w.project, w.developer, 'second');
    const list = (await call(
      undefined,
      'GET',
      `/projects/${w.project.id}/merge_requests`,
    )) as unknown as Json[];
    expect(list.map((mr) => [mr.iid, mr.upvotes, mr.downvotes])).toEqual([
      [second.iid, 0, 0],
      [w.iid, 2, 1],
    ]);
  });

  it('filters on the caller’s own reactions: my_reaction_emoji and not[my_reaction_emoji]', async () => {
    const w = await world();
    const second = await openMergeRequest(w.project, w.developer, 'second');
    const third = await openMergeRequest(w.project, w.developer, 'third');
    await award(w, w.reporter, 'thumbsup');
    await award(w, w.reporter, 'tada', mrAwards(w, third.iid as number));
    // Another user's reaction, and the caller's on a note, do not count.
    await award(w, w.developer, 'thumbsup', mrAwards(w, second.iid as number));
    await award(w, w.reporter, 'thumbsup', noteAwards(w));
    const [one, two, three] = [w.iid, second.iid as number, third.iid as number];
    const iids = async (query: string, user: TestUser | null = w.reporter) =>
      (
        (await call(
          user ?? undefined,
          'GET',
          `/projects/${w.project.id}/merge_requests?${query}`,
        )) as unknown as Json[]
      )
        .map((mr) => mr.iid as number)
        .sort();
    const cases: Array<[string, number[]]> = [
      ['my_reaction_emoji=thumbsup', [one]],
      ['my_reaction_emoji=tada', [three]],
      ['my_reaction_emoji=rocket', []],
      ['my_reaction_emoji=Any', [one, three]],
      ['my_reaction_emoji=any', [one, three]],
      ['my_reaction_emoji=None', [two]],
      ['not[my_reaction_emoji]=thumbsup', [two, three]],
      ['my_reaction_emoji=Any&not[my_reaction_emoji]=tada', [one]],
    ];
    for (const [query, expected] of cases) expect(await iids(query), query).toEqual(expected);
    // Without a signed-in caller the filters are ignored, as GitLab does.
    expect(await iids('my_reaction_emoji=thumbsup', null)).toEqual([one, two, three]);
    expect(await iids('not[my_reaction_emoji]=thumbsup', null)).toEqual([one, two, three]);
    // The instance-wide list filters too.
    const mine = (await call(
      w.reporter,
      'GET',
      '/merge_requests?scope=all&my_reaction_emoji=tada',
    )) as unknown as Json[];
    expect(mine.map((mr) => mr.id)).toEqual([third.id]);
  });
});

describe('reactions go with what they are on', () => {
  it('deleting a note or a merge request removes its reactions; a deleted user’s stay as the ghost’s', async () => {
    const w = await world();
    await award(w, w.developer, 'eyes', noteAwards(w));
    const onMr = await award(w, w.reporter, 'eyes');
    const count = async () =>
      (
        (await server.dataSource.query(
          'SELECT count(*)::int AS n FROM award_emoji WHERE merge_request_id = $1',
          [w.mrId],
        )) as Array<{ n: number }>
      )[0].n;
    expect(await count()).toBe(2);
    await call(w.developer, 'DELETE', `/projects/${w.project.id}/merge_requests/${w.iid}/notes/${w.noteId}`);
    expect(await count()).toBe(1);

    await server.dataSource.query('DELETE FROM users WHERE id = $1', [w.reporter.user.id]);
    const ghost = await call(undefined, 'GET', `${mrAwards(w)}/${onMr.id as number}`);
    expect(ghost.user).toMatchObject({ id: 0, username: 'ghost' });

    await call(w.owner, 'DELETE', `/projects/${w.project.id}/merge_requests/${w.iid}`);
    expect(await count()).toBe(0);
  });
});

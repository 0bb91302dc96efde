/** Draft notes: a reviewer's pending comments, seen by their author only, published all at once or one by one. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/** A 1×1 PNG. */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const server = useTestServer();

type Json = Record<string, unknown>;

interface World {
  owner: TestUser;
  project: Project;
  /** The merge request's author. */
  developer: TestUser;
  /** A second Developer who reviews. */
  reviewer: TestUser;
  reporter: TestUser;
  outsider: TestUser;
  iid: number;
  mrId: number;
  refs: Record<string, string>;
}

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/**
 * A public project whose merge request !1 (by its Developer) changes lib.txt from a/b/c to a/B/c/d and
 * adds logo.png, with a member of each role that matters here.
 */
async function world(): Promise<World> {
  const owner = await server.factories.user();
  const project = await server.factories.projectWithReadme({ owner, visibility: 'public' });
  const developer = await server.factories.memberOf(project, AccessLevel.Developer);
  const reviewer = await server.factories.memberOf(project, AccessLevel.Developer);
  const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
  const outsider = await server.factories.user();
  const commit = async (branch: string, actions: Json[], from?: string) => {
    const res = await server.request('POST', `/projects/${project.id}/repository/commits`, {
      token: owner.token,
      json: { branch, ...(from ? { start_branch: from } : {}), commit_message: 'lib', actions },
    });
    expect(res.status, res.text).toBe(201);
  };
  await commit('main', [{ action: 'create', file_path: 'lib.txt', content: 'a\nb\nc\n' }]);
  await commit(
    'lib',
    [
      { action: 'update', file_path: 'lib.txt', content: 'a\nB\nc\nd\n' },
      { action: 'create', file_path: 'logo.png', content: PNG, encoding: 'base64' },
    ],
    'main',
  );
  const mr = await server.request('POST', `/projects/${project.id}/merge_requests`, {
    token: developer.token,
    json: { source_branch: 'lib', target_branch: 'main', title: 'Change lib' },
  });
  expect(mr.status, mr.text).toBe(201);
  const body = mr.body as Json;
  return {
    owner,
    project,
    developer,
    reviewer,
    reporter,
    outsider,
    iid: body.iid as number,
    mrId: body.id as number,
    refs: body.diff_refs as Record<string, string>,
  };
}

const mrPath = (w: World) => `/projects/${w.project.id}/merge_requests/${w.iid}`;
const draftsPath = (w: World) => `${mrPath(w)}/draft_notes`;

async function draft(w: World, user: TestUser, json: Json): Promise<Json> {
  const res = await server.request('POST', draftsPath(w), { token: user.token, json });
  expect(res.status, res.text).toBe(201);
  return res.body as Json;
}

async function thread(w: World, user: TestUser, body: string): Promise<string> {
  const res = await server.request('POST', `${mrPath(w)}/discussions`, { token: user.token, json: { body } });
  expect(res.status, res.text).toBe(201);
  return (res.body as Json).id as string;
}

const discussions = async (w: World) =>
  (await server.request('GET', `${mrPath(w)}/discussions`, { token: w.owner.token })).body as Json[];
const notes = async (w: World) =>
  (await server.request('GET', `${mrPath(w)}/notes?sort=asc`, { token: w.owner.token })).body as Json[];
const draftsOf = async (w: World, user: TestUser) =>
  (await server.request('GET', draftsPath(w), { token: user.token })).body as Json[];

const refsOf = (w: World) => ({
  base_sha: w.refs.base_sha,
  start_sha: w.refs.start_sha,
  head_sha: w.refs.head_sha,
});
/** A text position on lib.txt's new line `newLine`, in !1's diff. */
const onLib = (w: World, newLine: number) => ({
  ...refsOf(w),
  position_type: 'text',
  old_path: 'lib.txt',
  new_path: 'lib.txt',
  new_line: newLine,
});
const lineCodeError = {
  message: `400 Bad request - Note {:line_code=>["can't be blank", "must be a valid line code"]}`,
};

describe('creating and reading draft notes', () => {
  it('creates a draft in GitLab shape, which only its author sees', async () => {
    const w = await world();
    const created = await draft(w, w.reviewer, { note: 'Should this parse lazily?' });
    expect(created).toEqual({
      id: expect.any(Number),
      author_id: w.reviewer.user.id,
      merge_request_id: w.mrId,
      resolve_discussion: false,
      discussion_id: null,
      note: 'Should this parse lazily?',
      commit_id: null,
      line_code: null,
      position: {
        base_sha: null,
        start_sha: null,
        head_sha: null,
        old_path: null,
        new_path: null,
        position_type: 'text',
        old_line: null,
        new_line: null,
        line_range: null,
      },
    });
    const own = await server.request('GET', `${draftsPath(w)}/${created.id as number}`, {
      token: w.reviewer.token,
    });
    expect(own.status).toBe(200);
    expect(own.body).toEqual(created);
    expect(await draftsOf(w, w.reviewer)).toEqual([created]);
    // Nobody else sees it: not the merge request's author, not the owner, not an administrator.
    const admin = await server.factories.caller('admin');
    for (const other of [w.developer, w.owner, admin!]) {
      expect(await draftsOf(w, other)).toEqual([]);
      const got = await server.request('GET', `${draftsPath(w)}/${created.id as number}`, {
        token: other.token,
      });
      expect(got.status).toBe(404);
      expect(got.body).toEqual({ message: '404 Not found' });
    }
    // Nor is it a note yet.
    expect(await notes(w)).toEqual([]);
  });

  it('keeps commit_id and a reply thread, and answers 401 without a token', async () => {
    const w = await world();
    const discussionId = await thread(w, w.developer, 'Why a/B?');
    const created = await draft(w, w.reviewer, {
      note: 'Because.',
      commit_id: w.refs.head_sha,
      in_reply_to_discussion_id: discussionId,
      resolve_discussion: true,
    });
    expect(created).toMatchObject({
      commit_id: w.refs.head_sha,
      discussion_id: discussionId,
      resolve_discussion: true,
    });
    const anonymous = await server.request('GET', draftsPath(w));
    expect(anonymous.status).toBe(401);
  });

  it('takes form fields with bracket positions, as clients send them', async () => {
    const w = await world();
    const form = {
      note: 'Here',
      'position[position_type]': 'text',
      'position[base_sha]': w.refs.base_sha,
      'position[start_sha]': w.refs.start_sha,
      'position[head_sha]': w.refs.head_sha,
      'position[old_path]': 'lib.txt',
      'position[new_path]': 'lib.txt',
      'position[new_line]': '4',
    };
    const res = await server.request('POST', draftsPath(w), { token: w.reviewer.token, form });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ line_code: `${sha1('lib.txt')}_4_4`, position: { new_line: 4 } });
  });
});

describe('positions', () => {
  const point = { width: 100, height: 80, x: 12.5, y: 40 };
  const text = { position_type: 'text', old_path: 'lib.txt', new_path: 'lib.txt' };
  const line = (old_line: number | null, new_line: number | null) => ({ old_line, new_line });

  it.each([
    [
      'an added line',
      { ...text, new_line: 2 },
      `${sha1('lib.txt')}_3_2`,
      { ...text, ...line(null, 2), line_range: null },
    ],
    [
      'a removed line',
      { ...text, old_line: 2 },
      `${sha1('lib.txt')}_2_2`,
      { ...text, ...line(2, null), line_range: null },
    ],
    [
      'an unchanged line',
      { ...text, old_line: 3, new_line: 3 },
      `${sha1('lib.txt')}_3_3`,
      { ...text, ...line(3, 3), line_range: null },
    ],
    [
      'a multi-line range',
      { ...text, new_line: 4, line_range: { start: line(2, null), end: { new_line: 4 } } },
      `${sha1('lib.txt')}_4_4`,
      {
        ...text,
        ...line(null, 4),
        line_range: {
          start: { line_code: `${sha1('lib.txt')}_2_2`, type: 'old', old_line: 2, new_line: null },
          end: { line_code: `${sha1('lib.txt')}_4_4`, type: 'new', old_line: null, new_line: 4 },
        },
      },
    ],
    [
      'a point of an image',
      { position_type: 'image', new_path: 'logo.png', ...point },
      null,
      { position_type: 'image', old_path: 'logo.png', new_path: 'logo.png', ...point },
    ],
    [
      'a whole file',
      { position_type: 'file', old_path: 'lib.txt', new_path: 'lib.txt' },
      null,
      { position_type: 'file', old_path: 'lib.txt', new_path: 'lib.txt' },
    ],
  ])('places a draft on %s', async (_, given, lineCode, expected) => {
    const w = await world();
    const created = await draft(w, w.reviewer, { note: 'Here', position: { ...refsOf(w), ...given } });
    expect(created.line_code).toBe(lineCode);
    expect(created.position).toEqual({ ...refsOf(w), ...expected });
  });

  it.each([
    [
      'a text position without new_path',
      { position_type: 'text', old_path: 'lib.txt', new_line: 2 },
      { error: 'position[new_path] is missing' },
    ],
    [
      'a text position without old_path',
      { position_type: 'text', new_path: 'lib.txt', new_line: 2 },
      { error: 'position[old_path] is missing' },
    ],
    ['a line the diff does not show', { ...text, new_line: 40 }, lineCodeError],
    ['an unchanged line given as added', { ...text, new_line: 3 }, lineCodeError],
    [
      'a range ending off the diff',
      { ...text, new_line: 2, line_range: { start: line(null, 2), end: line(null, 9) } },
      lineCodeError,
    ],
    [
      'a file the merge request does not change',
      { position_type: 'text', old_path: 'README.md', new_path: 'README.md', new_line: 1 },
      lineCodeError,
    ],
    ['diff refs of no version', { ...text, new_line: 2, head_sha: '0'.repeat(40) }, lineCodeError],
    [
      'an image without its size',
      { position_type: 'image', new_path: 'logo.png', x: 1, y: 2 },
      { message: '400 Bad request - Note {:position=>["is incomplete"]}' },
    ],
    [
      'an image position without any path',
      { position_type: 'image', ...point },
      { message: '400 Bad request - Note {:position=>["is incomplete"]}' },
    ],
    [
      'an image position on a text file',
      { position_type: 'image', new_path: 'lib.txt', ...point },
      { message: '400 Bad request - Note {:position=>["is invalid"]}' },
    ],
    [
      'an unknown position type',
      { position_type: 'line', new_path: 'lib.txt' },
      { error: 'position[position_type] does not have a valid value' },
    ],
  ])('refuses %s', async (_, given, error) => {
    const w = await world();
    const res = await server.request('POST', draftsPath(w), {
      token: w.reviewer.token,
      json: { note: 'Here', position: { ...refsOf(w), ...given } },
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toEqual(error);
    expect(await draftsOf(w, w.reviewer)).toEqual([]);
  });

  it('needs the diff refs and a type', async () => {
    const w = await world();
    const res = await server.request('POST', draftsPath(w), {
      token: w.reviewer.token,
      json: { note: 'Here', position: { new_path: 'lib.txt', old_path: 'lib.txt', new_line: 2 } },
    });
    expect(res.status).toBe(400);
    expect((res.body as Json).error).toContain('position[base_sha] is missing');
    expect((res.body as Json).error).toContain('position[position_type] is missing');
  });
});

describe('validation', () => {
  it.each([
    ['no note', () => ({}), { error: 'note is missing' }],
    [
      'a thread the merge request does not have',
      () => ({ note: 'x', in_reply_to_discussion_id: '0'.repeat(40) }),
      { message: { base: ['Thread to reply to cannot be found'] } },
    ],
    [
      'resolve_discussion without a thread',
      () => ({ note: 'x', resolve_discussion: true }),
      { message: { base: ['User is not allowed to resolve thread'] } },
    ],
    ['a commit_id that is no commit id', () => ({ note: 'x', commit_id: 'main' }), undefined],
  ])('refuses %s', async (_, json, error) => {
    const w = await world();
    const res = await server.request('POST', draftsPath(w), { token: w.reviewer.token, json: json() });
    expect(res.status, res.text).toBe(400);
    if (error) expect(res.body).toEqual(error);
  });

  it('lets only who may resolve a thread ask to resolve it, and takes one draft reply per thread', async () => {
    const w = await world();
    const discussionId = await thread(w, w.developer, 'Why a/B?');
    const reporter = await server.request('POST', draftsPath(w), {
      token: w.reporter.token,
      json: { note: 'x', in_reply_to_discussion_id: discussionId, resolve_discussion: true },
    });
    expect(reporter.status).toBe(400);
    expect(reporter.body).toEqual({ message: { base: ['User is not allowed to resolve thread'] } });
    await draft(w, w.reviewer, { note: 'first', in_reply_to_discussion_id: discussionId });
    const second = await server.request('POST', draftsPath(w), {
      token: w.reviewer.token,
      json: { note: 'second', in_reply_to_discussion_id: discussionId },
    });
    expect(second.status).toBe(400);
    expect(second.body).toEqual({ message: { author_id: ['has already been taken'] } });
    // Another reviewer has a draft reply of their own.
    await draft(w, w.reporter, { note: 'mine', in_reply_to_discussion_id: discussionId });
  });

  it('takes no replies to system notes', async () => {
    const w = await world();
    await server.request('PUT', mrPath(w), { token: w.developer.token, json: { state_event: 'close' } });
    let system: Json | undefined;
    for (let i = 0; i < 100 && !system; i++) {
      system = (await discussions(w)).find((d) => ((d.notes as Json[])[0].system as boolean) === true);
      if (!system) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const res = await server.request('POST', draftsPath(w), {
      token: w.reviewer.token,
      json: { note: 'why?', in_reply_to_discussion_id: system!.id },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: { base: ['Replies to system notes are not allowed'] } });
  });

  it('refuses drafts on a locked discussion to non-members', async () => {
    const w = await world();
    await server.request('PUT', mrPath(w), { token: w.developer.token, json: { discussion_locked: true } });
    const outsider = await server.request('POST', draftsPath(w), {
      token: w.outsider.token,
      json: { note: 'x' },
    });
    expect(outsider.status).toBe(403);
    await draft(w, w.reviewer, { note: 'member' });
  });
});

describe('editing and deleting', () => {
  it('edits the note and the position, keeps a position left out, and refuses an empty edit', async () => {
    const w = await world();
    const created = await draft(w, w.reviewer, {
      note: 'Here',
      position: onLib(w, 2),
    });
    const path = `${draftsPath(w)}/${created.id as number}`;
    const renamed = await server.request('PUT', path, { token: w.reviewer.token, json: { note: 'There' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toEqual({ ...created, note: 'There' });
    const moved = await server.request('PUT', path, {
      token: w.reviewer.token,
      json: { position: { ...refsOf(w), position_type: 'file', old_path: 'lib.txt', new_path: 'lib.txt' } },
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ note: 'There', line_code: null, position: { position_type: 'file' } });
    const invalid = await server.request('PUT', path, {
      token: w.reviewer.token,
      json: {
        position: onLib(w, 99),
      },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual(lineCodeError);
    const empty = await server.request('PUT', path, { token: w.reviewer.token, json: {} });
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ message: '400 Bad request - Missing params to modify' });
    const others = await server.request('PUT', path, {
      token: w.developer.token,
      json: { note: 'mine now' },
    });
    expect(others.status).toBe(404);
    expect((await server.request('GET', path, { token: w.reviewer.token })).body).toEqual(moved.body);
  });

  it('deletes only the caller’s own draft', async () => {
    const w = await world();
    const created = await draft(w, w.reviewer, { note: 'Here' });
    const path = `${draftsPath(w)}/${created.id as number}`;
    const others = await server.request('DELETE', path, { token: w.developer.token });
    expect(others.status).toBe(404);
    expect(others.body).toEqual({ message: '404 Not found' });
    const own = await server.request('DELETE', path, { token: w.reviewer.token });
    expect(own.status).toBe(204);
    expect((await server.request('DELETE', path, { token: w.reviewer.token })).status).toBe(404);
    expect(await draftsOf(w, w.reviewer)).toEqual([]);
  });
});

/**
 * The seed's state table, row by row: a draft note (pending, author-only) is published by its author into
 * a published note; publish-all publishes every pending draft note of the caller on the merge request.
 */
describe('the draft note state table', () => {
  interface Row {
    trigger: 'publish' | 'publish-all';
    caller: 'author' | 'another member';
    status: number;
    /** Bodies of the notes the merge request has afterwards. */
    published: string[];
    /** The reviewer's drafts left afterwards, and the other member's. */
    authorDrafts: string[];
    otherDrafts: string[];
  }
  const rows: Row[] = [
    {
      trigger: 'publish',
      caller: 'author',
      status: 204,
      published: ['one'],
      authorDrafts: ['two'],
      otherDrafts: ['theirs'],
    },
    {
      trigger: 'publish',
      caller: 'another member',
      status: 404,
      published: [],
      authorDrafts: ['one', 'two'],
      otherDrafts: ['theirs'],
    },
    {
      trigger: 'publish-all',
      caller: 'author',
      status: 204,
      published: ['one', 'two'],
      authorDrafts: [],
      otherDrafts: ['theirs'],
    },
    {
      trigger: 'publish-all',
      caller: 'another member',
      status: 204,
      published: ['theirs'],
      authorDrafts: ['one', 'two'],
      otherDrafts: [],
    },
  ];

  it.each(rows)('$trigger by $caller: $status', async (row) => {
    const w = await world();
    const one = await draft(w, w.reviewer, { note: 'one' });
    await draft(w, w.reviewer, { note: 'two' });
    await draft(w, w.developer, { note: 'theirs' });
    const caller = row.caller === 'author' ? w.reviewer : w.developer;
    const res =
      row.trigger === 'publish'
        ? await server.request('PUT', `${draftsPath(w)}/${one.id as number}/publish`, { token: caller.token })
        : await server.request('POST', `${draftsPath(w)}/bulk_publish`, { token: caller.token });
    expect(res.status, res.text).toBe(row.status);
    if (row.status === 404) expect(res.body).toEqual({ message: '404 Not found' });
    const published = await notes(w);
    expect(published.map((n) => n.body)).toEqual(row.published);
    for (const note of published)
      expect((note.author as Json).id).toBe(
        note.body === 'theirs' ? w.developer.user.id : w.reviewer.user.id,
      );
    expect((await draftsOf(w, w.reviewer)).map((d) => d.note)).toEqual(row.authorDrafts);
    expect((await draftsOf(w, w.developer)).map((d) => d.note)).toEqual(row.otherDrafts);
  });
});

describe('publishing', () => {
  it('publishes notes, diff threads and replies that resolve or unresolve their thread', async () => {
    const w = await world();
    const open = await thread(w, w.developer, 'Why a/B?');
    const settled = await thread(w, w.developer, 'Is d needed?');
    const resolved = await server.request('PUT', `${mrPath(w)}/discussions/${settled}`, {
      token: w.developer.token,
      json: { resolved: true },
    });
    expect(resolved.status).toBe(200);
    await draft(w, w.reviewer, { note: 'A note.' });
    await draft(w, w.reviewer, {
      note: 'On d.',
      commit_id: w.refs.head_sha,
      position: {
        ...refsOf(w),
        position_type: 'text',
        old_path: 'lib.txt',
        new_path: 'lib.txt',
        new_line: 4,
        line_range: { start: { old_line: 2 }, end: { new_line: 4 } },
      },
    });
    await draft(w, w.reviewer, { note: 'Done.', in_reply_to_discussion_id: open, resolve_discussion: true });
    await draft(w, w.reviewer, { note: 'Not quite.', in_reply_to_discussion_id: settled });
    const res = await server.request('POST', `${draftsPath(w)}/bulk_publish`, { token: w.reviewer.token });
    expect(res.status, res.text).toBe(204);
    expect(res.text).toBe('');
    expect(await draftsOf(w, w.reviewer)).toEqual([]);

    const all = await discussions(w);
    const byFirst = new Map(all.map((d) => [(d.notes as Json[])[0].body as string, d]));
    expect(byFirst.get('A note.')).toMatchObject({
      individual_note: true,
      notes: [{ type: null, author: { id: w.reviewer.user.id } }],
    });
    const diff = byFirst.get('On d.')!;
    expect(diff).toMatchObject({
      individual_note: false,
      notes: [
        {
          type: 'DiffNote',
          resolvable: true,
          resolved: false,
          commit_id: w.refs.head_sha,
          position: {
            ...refsOf(w),
            position_type: 'text',
            new_line: 4,
            line_range: {
              start: { line_code: `${sha1('lib.txt')}_2_2`, type: 'old' },
              end: { line_code: `${sha1('lib.txt')}_4_4`, type: 'new' },
            },
          },
        },
      ],
    });
    const [row] = (await server.dataSource.query('SELECT line_code FROM notes WHERE id = $1', [
      ((diff.notes as Json[])[0] as Json).id,
    ])) as Array<{ line_code: string }>;
    expect(row.line_code).toBe(`${sha1('lib.txt')}_4_4`);
    const answered = byFirst.get('Why a/B?')!;
    expect(
      (answered.notes as Json[]).map((n) => [n.body, n.resolved, (n.resolved_by as Json | null)?.id]),
    ).toEqual([
      ['Why a/B?', true, w.reviewer.user.id],
      ['Done.', true, w.reviewer.user.id],
    ]);
    // GitLab unresolves the thread a reply without resolve_discussion is published into.
    const reopened = byFirst.get('Is d needed?')!;
    expect((reopened.notes as Json[]).map((n) => [n.body, n.resolved])).toEqual([
      ['Is d needed?', false],
      ['Not quite.', false],
    ]);
    const mr = (await server.request('GET', mrPath(w), { token: w.owner.token })).body as Json;
    expect(mr.user_notes_count).toBe(6);
  });

  it('publishes a reply into a diff thread at the thread’s position, and a reply to a plain note as a thread', async () => {
    const w = await world();
    const position = {
      ...refsOf(w),
      position_type: 'image',
      new_path: 'logo.png',
      width: 10,
      height: 10,
      x: 1,
      y: 2,
    };
    const created = await server.request('POST', `${mrPath(w)}/discussions`, {
      token: w.developer.token,
      json: { body: 'The logo?', position },
    });
    const diffThread = (created.body as Json).id as string;
    const plain = await server.request('POST', `${mrPath(w)}/notes`, {
      token: w.developer.token,
      json: { body: 'Plain' },
    });
    const plainDiscussion = (
      (await discussions(w)).find((d) => (d.notes as Json[])[0].id === (plain.body as Json).id) as Json
    ).id as string;
    const reply = await draft(w, w.reviewer, { note: 'Yes.', in_reply_to_discussion_id: diffThread });
    const toPlain = await draft(w, w.reviewer, {
      note: 'Answer',
      in_reply_to_discussion_id: plainDiscussion,
    });
    for (const d of [reply, toPlain]) {
      const res = await server.request('PUT', `${draftsPath(w)}/${d.id as number}/publish`, {
        token: w.reviewer.token,
      });
      expect(res.status, res.text).toBe(204);
    }
    const all = await discussions(w);
    const diff = all.find((d) => d.id === diffThread)!;
    expect((diff.notes as Json[]).map((n) => [n.type, n.body])).toEqual([
      ['DiffNote', 'The logo?'],
      ['DiffNote', 'Yes.'],
    ]);
    expect((diff.notes as Json[])[1].position).toEqual((diff.notes as Json[])[0].position);
    expect((diff.notes as Json[]).map((n) => n.commit_id)).toEqual([null, null]);
    const answered = all.find((d) => d.id === plainDiscussion)!;
    expect(answered.individual_note).toBe(false);
    expect((answered.notes as Json[]).map((n) => n.type)).toEqual(['DiscussionNote', 'DiscussionNote']);
  });

  it('publishes nothing when one draft fails: a deleted thread rolls back the whole batch', async () => {
    const w = await world();
    const doomed = await thread(w, w.developer, 'Soon gone');
    const kept = await thread(w, w.developer, 'Stays');
    await draft(w, w.reviewer, { note: 'first' });
    await draft(w, w.reviewer, {
      note: 'on a line',
      position: onLib(w, 2),
    });
    await draft(w, w.reviewer, {
      note: 'resolving',
      in_reply_to_discussion_id: kept,
      resolve_discussion: true,
    });
    const orphan = await draft(w, w.reviewer, { note: 'too late', in_reply_to_discussion_id: doomed });
    const [doomedNote] = (await discussions(w)).find((d) => d.id === doomed)!.notes as Json[];
    const deleted = await server.request('DELETE', `${mrPath(w)}/notes/${doomedNote.id as number}`, {
      token: w.developer.token,
    });
    expect(deleted.status).toBe(204);
    const before = await discussions(w);
    const draftsBefore = await draftsOf(w, w.reviewer);

    const bulk = await server.request('POST', `${draftsPath(w)}/bulk_publish`, { token: w.reviewer.token });
    expect(bulk.status, bulk.text).toBe(400);
    expect(bulk.body).toEqual({
      message: '400 Bad request - Unable to save Note: Thread to reply to cannot be found',
    });
    const single = await server.request('PUT', `${draftsPath(w)}/${orphan.id as number}/publish`, {
      token: w.reviewer.token,
    });
    expect(single.status).toBe(400);
    expect(await discussions(w)).toEqual(before);
    expect(await draftsOf(w, w.reviewer)).toEqual(draftsBefore);

    // Once the orphan is discarded, the rest goes through.
    await server.request('DELETE', `${draftsPath(w)}/${orphan.id as number}`, { token: w.reviewer.token });
    const retry = await server.request('POST', `${draftsPath(w)}/bulk_publish`, { token: w.reviewer.token });
    expect(retry.status, retry.text).toBe(204);
    expect((await notes(w)).map((n) => n.body)).toEqual(['Stays', 'first', 'on a line', 'resolving']);
  });

  it('publishes nothing when the thread goes inside the transaction (checked again there)', async () => {
    const w = await world();
    const doomed = await thread(w, w.developer, 'Soon gone');
    await draft(w, w.reviewer, { note: 'first' });
    await draft(w, w.reviewer, { note: 'reply', in_reply_to_discussion_id: doomed });
    // The thread's notes go behind the API's back, after the checks a request makes first would pass:
    // a trigger removes them as the draft notes are claimed.
    await server.dataSource.query(`
      CREATE OR REPLACE FUNCTION drop_thread_on_claim() RETURNS trigger AS $$
      BEGIN DELETE FROM notes WHERE discussion_id = '${doomed}'; RETURN OLD; END $$ LANGUAGE plpgsql;
      CREATE TRIGGER drop_thread_on_claim BEFORE DELETE ON draft_notes
        FOR EACH ROW EXECUTE FUNCTION drop_thread_on_claim();
    `);
    try {
      const bulk = await server.request('POST', `${draftsPath(w)}/bulk_publish`, { token: w.reviewer.token });
      expect(bulk.status, bulk.text).toBe(400);
    } finally {
      await server.dataSource.query(
        'DROP TRIGGER drop_thread_on_claim ON draft_notes; DROP FUNCTION drop_thread_on_claim();',
      );
    }
    // Rolled back with the rest: the thread is still there, no note was added, both drafts remain.
    expect((await notes(w)).map((n) => n.body)).toEqual(['Soon gone']);
    expect((await draftsOf(w, w.reviewer)).map((d) => d.note)).toEqual(['first', 'reply']);
  });

  it('publishes nothing when a position no longer holds', async () => {
    const w = await world();
    await draft(w, w.reviewer, { note: 'fine' });
    const onLine = await draft(w, w.reviewer, {
      note: 'on a line',
      position: onLib(w, 2),
    });
    // The version it was placed on is gone (as if the merge request's diffs were rebuilt).
    await server.dataSource.query(
      `UPDATE draft_notes SET position = jsonb_set(position, '{head_sha}', $1) WHERE id = $2`,
      [JSON.stringify('f'.repeat(40)), onLine.id],
    );
    const bulk = await server.request('POST', `${draftsPath(w)}/bulk_publish`, { token: w.reviewer.token });
    expect(bulk.status, bulk.text).toBe(400);
    expect(bulk.body).toEqual(lineCodeError);
    expect(await notes(w)).toEqual([]);
    expect(await draftsOf(w, w.reviewer)).toHaveLength(2);
  });

  it('publishes nothing for a non-member once the discussion is locked', async () => {
    const w = await world();
    await draft(w, w.outsider, { note: 'drive-by' });
    await server.request('PUT', mrPath(w), { token: w.developer.token, json: { discussion_locked: true } });
    const bulk = await server.request('POST', `${draftsPath(w)}/bulk_publish`, { token: w.outsider.token });
    expect(bulk.status).toBe(403);
    expect(await notes(w).then((list) => list.filter((n) => !n.system))).toEqual([]);
    expect(await draftsOf(w, w.outsider)).toHaveLength(1);
  });

  it('answers 204 to bulk_publish with no drafts, and 404 to publishing a draft already published', async () => {
    const w = await world();
    const empty = await server.request('POST', `${draftsPath(w)}/bulk_publish`, { token: w.reviewer.token });
    expect(empty.status).toBe(204);
    const once = await draft(w, w.reviewer, { note: 'once' });
    const path = `${draftsPath(w)}/${once.id as number}/publish`;
    expect((await server.request('PUT', path, { token: w.reviewer.token })).status).toBe(204);
    expect((await server.request('PUT', path, { token: w.reviewer.token })).status).toBe(404);
    expect((await notes(w)).map((n) => n.body)).toEqual(['once']);
  });
});

describe('odd input', () => {
  it.each<[string, Json, number]>([
    ['a position that is no hash', { note: 'x', position: 'lib.txt' }, 400],
    [
      'a line range without its end',
      { note: 'x', position: { position_type: 'text', line_range: { start: {} } } },
      400,
    ],
    [
      'a line range of empty ends',
      {
        note: 'x',
        position: {
          position_type: 'text',
          old_path: 'lib.txt',
          new_path: 'lib.txt',
          new_line: 2,
          line_range: { start: {}, end: {} },
        },
      },
      400,
    ],
    [
      'a line beyond the integer columns',
      { note: 'x', position: { position_type: 'text', new_line: 2147483648 } },
      400,
    ],
    [
      'a thread id of odd characters',
      { note: 'x', in_reply_to_discussion_id: "'; DROP TABLE notes; --" },
      400,
    ],
    ['an empty note', { note: '' }, 400],
    ['resolve_discussion that is no boolean', { note: 'x', resolve_discussion: 'maybe' }, 400],
  ])('answers %s with 400', async (_, json, status) => {
    const w = await world();
    const filled =
      json.position && typeof json.position === 'object'
        ? { ...json, position: { ...refsOf(w), ...(json.position as Json) } }
        : json;
    const res = await server.request('POST', draftsPath(w), { token: w.reviewer.token, json: filled });
    expect(res.status, res.text).toBe(status);
    expect(await draftsOf(w, w.reviewer)).toEqual([]);
  });

  it.each([
    ['GET', '/bulk_publish', 400],
    ['GET', '/2147483648', 404],
    ['PUT', '/0/publish', 400],
    ['DELETE', '/99999', 404],
  ])('answers %s …/draft_notes%s with %i', async (method, suffix, status) => {
    const w = await world();
    const res = await server.request(method, `${draftsPath(w)}${suffix}`, { token: w.reviewer.token });
    expect(res.status, res.text).toBe(status);
  });
});

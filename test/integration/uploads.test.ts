/** Uploads: stored through the API, served on the web with the project's read permission. */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebStream } from 'node:stream/web';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

async function upload(projectId: number, user: TestUser | undefined, name: string, bytes: Buffer | Blob) {
  const form = new FormData();
  form.append('file', bytes instanceof Blob ? bytes : new Blob([bytes]), name);
  const response = await fetch(`${server.api}/projects/${projectId}/uploads`, {
    method: 'POST',
    headers: user ? { 'PRIVATE-TOKEN': user.token } : {},
    body: form,
  });
  return { status: response.status, body: (await response.json()) as Json };
}

/**
 * The same upload on a connection of its own. fetch may send a body on a pooled connection that the
 * server is closing for idleness meanwhile, and a 100 MB POST is not retried, so a loaded machine
 * could see ECONNRESET instead of the server's answer.
 */
async function uploadOnNewConnection(projectId: number, user: TestUser, name: string, bytes: Blob) {
  const form = new FormData();
  form.append('file', bytes, name);
  const request = new Request(`${server.api}/projects/${projectId}/uploads`, { method: 'POST', body: form });
  return new Promise<{ status: number; body: Json }>((resolve, reject) => {
    const req = http.request(
      request.url,
      {
        method: 'POST',
        agent: false,
        headers: { 'PRIVATE-TOKEN': user.token, 'Content-Type': request.headers.get('content-type')! },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    Readable.fromWeb(request.body! as WebStream<Uint8Array>).pipe(req);
  });
}

const web = (url: string, token?: string) =>
  fetch(`${server.url}${url}`, { headers: token ? { 'PRIVATE-TOKEN': token } : {} });

async function projectWith(visibility: 'private' | 'internal' | 'public') {
  const { owner, project } = await server.factories.ownedProjectWithReadme({ visibility });
  return { owner, project };
}

describe('POST /projects/:id/uploads', () => {
  it('stores a file and serves it at the URLs it answers', async () => {
    const { owner, project } = await projectWith('public');
    const created = await upload(project.id, owner, 'screen shot (1).png', PNG);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const secret = /^\/uploads\/([0-9a-f]{32})\//.exec(created.body.url as string)![1];
    expect(created.body).toEqual({
      id: expect.any(Number),
      alt: 'screen_shot__1_',
      url: `/uploads/${secret}/screen_shot__1_.png`,
      full_path: `/-/project/${project.id}/uploads/${secret}/screen_shot__1_.png`,
      markdown: `![screen_shot__1_](/uploads/${secret}/screen_shot__1_.png)`,
    });
    const served = await web(created.body.full_path as string);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('content-disposition')).toMatch(/^inline; filename="screen_shot__1_.png"/);
    expect(Buffer.from(await served.arrayBuffer())).toEqual(PNG);
    const fullPath = (await server.request('GET', `/projects/${project.id}`)).body as Json;
    const byPath = await web(`/${fullPath.path_with_namespace}${created.body.url}`);
    expect(byPath.status).toBe(200);
    expect((await web(`/-/project/${project.id}/uploads/${'0'.repeat(32)}/screen_shot__1_.png`)).status).toBe(
      404,
    );
  });

  it('serves other files as attachments, and links them without embedding', async () => {
    const { owner, project } = await projectWith('public');
    const created = await upload(project.id, owner, 'page.html', Buffer.from('<script>alert(1)</script>'));
    expect(created.body.markdown).toBe(`[page](${created.body.url})`);
    const served = await web(created.body.full_path as string);
    expect(served.headers.get('content-type')).toBe('application/octet-stream');
    expect(served.headers.get('content-disposition')).toMatch(/^attachment; filename="page.html"/);
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('serves a private project upload to its readers only, unless the project says otherwise', async () => {
    const { owner, project } = await projectWith('private');
    const created = await upload(project.id, owner, 'a.png', PNG);
    const url = created.body.full_path as string;
    const outsider = await server.factories.user();
    expect((await web(url)).status).toBe(404);
    expect((await web(url, outsider.token)).status).toBe(404);
    expect((await web(url, owner.token)).status).toBe(200);
    const guest = await server.factories.memberOf(project, AccessLevel.Guest);
    expect((await web(url, guest.token)).status).toBe(200);
    await server.request('PUT', `/projects/${project.id}`, {
      token: owner.token,
      json: { enforce_auth_checks_on_uploads: false },
    });
    expect((await web(url)).status).toBe(200);
  });

  it.each([
    ['a member', 'private', AccessLevel.Guest, 201],
    ['a signed-in outsider of a public project', 'public', 0, 201],
    ['a signed-in outsider of an internal project', 'internal', 0, 201],
    ['a signed-in outsider of a private project', 'private', 0, 404],
  ] as const)('lets %s upload', async (_, visibility, level, status) => {
    const { project } = await projectWith(visibility);
    const user = await server.factories.memberOf(project, level);
    expect((await upload(project.id, user, 'x.txt', Buffer.from('x'))).status).toBe(status);
  });

  it('refuses bad input', async () => {
    const { owner, project } = await projectWith('public');
    expect((await upload(project.id, undefined, 'x.txt', Buffer.from('x'))).status).toBe(401);
    const none = await fetch(`${server.api}/projects/${project.id}/uploads`, {
      method: 'POST',
      headers: { 'PRIVATE-TOKEN': owner.token },
      body: (() => {
        const form = new FormData();
        form.append('other', 'value');
        return form;
      })(),
    });
    expect(none.status).toBe(400);
    const json = await server.request('POST', `/projects/${project.id}/uploads`, {
      token: owner.token,
      json: { file: 'not a file' },
    });
    expect(json.status).toBe(400);
    const dots = await upload(project.id, owner, '..', Buffer.from('x'));
    expect(dots.status).toBe(201);
    // A part named `..` names no directory: the parser keeps no path, and an empty name is `file`.
    expect(dots.body.url).toMatch(/^\/uploads\/[0-9a-f]{32}\/file$/);
  });

  it('refuses a file over 100 MB with 413 and keeps nothing', async () => {
    const { owner, project } = await projectWith('public');
    const big = new Blob([new Uint8Array(100 * 1024 * 1024 + 1)]);
    const response = await uploadOnNewConnection(project.id, owner, 'big.bin', big);
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ message: '413 Request Entity Too Large' });
    const spool = path.join(server.config.dataDir, 'tmp', 'uploads');
    expect(fs.existsSync(spool) ? fs.readdirSync(spool) : []).toEqual([]);
    const list = await server.request('GET', `/projects/${project.id}/uploads`, { token: owner.token });
    expect(list.body).toEqual([]);
  });
});

describe('managing uploads', () => {
  it('lists, downloads and deletes', async () => {
    const { owner, project } = await projectWith('private');
    const first = await upload(project.id, owner, 'one.png', PNG);
    const second = await upload(project.id, owner, 'two.txt', Buffer.from('two'));
    const list = await server.request('GET', `/projects/${project.id}/uploads?per_page=1`, {
      token: owner.token,
    });
    expect(list.headers.get('x-total')).toBe('2');
    expect(list.body).toEqual([
      {
        id: second.body.id,
        size: 3,
        filename: 'two.txt',
        created_at: expect.any(String),
        uploaded_by: { id: owner.user.id, name: owner.user.name, username: owner.user.username },
      },
    ]);
    const developer = await server.factories.memberOf(project, AccessLevel.Developer);
    expect(
      (await server.request('GET', `/projects/${project.id}/uploads`, { token: developer.token })).status,
    ).toBe(403);

    const byId = await fetch(`${server.api}/projects/${project.id}/uploads/${second.body.id}`, {
      headers: { 'PRIVATE-TOKEN': owner.token },
    });
    expect(await byId.text()).toBe('two');
    const [, secret, name] = /^\/uploads\/([^/]+)\/([^/]+)$/.exec(first.body.url as string)!;
    const bySecret = await fetch(`${server.api}/projects/${project.id}/uploads/${secret}/${name}`, {
      headers: { 'PRIVATE-TOKEN': developer.token },
    });
    const bytes = Buffer.from(await bySecret.arrayBuffer());
    expect(bytes, bytes.toString()).toEqual(PNG);

    const removed = await server.request('DELETE', `/projects/${project.id}/uploads/${second.body.id}`, {
      token: owner.token,
    });
    expect(removed.status).toBe(204);
    expect((await web(second.body.full_path as string, owner.token)).status).toBe(404);
    const again = await server.request('DELETE', `/projects/${project.id}/uploads/${second.body.id}`, {
      token: owner.token,
    });
    expect(again.body).toEqual({ message: '404 Upload Not Found' });
    const bySecretRemoved = await server.request(
      'DELETE',
      `/projects/${project.id}/uploads/${secret}/${name}`,
      {
        token: owner.token,
      },
    );
    expect(bySecretRemoved.status).toBe(204);
    expect((await web(first.body.full_path as string, owner.token)).status).toBe(404);
  });

  it('removes the files of a deleted project', async () => {
    const { owner, project } = await projectWith('public');
    await upload(project.id, owner, 'gone.png', PNG);
    const dir = path.join(server.config.dataDir, 'uploads');
    const before = fs.readdirSync(dir, { recursive: true }).length;
    expect(before).toBeGreaterThan(0);
    await server.request('DELETE', `/projects/${project.id}`, { token: owner.token });
    const end = Date.now() + 20_000;
    const hash = (await import('../../src/git/storage.js')).RepositoryStorage.hash(project.id);
    while (fs.readdirSync(dir, { recursive: true }).some((name) => String(name).endsWith(hash))) {
      if (Date.now() > end) throw new Error('uploads not removed');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
});

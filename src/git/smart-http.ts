/**
 * Git's smart HTTP protocol at `<EXTERNAL_URL>/<full_path>.git`: the ref advertisement, upload-pack
 * (clone, fetch) and receive-pack (push), run as `git <service> --stateless-rpc` with request and
 * response bodies streamed. Pushes go through the pre-receive hook, which asks `PushRules` here.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough, pipeline } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Context, Middleware } from 'koa';
import { canProject } from '../core/abilities.js';
import { requireScope, type Caller } from '../core/auth.js';
import { ApiError } from '../core/errors.js';
import { faultPoint } from '../core/faults.js';
import { decodedStream, readBodyParams } from '../core/http.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { ServiceRegistry } from '../core/family.js';
import { spawnGit } from './git.js';
import type { PushActor, RefChange } from './push-rules.js';
import { READ_ONLY_MESSAGE, type ContainerType } from './write-gate.js';

type Service = 'git-upload-pack' | 'git-receive-pack';

const ROUTE = /^\/(.+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;
const NOT_FOUND =
  'The project you were looking for could not be found or you don\u2019t have permission to view it.';
/** A snippet's repository: `snippets/<id>` (personal) or `<project>/snippets/<id>`, with or without `-/`. */
const SNIPPET_PATH = /^(?:-\/)?snippets\/(\d+)$|^(.+?)\/(?:-\/)?snippets\/(\d+)$/;
const SNIPPET_NOT_FOUND =
  'The snippet you were looking for could not be found or you don\u2019t have permission to view it.';

/** The hooks directory, found from src/ (tests) and from dist/src/ (the build) alike. */
const HOOKS_DIR = [new URL('./hooks', import.meta.url), new URL('../../../src/git/hooks', import.meta.url)]
  .map((url) => fileURLToPath(url))
  .find((candidate) => fs.existsSync(`${candidate}/hook.mjs`)) as string;

/** Pushes in flight, by the secret their hooks present: what checks and records their ref changes. */
interface PushSession {
  refusal(changes: RefChange[], quarantine?: Record<string, string>): Promise<string | null>;
  record(changes: RefChange[]): Promise<void>;
}

/**
 * git's quarantine of a running push, as the hook reported it: only object directories inside the
 * repository are taken (alternates may also name the lenders of a fork).
 */
function quarantineEnv(dir: string, reported: Record<string, string> | undefined): Record<string, string> {
  const objects = reported?.GIT_OBJECT_DIRECTORY ?? '';
  if (!objects || !path.resolve(objects).startsWith(path.join(path.resolve(dir), 'objects') + path.sep))
    return {};
  const env: Record<string, string> = { GIT_OBJECT_DIRECTORY: objects };
  if (reported?.GIT_ALTERNATE_OBJECT_DIRECTORIES)
    env.GIT_ALTERNATE_OBJECT_DIRECTORIES = reported.GIT_ALTERNATE_OBJECT_DIRECTORIES;
  return env;
}

class GitHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly challenge = false,
  ) {
    super(message);
  }
}

function pktLine(text: string): string {
  return (text.length + 4).toString(16).padStart(4, '0') + text;
}

/** HTTP Basic with any user name and a token as the password, as GitLab takes it. */
function basicToken(ctx: Context): string | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(ctx.get('Authorization'));
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) : undefined;
}

export function gitHttp(
  services: Pick<ServiceRegistry, 'authentication' | 'projects' | 'repositories' | 'snippets' | 'writeGate'>,
): Middleware {
  const rules = services.repositories.rules;
  const gate = services.writeGate;
  const readOnly = (view: ProjectView) =>
    gate.readOnly(services.repositories.manager, 'project', view.project.id);
  const sessions = new Map<string, PushSession>();

  async function authenticate(ctx: Context): Promise<Caller> {
    try {
      return await services.authentication.authenticate(basicToken(ctx));
    } catch (err) {
      // A refused token; a database that does not answer is an outage (503), not a wrong password.
      if (!(err instanceof ApiError)) throw err;
      throw new GitHttpError(401, 'HTTP Basic: Access denied', true);
    }
  }

  function requireRepositoryScope(caller: Caller, pushing: boolean) {
    try {
      requireScope(
        caller,
        pushing ? ['api', 'write_repository'] : ['api', 'read_repository', 'write_repository'],
      );
    } catch {
      throw new GitHttpError(
        403,
        `Your token does not have the ${pushing ? 'write' : 'read'}_repository scope.`,
      );
    }
  }

  /** A snippet's repository, with the snippet's own permissions and push check. */
  async function authorizeSnippet(ctx: Context, match: RegExpExecArray, service: Service) {
    const caller = await authenticate(ctx);
    const pushing = service === 'git-receive-pack';
    requireRepositoryScope(caller, pushing);
    if (pushing && !caller.user) throw new GitHttpError(401, 'HTTP Basic: Access denied', true);
    const id = Number(match[1] ?? match[3]);
    let target: Awaited<ReturnType<ServiceRegistry['snippets']['gitTarget']>>;
    try {
      target = await services.snippets.gitTarget(caller, match[2] ?? null, id, pushing);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.status === 404 && !caller.user) throw new GitHttpError(401, 'HTTP Basic: Access denied', true);
      if (err.status === 404) throw new GitHttpError(404, SNIPPET_NOT_FOUND);
      throw new GitHttpError(403, 'You are not allowed to update this snippet.');
    }
    // A snippet being moved refuses pushes as a project does: before they send anything, and again
    // in pre-receive for one that began before the move was scheduled.
    const moving = () => gate.readOnly(services.repositories.manager, 'snippet', id);
    if (pushing && (await moving())) throw new GitHttpError(403, READ_ONLY_MESSAGE);
    const session: PushSession = {
      refusal: async (changes) => ((await moving()) ? READ_ONLY_MESSAGE : target.refusal(changes)),
      record: () => target.recorded(),
    };
    return { dir: target.dir, session, writer: { type: 'snippet' as const, id } };
  }

  async function authorize(ctx: Context, fullPath: string, service: Service) {
    const caller = await authenticate(ctx);
    let view: ProjectView;
    try {
      view = await services.projects.find(caller, fullPath);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        if (!caller.user) throw new GitHttpError(401, 'HTTP Basic: Access denied', true);
        throw new GitHttpError(404, NOT_FOUND);
      }
      throw err;
    }
    const pushing = service === 'git-receive-pack';
    requireRepositoryScope(caller, pushing);
    const subject = services.projects.subject(view);
    let collaborationBranches: Set<string> | undefined;
    if (pushing) {
      if (!caller.user) throw new GitHttpError(401, 'HTTP Basic: Access denied', true);
      // One who may not push code may still push to a fork's branches they collaborate on.
      if (!canProject(caller, 'push_code', subject) && !view.project.archived)
        if (canProject(caller, 'read_code', subject))
          collaborationBranches = await rules.collaborationBranches(view.project.id, caller);
      if (!canProject(caller, 'push_code', subject) && !collaborationBranches?.size) {
        throw new GitHttpError(
          403,
          view.project.archived
            ? 'You are not allowed to push code to an archived project.'
            : 'You are not allowed to push code to this project.',
        );
      }
      // As GitLab's access check: a repository being moved refuses pushes before they send anything.
      if (await readOnly(view)) throw new GitHttpError(403, READ_ONLY_MESSAGE);
    } else if (!canProject(caller, 'read_code', subject)) {
      if (!caller.user) throw new GitHttpError(401, 'HTTP Basic: Access denied', true);
      throw new GitHttpError(403, 'You are not allowed to download code from this project.');
    }
    return { caller, view, dir: services.repositories.dir(view), collaborationBranches };
  }

  function hookEnv(ctx: Context, session: PushSession): Record<string, string> {
    const secret = crypto.randomBytes(24).toString('hex');
    sessions.set(secret, session);
    ctx.res.once('close', () => sessions.delete(secret));
    const socket = ctx.req.socket;
    const host = socket.localAddress?.includes(':') ? `[${socket.localAddress}]` : socket.localAddress;
    return { FORGE_HOOK_URL: `http://${host}:${socket.localPort}/-/internal/git`, FORGE_HOOK_SECRET: secret };
  }

  /**
   * The server's own refs (merge request heads) are neither shown to nor updated by a push, as in GitLab;
   * push options (`git push -o`) are offered by every repository, whenever it was made.
   */
  const receiveConfig = (service: Service) =>
    service === 'git-receive-pack'
      ? ['-c', 'receive.hideRefs=refs/merge-requests', '-c', 'receive.advertisePushOptions=true']
      : [];

  async function advertise(ctx: Context, service: Service, dir: string, env: Record<string, string>) {
    const protocol = ctx.get('Git-Protocol');
    const child = spawnGit(
      [...receiveConfig(service), service.slice(4), '--stateless-rpc', '--advertise-refs', dir],
      {
        env: { ...env, ...(protocol ? { GIT_PROTOCOL: protocol } : {}) },
      },
    );
    child.stdin!.end();
    const body = new PassThrough();
    // Protocol v2 clients get the capabilities straight away, without the service announcement.
    if (!(service === 'git-upload-pack' && /version=2/.test(protocol))) {
      body.write(`${pktLine(`# service=${service}\n`)}0000`);
    }
    pipeline(child.stdout!, body, () => undefined);
    ctx.status = 200;
    ctx.set('Content-Type', `application/x-${service}-advertisement`);
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = body;
  }

  function run(
    ctx: Context,
    service: Service,
    dir: string,
    env: Record<string, string>,
    writer: { type: ContainerType; id: number } | null,
  ) {
    const protocol = ctx.get('Git-Protocol');
    const args = [...receiveConfig(service), service.slice(4), '--stateless-rpc', dir];
    // git's own `gc --auto` after a push could prune objects that forks borrow: housekeeping, which
    // knows about lenders, runs on the queue after every push instead.
    if (service === 'git-receive-pack')
      args.unshift('-c', `core.hooksPath=${HOOKS_DIR}`, '-c', 'receive.autogc=false');
    // A push is a writer from before its pre-receive check until its refs moved (see write-gate.ts).
    const leave =
      service === 'git-receive-pack' && writer !== null
        ? gate.enter(writer.type, writer.id)
        : () => undefined;
    const child = spawnGit(args, { env: { ...env, ...(protocol ? { GIT_PROTOCOL: protocol } : {}) } });
    child.once('close', leave);
    child.once('error', leave);
    pipeline(decodedStream(ctx.req), child.stdin!, () => undefined);
    ctx.status = 200;
    ctx.set('Content-Type', `application/x-${service}-result`);
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = pipeline(child.stdout!, new PassThrough(), () => undefined);
  }

  async function receiveHook(ctx: Context, hook: string) {
    const payload = (await readBodyParams(ctx)) as {
      secret?: string;
      changes?: RefChange[];
      quarantine?: Record<string, string>;
    };
    const session = payload.secret ? sessions.get(payload.secret) : undefined;
    if (!session || !Array.isArray(payload.changes)) {
      ctx.status = 403;
      ctx.body = { allowed: false, message: 'Unknown push.' };
      return;
    }
    if (hook === 'pre-receive') {
      faultPoint('push:pre-receive');
      const reason = await session.refusal(payload.changes, payload.quarantine);
      ctx.body = reason ? { allowed: false, message: reason } : { allowed: true };
      return;
    }
    await session.record(payload.changes);
    ctx.body = { allowed: true };
  }

  return async (ctx, next) => {
    if (ctx.method === 'POST' && ctx.path.startsWith('/-/internal/git/')) {
      ctx.state.route = 'git_hook';
      return receiveHook(ctx, ctx.path.slice('/-/internal/git/'.length));
    }
    const match = ROUTE.exec(ctx.path);
    if (!match || ctx.path.startsWith('/api/')) return next();
    const [, fullPath, action] = match;
    const service = (action === 'info/refs' ? ctx.query.service : action) as Service;
    ctx.state.route = `git_${action === 'info/refs' ? 'info_refs' : service.slice(4).replace('-', '_')}`;
    const method = action === 'info/refs' ? 'GET' : 'POST';
    if (ctx.method !== method || (service !== 'git-upload-pack' && service !== 'git-receive-pack')) {
      ctx.status = ctx.method !== method ? 405 : 403;
      ctx.type = 'text/plain';
      ctx.body = ctx.method !== method ? 'Method Not Allowed' : 'Unsupported service';
      return;
    }
    try {
      const pushing = service === 'git-receive-pack' && action !== 'info/refs';
      const snippet = SNIPPET_PATH.exec(decodeURIComponent(fullPath));
      let env: Record<string, string> = {};
      let dir: string;
      let writer: { type: ContainerType; id: number } | null = null;
      if (snippet) {
        const target = await authorizeSnippet(ctx, snippet, service);
        dir = target.dir;
        writer = target.writer;
        if (pushing) env = hookEnv(ctx, target.session);
      } else {
        const authorized = await authorize(ctx, decodeURIComponent(fullPath), service);
        const { caller, view, collaborationBranches } = authorized;
        dir = authorized.dir;
        writer = { type: 'project', id: view.project.id };
        if (pushing) {
          const actor: PushActor = {
            ...(await rules.actor(caller, view.accessLevel)),
            collaborationBranches,
          };
          env = hookEnv(ctx, {
            refusal: async (changes, quarantine) =>
              (await readOnly(view))
                ? READ_ONLY_MESSAGE
                : rules.firstRefusal(view.project, actor, changes, {
                    pathsOf: (change) => Promise.resolve(Array.isArray(change.paths) ? change.paths : []),
                    content: { dir: authorized.dir, env: quarantineEnv(authorized.dir, quarantine) },
                  }),
            record: (changes) =>
              services.repositories.recordPush(view.project, caller.user?.id ?? null, changes, 'git'),
          });
        }
      }
      if (action === 'info/refs') await advertise(ctx, service, dir, env);
      else run(ctx, service, dir, env, writer);
    } catch (err) {
      if (!(err instanceof GitHttpError)) throw err;
      ctx.status = err.status;
      ctx.type = 'text/plain';
      if (err.challenge) ctx.set('WWW-Authenticate', 'Basic realm="GitLab"');
      ctx.body = err.message;
    }
  };
}

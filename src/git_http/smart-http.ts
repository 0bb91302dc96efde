/**
 * Git's smart HTTP protocol at `<EXTERNAL_URL>/<full_path>.git` (and snippets' repositories): the
 * routes, which resolve the caller and the repository (repository-access.ts) and hand the streams to
 * git (src/git/smart-protocol.ts). Pushes run the families' pre-receive checks through the hooks.
 */
import type { Context, Middleware } from 'koa';
import { decodedStream } from '../core/http.js';
import type { CallerCredentialResolvers } from '../core/credentials.js';
import type { SubjectResolvers } from '../core/subjects.js';
import { advertiseRefs, isGitService, runService, type GitService } from '../git/smart-protocol.js';
import { HOOK_PATH, PushSessions } from './push-sessions.js';
import { GitHttpError, RepositoryAccess, type GitHttpServices, type GitTarget } from './repository-access.js';

const ROUTE = /^\/(.+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;
/** A snippet's repository: `snippets/<id>` (personal) or `<project>/snippets/<id>`, with or without `-/`. */
const SNIPPET_PATH = /^(?:-\/)?snippets\/(\d+)$|^(.+?)\/(?:-\/)?snippets\/(\d+)$/;

/** One git request: the repository's path, whether it is the ref advertisement, and the service. */
interface GitRequest {
  fullPath: string;
  advertisement: boolean;
  service: GitService;
}

/** The git route the request names, null when it names none; a wrong method or service is answered here. */
function gitRequest(ctx: Context): GitRequest | 'answered' | null {
  const match = ROUTE.exec(ctx.path);
  if (!match || ctx.path.startsWith('/api/')) return null;
  const [, fullPath, action] = match;
  const advertisement = action === 'info/refs';
  const service = advertisement ? ctx.query.service : action;
  ctx.state.route = `git_${advertisement ? 'info_refs' : action.slice(4).replace('-', '_')}`;
  const method = advertisement ? 'GET' : 'POST';
  if (ctx.method !== method || !isGitService(service)) {
    ctx.status = ctx.method !== method ? 405 : 403;
    ctx.type = 'text/plain';
    ctx.body = ctx.method !== method ? 'Method Not Allowed' : 'Unsupported service';
    return 'answered';
  }
  return { fullPath: decodeURIComponent(fullPath), advertisement, service };
}

function respond(ctx: Context, contentType: string, body: unknown) {
  ctx.status = 200;
  ctx.set('Content-Type', contentType);
  ctx.set('Cache-Control', 'no-cache');
  ctx.body = body;
}

export function gitHttp(
  services: GitHttpServices,
  subjects: Pick<SubjectResolvers, 'project'>,
  callerCredentials: CallerCredentialResolvers = {},
): Middleware {
  const access = new RepositoryAccess(services, subjects, callerCredentials);
  const sessions = new PushSessions();

  const resolve = (ctx: Context, { fullPath, service }: GitRequest): Promise<GitTarget> => {
    const snippet = SNIPPET_PATH.exec(fullPath);
    if (!snippet) return access.project(ctx, fullPath, service);
    return access.snippet(ctx, snippet[2] ?? null, Number(snippet[1] ?? snippet[3]), service);
  };

  /** Runs the service; a push counts as a writer from before its pre-receive check until its refs moved. */
  const serve = (ctx: Context, request: GitRequest, target: GitTarget) => {
    const protocol = ctx.get('Git-Protocol');
    const { service } = request;
    const pushing = service === 'git-receive-pack' && !request.advertisement;
    const env = pushing && target.session ? sessions.open(ctx, target.session) : {};
    if (request.advertisement)
      return respond(
        ctx,
        `application/x-${service}-advertisement`,
        advertiseRefs(service, target.dir, { env, protocol }),
      );
    const onExit = pushing ? services.writeGate.enter(target.writer.type, target.writer.id) : undefined;
    const output = runService(service, target.dir, decodedStream(ctx.req), { env, protocol, onExit });
    respond(ctx, `application/x-${service}-result`, output);
  };

  return async (ctx, next) => {
    if (ctx.method === 'POST' && ctx.path.startsWith(HOOK_PATH)) {
      ctx.state.route = 'git_hook';
      return sessions.answerHook(ctx, ctx.path.slice(HOOK_PATH.length));
    }
    const request = gitRequest(ctx);
    if (!request) return next();
    if (request === 'answered') return;
    try {
      serve(ctx, request, await resolve(ctx, request));
    } catch (err) {
      if (!(err instanceof GitHttpError)) throw err;
      ctx.status = err.status;
      ctx.type = 'text/plain';
      if (err.challenge) ctx.set('WWW-Authenticate', 'Basic realm="GitLab"');
      ctx.body = err.message;
    }
  };
}

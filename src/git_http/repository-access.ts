/**
 * Who may clone, fetch or push which repository over HTTP. The credential is resolved as the API
 * resolves it (a token, here as the HTTP Basic password), and the project through the same subject
 * resolver and abilities as the API's `x-subject`; only the answers are git's (401 with a challenge,
 * plain text messages).
 */
import type { Context } from 'koa';
import { basicAuthToken, requireScope, type Caller } from '../core/auth.js';
import type { CallerCredentialResolvers } from '../core/credentials.js';
import { ApiError } from '../core/errors.js';
import type { ServiceRegistry } from '../core/family.js';
import type { SubjectResolvers } from '../core/subjects.js';
import type { GitService } from '../git/smart-protocol.js';
import { quarantineEnv } from '../git/smart-protocol.js';
import { READ_ONLY_MESSAGE, type ContainerType } from '../repository_storage_moves/write-gate.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { PushSession } from './push-sessions.js';

export type GitHttpServices = Pick<
  ServiceRegistry,
  'authentication' | 'protectedRefs' | 'repositories' | 'snippets' | 'writeGate'
>;

const NOT_FOUND =
  'The project you were looking for could not be found or you don\u2019t have permission to view it.';
const SNIPPET_NOT_FOUND =
  'The snippet you were looking for could not be found or you don\u2019t have permission to view it.';

/** A refusal as git clients show it: plain text, with a Basic challenge when credentials could help. */
export class GitHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly challenge = false,
  ) {
    super(message);
  }
}

/** The user name of HTTP Basic credentials. */
function basicAuthUser(authorization: string | undefined): string | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(authorization ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(0, colon) : undefined;
}

const accessDenied = () => new GitHttpError(401, 'HTTP Basic: Access denied', true);

/** The repository a request reached: where it is, the writer a push counts as, and a push's session. */
export interface GitTarget {
  dir: string;
  writer: { type: ContainerType; id: number };
  /** How a push to it is checked and recorded (receive-pack only). */
  session?: PushSession;
}

export class RepositoryAccess {
  constructor(
    private readonly services: GitHttpServices,
    private readonly subjects: Pick<SubjectResolvers, 'project'>,
    /** The API's caller schemes: `gitlab-ci-token` with a CI job token as the password resolves through `JobToken`. */
    private readonly callerCredentials: CallerCredentialResolvers = {},
  ) {}

  private async authenticate(ctx: Context): Promise<Caller> {
    const jobToken = this.callerCredentials.JobToken;
    if (jobToken && basicAuthUser(ctx.headers.authorization) === 'gitlab-ci-token') {
      const caller = await jobToken(basicAuthToken(ctx.headers) ?? '');
      if (!caller) throw accessDenied();
      return caller;
    }
    try {
      return await this.services.authentication.authenticate(basicAuthToken(ctx.headers));
    } catch (err) {
      // A refused token; a database that does not answer is an outage (503), not a wrong password.
      if (!(err instanceof ApiError)) throw err;
      throw accessDenied();
    }
  }

  private requireRepositoryScope(caller: Caller, pushing: boolean) {
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

  /** The pipeline's answer to "has the caller this ability on the project", as a yes or no. */
  private may(caller: Caller, ability: string, view: ProjectView): boolean {
    try {
      this.subjects.project.authorize(caller, ability, view);
      return true;
    } catch (err) {
      if (err instanceof ApiError) return false;
      throw err;
    }
  }

  private readOnly(type: ContainerType, id: number): Promise<boolean> {
    return this.services.writeGate.readOnly(this.services.repositories.manager, type, id);
  }

  /** A project's repository, as the caller may use it for `service`. */
  async project(ctx: Context, fullPath: string, service: GitService): Promise<GitTarget> {
    const caller = await this.authenticate(ctx);
    let view: ProjectView;
    try {
      view = await this.subjects.project.find(caller, fullPath);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        if (!caller.user) throw accessDenied();
        throw new GitHttpError(404, NOT_FOUND);
      }
      throw err;
    }
    const pushing = service === 'git-receive-pack';
    if (caller.reach) {
      // A job token clones its own project and those whose job token scope allows it; it never pushes.
      try {
        await caller.reach.check('project', view);
      } catch (err) {
        if (err instanceof ApiError) throw new GitHttpError(404, NOT_FOUND);
        throw err;
      }
      if (pushing) throw new GitHttpError(403, 'You are not allowed to push code to this project.');
    }
    this.requireRepositoryScope(caller, pushing);
    const target: GitTarget = {
      dir: this.services.repositories.dir(view),
      writer: { type: 'project', id: view.project.id },
    };
    if (!pushing) {
      if (this.may(caller, 'read_code', view)) return target;
      if (!caller.user) throw accessDenied();
      throw new GitHttpError(403, 'You are not allowed to download code from this project.');
    }
    const collaborationBranches = await this.mayPush(caller, view);
    return { ...target, session: this.projectPush(caller, view, target.dir, collaborationBranches) };
  }

  /**
   * Refuses one who may not push before they send anything; one who may not push code may still push
   * to a fork's branches they collaborate on, which it returns.
   */
  private async mayPush(caller: Caller, view: ProjectView): Promise<Set<string> | undefined> {
    if (!caller.user) throw accessDenied();
    const pushCode = this.may(caller, 'push_code', view);
    let collaborationBranches: Set<string> | undefined;
    if (!pushCode && !view.project.archived && this.may(caller, 'read_code', view))
      collaborationBranches = await this.services.protectedRefs.collaborationBranches(
        view.project.id,
        caller,
      );
    if (!pushCode && !collaborationBranches?.size) {
      throw new GitHttpError(
        403,
        view.project.archived
          ? 'You are not allowed to push code to an archived project.'
          : 'You are not allowed to push code to this project.',
      );
    }
    // As GitLab's access check: a repository being moved refuses pushes before they send anything.
    if (await this.readOnly('project', view.project.id)) throw new GitHttpError(403, READ_ONLY_MESSAGE);
    return collaborationBranches;
  }

  /** A push to a project: the families' pre-receive checks, then the push recorded (post-receive). */
  private projectPush(
    caller: Caller,
    view: ProjectView,
    dir: string,
    collaborationBranches: Set<string> | undefined,
  ): PushSession {
    const { repositories } = this.services;
    return {
      refusal: async (changes, quarantine) =>
        (await this.readOnly('project', view.project.id))
          ? READ_ONLY_MESSAGE
          : repositories.pushRefusal(
              {
                project: view.project,
                caller,
                accessLevel: view.accessLevel,
                collaborationBranches,
                pathsOf: (change) => Promise.resolve(Array.isArray(change.paths) ? change.paths : []),
                content: { dir, env: quarantineEnv(dir, quarantine) },
              },
              changes,
            ),
      record: (changes, pushOptions) =>
        repositories.recordPush(view.project, caller.user?.id ?? null, changes, 'git', pushOptions),
    };
  }

  /** A snippet's repository, with the snippet's own permissions and push check. */
  async snippet(
    ctx: Context,
    projectPath: string | null,
    id: number,
    service: GitService,
  ): Promise<GitTarget> {
    const caller = await this.authenticate(ctx);
    const pushing = service === 'git-receive-pack';
    // A job token reaches projects' repositories only.
    if (caller.reach) throw accessDenied();
    this.requireRepositoryScope(caller, pushing);
    if (pushing && !caller.user) throw accessDenied();
    let target: Awaited<ReturnType<ServiceRegistry['snippets']['gitTarget']>>;
    try {
      target = await this.services.snippets.gitTarget(caller, projectPath, id, pushing);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.status === 404 && !caller.user) throw accessDenied();
      if (err.status === 404) throw new GitHttpError(404, SNIPPET_NOT_FOUND);
      throw new GitHttpError(403, 'You are not allowed to update this snippet.');
    }
    // A snippet being moved refuses pushes as a project does: before they send anything, and again
    // in pre-receive for one that began before the move was scheduled.
    const moving = () => this.readOnly('snippet', id);
    if (pushing && (await moving())) throw new GitHttpError(403, READ_ONLY_MESSAGE);
    const session: PushSession = {
      refusal: async (changes) => ((await moving()) ? READ_ONLY_MESSAGE : target.refusal(changes)),
      record: () => target.recorded(),
    };
    return { dir: target.dir, writer: { type: 'snippet', id }, session };
  }
}

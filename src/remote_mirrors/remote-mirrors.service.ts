import { RE2JS } from 're2js';
import type { DataSource, EntityManager } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import type { Events } from '../core/events.js';
import { ApiError, recordNotFound, validationFailed } from '../core/errors.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import type { QueueJob } from '../core/queue.js';
import { KeyedLock } from '../core/keyed-lock.js';
import { paginateOffset, type Page, type PageParams, type RequestInfo } from '../core/pagination.js';
import type { Logger } from '../logger.js';
import { refPatternMatches } from '../git/ref-changes.js';
import {
  generateSshKeyPair,
  listRemoteRefs,
  pushToRemote,
  RemoteGitError,
  sshFingerprint,
  type RemoteTarget,
} from '../git/remote-mirror.js';
import type { RefsUpdated } from '../repository/repositories.events.js';
import type { ProjectView } from '../projects/projects.service.js';
import { bareUrl, knownHostsName, localAddressProblem, parseMirrorUrl } from './mirror-url.js';
import { RemoteMirror, type RemoteMirrorStatus } from './remote-mirror.entity.js';
import { SecretBox } from './secret-box.js';

export type CreateRemoteMirrorParams = components['schemas']['RemoteMirrorCreate'];
export type UpdateRemoteMirrorParams = components['schemas']['RemoteMirrorUpdate'];

/** GitLab's RepositoryUpdateRemoteMirrorWorker: three more tries, backing off. */
export const MIRROR_RETRY = { retryLimit: 3, retryDelaySeconds: 5, retryBackoff: true } as const;

const DIVERGED = 'Some refs have diverged and have not been updated on the remote:';
const SYNC_REFUSED = 'Cannot proceed with the push mirroring. Please verify your mirror configuration.';
const ZERO = /^0+$/;

/** Statuses in which an update is already on the queue, so another push needs no job of its own. */
const PENDING: RemoteMirrorStatus[] = ['scheduled', 'to_retry'];

export class RemoteMirrorsService {
  private readonly dataSource: DataSource;
  private readonly events: Events;
  private readonly logger: Logger;
  private readonly secrets: SecretBox;
  private readonly allowLocal: boolean;
  /** `mirror_branch_regex` is Premium and Ultimate. */
  readonly branchRegexShown: boolean;
  /** One update of a mirror at a time in this process. */
  private readonly updates = new KeyedLock();

  constructor(
    core: CoreDeps,
    private readonly services: Pick<ServiceRegistry, 'repositories'>,
  ) {
    this.dataSource = core.dataSource;
    this.events = core.events;
    this.logger = core.logger;
    this.secrets = SecretBox.fromConfig(core.config);
    this.allowLocal = core.config.allowLocalRequests;
    this.branchRegexShown = core.config.tier !== 'free';
  }

  list(view: ProjectView, params: PageParams, request: RequestInfo): Promise<Page<RemoteMirror>> {
    const query = this.dataSource
      .getRepository(RemoteMirror)
      .createQueryBuilder('m')
      .where('m.project_id = :projectId', { projectId: view.project.id })
      .orderBy('m.id', 'ASC');
    return paginateOffset(query, params, request);
  }

  async get(
    view: ProjectView,
    id: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<RemoteMirror> {
    const mirror = await manager.getRepository(RemoteMirror).findOneBy({ id, projectId: view.project.id });
    if (!mirror) throw recordNotFound();
    return mirror;
  }

  async create(view: ProjectView, params: CreateRemoteMirrorParams): Promise<RemoteMirror> {
    const parsed = parseMirrorUrl(params.url);
    if ('problem' in parsed) throw validationFailed({ url: [parsed.problem] });
    if (!this.allowLocal) {
      const problem = await localAddressProblem(parsed.masked);
      if (problem) throw validationFailed({ url: [problem] });
    }
    const onlyProtected = params.only_protected_branches ?? false;
    const regex = params.mirror_branch_regex ?? null;
    checkBranchFilters(onlyProtected, regex);
    const authMethod = params.auth_method ?? 'password';
    const knownHosts = params.host_keys ? hostKeysToKnownHosts(params.host_keys, parsed.masked) : null;
    const keys = authMethod === 'ssh_public_key' ? await generateSshKeyPair('forge-api remote mirror') : null;
    const credentials =
      parsed.user !== null || parsed.password !== null
        ? this.secrets.seal(JSON.stringify({ user: parsed.user, password: parsed.password }))
        : null;
    const now = new Date();
    return this.dataSource.getRepository(RemoteMirror).save({
      projectId: view.project.id,
      url: parsed.masked,
      encryptedCredentials: credentials,
      authMethod,
      encryptedSshPrivateKey: keys ? this.secrets.seal(keys.privateKey) : null,
      sshPublicKey: keys?.publicKey ?? null,
      sshKnownHosts: knownHosts,
      enabled: params.enabled ?? false,
      onlyProtectedBranches: onlyProtected,
      keepDivergentRefs: params.keep_divergent_refs ?? false,
      mirrorBranchRegex: regex || null,
      updateStatus: 'none',
      lastError: null,
      lastUpdateAt: null,
      lastUpdateStartedAt: null,
      lastSuccessfulUpdateAt: null,
      createdAt: now,
      updatedAt: now,
    });
  }

  async update(view: ProjectView, id: number, params: UpdateRemoteMirrorParams): Promise<RemoteMirror> {
    const mirror = await this.get(view, id);
    const onlyProtected = params.only_protected_branches ?? mirror.onlyProtectedBranches;
    const regex =
      params.mirror_branch_regex !== undefined
        ? params.mirror_branch_regex || null
        : mirror.mirrorBranchRegex;
    checkBranchFilters(onlyProtected, regex);
    const knownHosts =
      params.host_keys === undefined
        ? mirror.sshKnownHosts
        : params.host_keys.length === 0
          ? null
          : hostKeysToKnownHosts(params.host_keys, mirror.url);
    const authMethod = params.auth_method ?? mirror.authMethod;
    const keys =
      authMethod === 'ssh_public_key' && !mirror.sshPublicKey
        ? await generateSshKeyPair('forge-api remote mirror')
        : null;
    await this.dataSource.getRepository(RemoteMirror).update(
      { id: mirror.id },
      {
        enabled: params.enabled ?? mirror.enabled,
        onlyProtectedBranches: onlyProtected,
        keepDivergentRefs: params.keep_divergent_refs ?? mirror.keepDivergentRefs,
        mirrorBranchRegex: regex,
        authMethod,
        sshKnownHosts: knownHosts,
        ...(keys
          ? { encryptedSshPrivateKey: this.secrets.seal(keys.privateKey), sshPublicKey: keys.publicKey }
          : {}),
        updatedAt: new Date(),
      },
    );
    return this.get(view, id);
  }

  async remove(view: ProjectView, id: number): Promise<void> {
    const mirror = await this.get(view, id);
    await this.dataSource.getRepository(RemoteMirror).delete({ id: mirror.id });
  }

  async publicKey(view: ProjectView, id: number): Promise<string> {
    const mirror = await this.get(view, id);
    if (mirror.authMethod !== 'ssh_public_key' || !mirror.sshPublicKey) throw recordNotFound();
    return mirror.sshPublicKey;
  }

  /** The force update: schedules an update unless one is already scheduled or running. */
  async requestSync(view: ProjectView, id: number): Promise<void> {
    await this.dataSource.transaction(async (tx) => {
      const mirror = await this.get(view, id, tx);
      if (!mirror.enabled) throw new ApiError(400, { message: SYNC_REFUSED });
      if (PENDING.includes(mirror.updateStatus) || mirror.updateStatus === 'started') return;
      await this.schedule(tx, [mirror.id]);
    });
  }

  /** After an accepted push: every enabled mirror of the project gets an update, unless one is pending. */
  async scheduleAfterPush(payload: RefsUpdated): Promise<void> {
    await this.dataSource.transaction(async (tx) => {
      const rows = (await tx.query(
        `SELECT id FROM remote_mirrors
         WHERE project_id = $1 AND enabled AND update_status <> ALL($2::varchar[])
         ORDER BY id FOR UPDATE`,
        [payload.projectId, PENDING],
      )) as Array<{ id: number }>;
      await this.schedule(
        tx,
        rows.map((row) => row.id),
      );
    });
  }

  private async schedule(tx: EntityManager, ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await tx.query(`UPDATE remote_mirrors SET update_status = 'scheduled' WHERE id = ANY($1::int[])`, [ids]);
    for (const mirrorId of ids) await this.events.publish(tx, 'remote_mirror.update_requested', { mirrorId });
  }

  /**
   * One attempt at updating a mirror (the queue's job). A failure leaves `to_retry` and throws, so that
   * the queue tries again with backoff; the last allowed attempt leaves `failed`.
   */
  runUpdate(mirrorId: number, job: QueueJob<unknown>): Promise<void> {
    return this.updates.run(String(mirrorId), () => this.attempt(mirrorId, job));
  }

  private async attempt(mirrorId: number, job: QueueJob<unknown>): Promise<void> {
    const repository = this.dataSource.getRepository(RemoteMirror);
    const mirror = await repository.findOneBy({ id: mirrorId });
    if (!mirror) return;
    if (!mirror.enabled) {
      // Disabled while it waited: nothing is pending any more, so a later push schedules it again.
      await this.dataSource.query(
        `UPDATE remote_mirrors SET update_status = 'none' WHERE id = $1 AND update_status = ANY($2::varchar[])`,
        [mirrorId, PENDING],
      );
      return;
    }
    const [project] = (await this.dataSource.query(
      'SELECT id, repository_storage FROM projects WHERE id = $1',
      [mirror.projectId],
    )) as Array<{ id: number; repository_storage: string }>;
    if (!project) return;
    const started = new Date();
    await repository.update({ id: mirrorId }, { updateStatus: 'started', lastUpdateStartedAt: started });
    const target = this.target(mirror);
    try {
      const { divergent, knownHosts } = await this.push(mirror, project, target);
      const now = new Date();
      await repository.update(
        { id: mirrorId },
        divergent.length > 0
          ? {
              updateStatus: 'failed',
              lastUpdateAt: now,
              lastError: `${DIVERGED}\n\n${divergent.join('\n')}`,
              sshKnownHosts: knownHosts,
            }
          : {
              updateStatus: 'finished',
              lastUpdateAt: now,
              lastSuccessfulUpdateAt: now,
              lastError: null,
              sshKnownHosts: knownHosts,
            },
      );
    } catch (err) {
      const message =
        err instanceof RemoteGitError
          ? err.message
          : 'The remote mirror could not be updated (internal error).';
      const last = job.retryCount >= MIRROR_RETRY.retryLimit;
      await repository.update(
        { id: mirrorId },
        { updateStatus: last ? 'failed' : 'to_retry', lastUpdateAt: new Date(), lastError: message },
      );
      this.logger.warn(
        { mirrorId, projectId: mirror.projectId, attempt: job.retryCount + 1, error: message },
        'remote mirror update failed',
      );
      if (!(err instanceof RemoteGitError))
        this.logger.error({ mirrorId, err }, 'remote mirror update fault');
      throw new Error(message);
    }
  }

  private target(mirror: RemoteMirror): RemoteTarget {
    const credentials = mirror.encryptedCredentials
      ? (JSON.parse(this.secrets.open(mirror.encryptedCredentials)) as {
          user: string | null;
          password: string | null;
        })
      : { user: null, password: null };
    return {
      url: bareUrl(mirror.url),
      user: credentials.user,
      password: credentials.password,
      privateKey:
        mirror.authMethod === 'ssh_public_key' && mirror.encryptedSshPrivateKey
          ? this.secrets.open(mirror.encryptedSshPrivateKey)
          : null,
      knownHosts: mirror.sshKnownHosts,
    };
  }

  /**
   * Pushes what differs: selected branches and every tag, deleting on the remote what is gone here
   * unless divergent refs are kept, when refs that moved on the remote are skipped and reported.
   */
  private async push(
    mirror: RemoteMirror,
    project: { id: number; repository_storage: string },
    target: RemoteTarget,
  ): Promise<{ divergent: string[]; knownHosts: string | null }> {
    const git = this.services.repositories.gitOf({
      id: project.id,
      repositoryStorage: project.repository_storage,
    });
    const selectBranch = await this.branchFilter(mirror);
    const selected = (ref: string) =>
      ref.startsWith('refs/tags/') ||
      (ref.startsWith('refs/heads/') && selectBranch(ref.slice('refs/heads/'.length)));
    const local = new Map(
      (await git.refs()).filter((entry) => selected(entry.ref)).map((entry) => [entry.ref, entry.sha]),
    );
    const remote = await listRemoteRefs(target);
    target.knownHosts = remote.knownHosts;
    const refspecs: string[] = [];
    const divergent: string[] = [];
    for (const [ref, sha] of local) {
      const theirs = remote.refs.get(ref);
      if (theirs === sha) continue;
      if (!theirs || ZERO.test(theirs)) refspecs.push(`${ref}:${ref}`);
      else if (!mirror.keepDivergentRefs) refspecs.push(`+${ref}:${ref}`);
      else if (
        ref.startsWith('refs/heads/') &&
        (await git.object(theirs)) &&
        (await git.isAncestor(theirs, sha))
      )
        refspecs.push(`${ref}:${ref}`);
      else divergent.push(ref);
    }
    if (!mirror.keepDivergentRefs)
      for (const ref of remote.refs.keys()) if (selected(ref) && !local.has(ref)) refspecs.push(`:${ref}`);
    const pushed = await pushToRemote(git.dir, target, refspecs);
    return { divergent, knownHosts: pushed.knownHosts };
  }

  private async branchFilter(mirror: RemoteMirror): Promise<(name: string) => boolean> {
    if (mirror.onlyProtectedBranches) {
      const rules = (await this.dataSource.query(
        'SELECT name FROM protected_branches WHERE project_id = $1',
        [mirror.projectId],
      )) as Array<{ name: string }>;
      return (name) => rules.some((rule) => refPatternMatches(rule.name, name));
    }
    if (mirror.mirrorBranchRegex) {
      const regex = RE2JS.compile(mirror.mirrorBranchRegex);
      return (name) => regex.matcher(name).find();
    }
    return () => true;
  }
}

function checkBranchFilters(onlyProtected: boolean, regex: string | null | undefined): void {
  if (!regex) return;
  if (onlyProtected)
    throw validationFailed({
      mirror_branch_regex: ['cannot be set when only_protected_branches is enabled'],
    });
  try {
    RE2JS.compile(regex);
  } catch {
    throw validationFailed({ mirror_branch_regex: ['not valid RE2 syntax'] });
  }
}

/** GitLab's `host_keys`: a bare key gets the URL's host (`[host]:port` off port 22); each must parse. */
function hostKeysToKnownHosts(keys: string[], masked: string): string {
  const host = knownHostsName(masked);
  return keys
    .map((raw) => {
      let key = raw.trim();
      // A form-encoded `+` arrives as a space inside the base64 blob.
      if (!sshFingerprint(key))
        key = key.replace(/(AAAA[A-Za-z0-9+/]*)((?: [A-Za-z0-9+/]+)+=*)$/, (m) => m.replace(/ /g, '+'));
      if (!sshFingerprint(key))
        throw new ApiError(400, { message: `Invalid SSH host key: ${raw.slice(0, 100)}` });
      const bare = /^(ssh-|ecdsa-|sk-)/.test(key);
      return bare ? `${host} ${key}` : key;
    })
    .join('\n');
}

/** A mirror's host key fingerprints, for the response. */
export function hostKeyFingerprints(knownHosts: string | null): string[] {
  if (!knownHosts) return [];
  return knownHosts
    .split('\n')
    .map((line) => sshFingerprint(line))
    .filter((print): print is string => print !== null);
}

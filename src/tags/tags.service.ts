import type { DataSource } from 'typeorm';
import type { components, operations } from '../../generated/openapi.js';
import { canProject } from '../core/abilities.js';
import { canAdminProtectedRefs } from '../protected_branches/abilities.js';
import type { Caller } from '../core/auth.js';
import { ApiError, forbidden, notFound } from '../core/errors.js';
import { offsetHeaders, perPageOf, type Page, type RequestInfo } from '../core/pagination.js';
import type { GitCommit } from '../git/commits.js';
import { refPatternMatches, ZERO_SHA } from '../git/ref-changes.js';
import {
  RefUpdateRefused,
  type OpenRepository,
  type RepositoriesService,
} from '../repository/repositories.service.js';
import { ProtectedTag } from '../protected_tags/protected-tag.entity.js';
import type { CoreDeps } from '../core/family.js';
import { User } from '../users/user.entity.js';
import { isValidTagName } from '../git/ref-names.js';
import type { GitRepository } from '../git/repository.js';
import {
  cmsSignatureVerifies,
  cmsSigningCertificate,
  pgpIssuerKeyId,
  signatureType,
  type CertificateInfo,
} from '../git/signatures/tag-signature.js';
import type { GitTag } from '../git/tags.js';
import type { ProjectView } from '../projects/projects.service.js';
import { searchTags } from './tag-search.js';

export type ListTagsParams = NonNullable<operations['listRepositoryTags']['parameters']['query']>;
export type CreateTagParams = components['schemas']['TagCreate'];

/** A tag with what its JSON shows besides git's own fields. */
export interface TagView extends GitTag {
  commit: GitCommit | null;
  protected: boolean;
}

export type TagSignatureView =
  | { type: 'X509'; verified: boolean; certificate: CertificateInfo | null }
  | { type: 'PGP'; keyId: string | null }
  | { type: 'SSH' };

/** GitLab answers every failed tag creation with 405 and the reason. */
const notCreated = (message: string) => new ApiError(405, { message });

/** GitLab's messages for tag names its pre-receive checks refuse. */
const SHA_LIKE_NAME = 'You cannot create a tag with a SHA-1 or SHA-256 tag name.';
const DEFAULT_BRANCH_NAME = 'You cannot use default branch name to create a tag';

/** Keeps a tagger identity within what a git tag header can hold. */
const headerSafe = (text: string) => text.replace(/[<>\n\r\0]/g, '').trim();

export class TagsService {
  private readonly dataSource: DataSource;

  constructor(
    deps: CoreDeps,
    private readonly repositories: RepositoriesService,
  ) {
    this.dataSource = deps.dataSource;
  }

  async list(
    caller: Caller,
    view: ProjectView,
    params: ListTagsParams,
    request: RequestInfo,
  ): Promise<{ repository: OpenRepository; page: Page<TagView> }> {
    const repository = this.repositories.open(view);
    const names = searchTags(
      await repository.git.tagNames(params.order_by ?? 'updated', params.sort !== 'asc'),
      params.search,
    );
    const perPage = perPageOf(params);
    const pageNumber = Math.max(params.page ?? 1, 1);
    const pageNames = names.slice((pageNumber - 1) * perPage, pageNumber * perPage);
    const items = await this.views(repository, pageNames);
    return {
      repository,
      page: { items, headers: offsetHeaders(names.length, pageNumber, perPage, request) },
    };
  }

  async find(
    caller: Caller,
    view: ProjectView,
    name: string,
  ): Promise<{ repository: OpenRepository; tag: TagView }> {
    const repository = this.repositories.open(view);
    const [tag] = await this.views(repository, [name]);
    if (!tag) throw notFound('Tag');
    return { repository, tag };
  }

  /** Creates a lightweight or (with a message) annotated tag through the push rules. */
  async create(
    caller: Caller,
    view: ProjectView,
    params: CreateTagParams,
  ): Promise<{ repository: OpenRepository; tag: TagView }> {
    const repository = this.repositories.open(view);
    const { git } = repository;
    const name = params.tag_name;
    if (!params.ref) throw notCreated('Target is empty');
    if (!isValidTagName(name)) throw notCreated('Tag name invalid');
    if ((await git.tags([name])).has(name)) throw notCreated(`Tag ${name} already exists`);
    const commit = await git.resolveCommit(params.ref);
    if (!commit) throw notCreated(`Target ${params.ref} is invalid`);
    if (/^(?:[0-9a-f]{40}|[0-9a-f]{64})/.test(name)) throw notCreated(SHA_LIKE_NAME);
    if (name === view.project.defaultBranch) throw notCreated(DEFAULT_BRANCH_NAME);

    const message = params.message?.trim();
    const target = message ? await this.writeTagObject(git, caller, name, commit, message) : commit;
    try {
      await this.repositories.updateRefs(caller, repository, [
        { ref: `refs/tags/${name}`, oldSha: ZERO_SHA, newSha: target },
      ]);
    } catch (err) {
      if (!(err instanceof RefUpdateRefused)) throw err;
      throw notCreated(err.conflict ? `Tag ${name} already exists` : err.reason);
    }
    const [tag] = await this.views(repository, [name]);
    return { repository, tag };
  }

  /** Deletes a tag: Developer or higher, and Maintainer or higher for a protected one. */
  async delete(caller: Caller, view: ProjectView, name: string): Promise<void> {
    const repository = this.repositories.open(view);
    const tag = (await repository.git.tags([name])).get(name);
    if (!tag) throw notFound('Tag');
    const { project, accessLevel } = repository.view;
    const subject = { visibilityLevel: project.visibilityLevel, accessLevel, archived: project.archived };
    if (!canProject(caller, 'push_code', subject)) throw forbidden();
    const maintainer = canAdminProtectedRefs(caller, accessLevel);
    if (!maintainer && (await this.protectedPatterns(repository)).some((p) => refPatternMatches(p, name)))
      throw forbidden();
    try {
      await this.repositories.updateRefs(caller, repository, [
        { ref: `refs/tags/${name}`, oldSha: tag.target, newSha: ZERO_SHA },
      ]);
    } catch (err) {
      if (!(err instanceof RefUpdateRefused)) throw err;
      throw new ApiError(400, { message: err.reason });
    }
  }

  /** The signature of a signed annotated tag; 404 for a missing tag or one without a signature. */
  async signature(caller: Caller, view: ProjectView, name: string): Promise<TagSignatureView> {
    const repository = this.repositories.open(view);
    const tag = (await repository.git.tags([name])).get(name);
    if (!tag) throw notFound('Tag');
    const type = tag.signature ? signatureType(tag.signature) : null;
    if (!tag.signature || !type) throw notFound('Signature');
    if (type === 'PGP') return { type, keyId: pgpIssuerKeyId(tag.signature) };
    if (type === 'SSH') return { type };
    const certificate = cmsSigningCertificate(tag.signature);
    return { type, certificate, verified: await this.x509Verified(repository, tag, certificate) };
  }

  /**
   * GitLab's rule: a valid signature by a trusted certificate whose email is the tagger's, and a
   * confirmed user with that email.
   */
  private async x509Verified(
    repository: OpenRepository,
    tag: GitTag,
    certificate: CertificateInfo | null,
  ): Promise<boolean> {
    const email = tag.taggerEmail?.toLowerCase();
    if (!certificate?.email || !email || certificate.email.toLowerCase() !== email) return false;
    const user = await this.dataSource
      .getRepository(User)
      .createQueryBuilder('u')
      .where('lower(u.email) = :email', { email })
      .andWhere('u.confirmed_at IS NOT NULL')
      .getOne();
    if (!user) return false;
    const raw = await repository.git.readTagObject(tag.target);
    const signature = Buffer.from(tag.signature!, 'utf8');
    const at = raw.lastIndexOf(signature);
    if (at < 0) return false;
    return cmsSignatureVerifies(tag.signature!, raw.subarray(0, at));
  }

  /** Tags by name, in the order given, with their commits read in one call; missing names are left out. */
  private async views(repository: OpenRepository, names: string[]): Promise<TagView[]> {
    const tags = await repository.git.tags(names);
    const commitIds = [...tags.values()].map((tag) => tag.commitId).filter((id): id is string => !!id);
    const [commits, patterns] = await Promise.all([
      repository.git.commits(commitIds),
      tags.size > 0 ? this.protectedPatterns(repository) : Promise.resolve([]),
    ]);
    return names
      .map((name) => tags.get(name))
      .filter((tag): tag is GitTag => tag !== undefined)
      .map((tag) => ({
        ...tag,
        commit: (tag.commitId && commits.get(tag.commitId)) || null,
        protected: patterns.some((pattern) => refPatternMatches(pattern, tag.name)),
      }));
  }

  private async protectedPatterns(repository: OpenRepository): Promise<string[]> {
    const rules = await this.dataSource
      .getRepository(ProtectedTag)
      .find({ select: { name: true }, where: { projectId: repository.view.project.id } });
    return rules.map((rule) => rule.name);
  }

  /** An annotated tag object by the caller, now; not yet referenced by any ref. */
  private async writeTagObject(
    git: GitRepository,
    caller: Caller,
    name: string,
    commit: string,
    message: string,
  ): Promise<string> {
    const user = caller.user!;
    const tagger = `${headerSafe(user.name) || user.username} <${headerSafe(user.email)}> ${Math.floor(Date.now() / 1000)} +0000`;
    const content = `object ${commit}\ntype commit\ntag ${name}\ntagger ${tagger}\n\n${message}\n`;
    return git.writeTag(content);
  }
}

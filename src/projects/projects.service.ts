import crypto from 'node:crypto';
import { QueryFailedError, type DataSource, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import type { operations } from '../../generated/openapi.js';
import type { Config } from '../config.js';
import {
  canSee,
  canReadStatistics,
  groupAccessLevel,
  isAdmin,
  projectAccess,
  projectAccessLevels,
  projectMembershipSql,
  Visibility,
  visibilityName,
  whereProjectVisible,
} from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import {
  badParameter,
  forbidden,
  methodNotAllowed,
  notFound,
  unauthorized,
  validationFailed,
} from '../core/errors.js';
import { isKeyset, paginateKeyset, paginateOffset, type Page, type RequestInfo } from '../core/pagination.js';
import { AccessLevel, Member } from '../members/member.entity.js';
import { Namespace } from '../namespaces/namespace.entity.js';
import type { ServiceDeps } from '../services.js';
import { ProjectCustomAttribute } from './custom-attribute.entity.js';
import { ProjectStatistics } from './project-statistics.entity.js';
import { Project } from './project.entity.js';
import { settingsFromParams } from './project-settings.js';

export type ListProjectsParams = NonNullable<operations['listProjects']['parameters']['query']>;
export type CreateProjectParams = NonNullable<
  operations['createProject']['requestBody']
>['content']['application/json'];

/** A project as one caller sees it: what the presenter needs to decide which fields to show. */
export interface ProjectView {
  project: Project & { namespace: Namespace };
  accessLevel: number;
  /** Present when an administrator asked for them. */
  customAttributes?: ProjectCustomAttribute[];
  /** Direct and inherited levels, known when a single project was loaded. */
  projectAccess?: number;
  groupAccess?: number;
  showStatistics: boolean;
}

const ADMIN_ORDERS = new Set(['repository_size', 'storage_size', 'packages_size', 'wiki_size']);
const ORDER_COLUMNS: Record<string, string> = {
  id: 'p.id',
  name: 'p.name',
  path: 'p.path',
  created_at: 'p.created_at',
  updated_at: 'p.updated_at',
  star_count: 'p.star_count',
  last_activity_at: 'p.last_activity_at',
  repository_size: 'st.repository_size',
  storage_size: 'st.storage_size',
  packages_size: 'st.packages_size',
  wiki_size: 'st.wiki_size',
};

const PATH_PATTERN = /^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$/;
const PATH_MESSAGE =
  "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', '.', end in '.git' or end in '.atom'";
const NAME_PATTERN = /^[\p{L}\p{N}\p{Emoji_Presentation}_][\p{L}\p{N}\p{Emoji_Presentation}_.+\- ]*$/u;
const NAME_MESSAGE =
  "can contain only letters, digits, emoji, '_', '.', '+', dashes, or spaces. It must start with a letter, digit, emoji, or '_'.";

const escapeLike = (term: string) => term.replace(/[\\%_]/g, (c) => `\\${c}`);

export function pathFromName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
}

export class ProjectsService {
  private readonly dataSource: DataSource;
  private readonly config: Config;

  constructor(deps: ServiceDeps) {
    this.dataSource = deps.dataSource;
    this.config = deps.config;
  }

  private baseQuery(manager: EntityManager = this.dataSource.manager): SelectQueryBuilder<Project> {
    return manager
      .getRepository(Project)
      .createQueryBuilder('p')
      .innerJoinAndSelect('p.namespace', 'n')
      .leftJoinAndSelect('n.owner', 'owner');
  }

  /** One project by integer id or full path; 404 unless the caller may see it. */
  async find(
    caller: Caller,
    id: string | number,
    options: { statistics?: boolean; customAttributes?: boolean } = {},
  ): Promise<ProjectView> {
    const query = this.baseQuery();
    const key = String(id);
    if (/^\d+$/.test(key)) query.where('p.id = :id', { id: Number(key) });
    else {
      const slash = key.lastIndexOf('/');
      if (slash <= 0) throw notFound('Project');
      query
        .where('lower(n.full_path) = lower(:namespacePath)', { namespacePath: key.slice(0, slash) })
        .andWhere('lower(p.path) = lower(:projectPath)', { projectPath: key.slice(slash + 1) });
    }
    if (options.statistics) query.leftJoinAndSelect('p.statistics', 'st');
    const project = (await query.getOne()) as ProjectView['project'] | null;
    if (!project || (project.markedForDeletionAt && !isAdmin(caller))) throw notFound('Project');
    const access = await projectAccess(this.dataSource.manager, caller, project);
    if (!canSee(caller, { visibilityLevel: project.visibilityLevel, accessLevel: access.level }))
      throw notFound('Project');
    const customAttributes =
      options.customAttributes && isAdmin(caller)
        ? ((await this.customAttributes([project.id])).get(project.id) ?? [])
        : undefined;
    return {
      project,
      accessLevel: access.level,
      projectAccess: access.project,
      groupAccess: access.group,
      customAttributes,
      showStatistics: Boolean(options.statistics) && canReadStatistics(caller, access.level),
    };
  }

  /** The custom attributes of many projects in one query, ordered by key. */
  async customAttributes(projectIds: number[]): Promise<Map<number, ProjectCustomAttribute[]>> {
    const byProject = new Map<number, ProjectCustomAttribute[]>();
    if (projectIds.length === 0) return byProject;
    const attributes = await this.dataSource
      .getRepository(ProjectCustomAttribute)
      .createQueryBuilder('a')
      .where('a.project_id IN (:...projectIds)', { projectIds })
      .orderBy('a.key', 'ASC')
      .getMany();
    for (const attribute of attributes) {
      const list = byProject.get(attribute.projectId);
      if (list) list.push(attribute);
      else byProject.set(attribute.projectId, [attribute]);
    }
    return byProject;
  }

  async list(caller: Caller, params: ListProjectsParams, request: RequestInfo): Promise<Page<ProjectView>> {
    const admin = isAdmin(caller);
    const query = whereProjectVisible(this.baseQuery(), caller, 'p', 'n');
    if (caller.user) query.setParameter('callerId', caller.user.id);
    const isMember = projectMembershipSql('p', 'n');

    if (params.archived !== undefined)
      query.andWhere('p.archived = :archived', { archived: params.archived });
    if (params.visibility)
      query.andWhere('p.visibility_level = :visibility', { visibility: Visibility[params.visibility] });
    if (params.id_after !== undefined) query.andWhere('p.id > :idAfter', { idAfter: params.id_after });
    if (params.id_before !== undefined) query.andWhere('p.id < :idBefore', { idBefore: params.id_before });
    if (params.last_activity_after)
      query.andWhere('p.last_activity_at > :activityAfter', { activityAfter: params.last_activity_after });
    if (params.last_activity_before) {
      query.andWhere('p.last_activity_at < :activityBefore', { activityBefore: params.last_activity_before });
    }
    if (params.imported !== undefined)
      query.andWhere(params.imported ? 'p.import_type IS NOT NULL' : 'p.import_type IS NULL');
    if (!(admin && params.include_pending_delete)) query.andWhere('p.marked_for_deletion_at IS NULL');
    if (admin && params.custom_attributes) {
      Object.entries(params.custom_attributes).forEach(([key, value], index) => {
        query.andWhere(
          `EXISTS (SELECT 1 FROM project_custom_attributes ca
             WHERE ca.project_id = p.id AND ca.key = :caKey${index} AND ca.value = :caValue${index})`,
          { [`caKey${index}`]: key, [`caValue${index}`]: value },
        );
      });
    }
    if (admin && params.repository_storage)
      query.andWhere('p.repository_storage = :storage', { storage: params.repository_storage });
    // No repository checksums are verified here, so none has failed.
    if (params.repository_checksum_failed) query.andWhere('FALSE');
    if (params.with_issues_enabled)
      query.andWhere(`COALESCE((p.settings->>'issues_enabled')::boolean, TRUE)`);
    if (params.with_merge_requests_enabled)
      query.andWhere(`COALESCE((p.settings->>'merge_requests_enabled')::boolean, TRUE)`);
    if (params.topic) {
      const topics = params.topic
        .split(',')
        .map((t) => t.trim().toLowerCase())
        .filter(Boolean);
      if (topics.length)
        query.andWhere('ARRAY(SELECT lower(t) FROM unnest(p.topics) t) @> CAST(:topics AS text[])', {
          topics,
        });
    }

    const needsUser = params.membership || params.owned || params.min_access_level !== undefined;
    if (needsUser && !caller.user) throw unauthorized();
    if (params.owned) query.andWhere(`n.kind = 'user' AND n.owner_id = :callerId`);
    if (params.membership) query.andWhere(isMember);
    if (params.min_access_level !== undefined) {
      query.andWhere(projectMembershipSql('p', 'n', true), { minAccess: params.min_access_level });
    }

    const terms = (params.search ?? '').split(/\s+/).filter(Boolean);
    terms.forEach((term, index) => {
      const fields = [
        'p.path',
        'p.name',
        'p.description',
        ...(params.search_namespaces ? ['n.full_path'] : []),
      ];
      query.andWhere(`(${fields.map((f) => `${f} ILIKE :term${index}`).join(' OR ')})`, {
        [`term${index}`]: `%${escapeLike(term)}%`,
      });
    });

    let orderBy = params.order_by ?? 'created_at';
    if (ADMIN_ORDERS.has(orderBy) && !admin) orderBy = 'created_at';
    if (orderBy === 'similarity' && terms.length === 0) orderBy = 'created_at';
    const direction = (params.sort ?? 'desc').toUpperCase() as 'ASC' | 'DESC';
    if (isKeyset(params) && orderBy !== 'id') {
      throw methodNotAllowed('Keyset pagination is not yet available for this type of request');
    }
    if (orderBy === 'similarity') {
      if (caller.user) query.andWhere(isMember);
      const term = params.search!.trim().toLowerCase();
      query
        .addSelect(
          `CASE WHEN lower(p.path) = :simExact THEN 3 WHEN lower(p.name) LIKE :simPrefix THEN 2 ELSE 1 END`,
          'similarity',
        )
        .setParameters({ simExact: term, simPrefix: `${escapeLike(term)}%` })
        .orderBy('similarity', direction);
    } else {
      if (ADMIN_ORDERS.has(orderBy)) query.leftJoin('p.statistics', 'st');
      query.orderBy(ORDER_COLUMNS[orderBy], direction);
    }
    if (orderBy !== 'id') query.addOrderBy('p.id', direction);
    if (params.statistics) query.leftJoinAndSelect('p.statistics', 'stats');

    const page = isKeyset(params)
      ? await paginateKeyset(query, params, request, (last): Record<string, string> =>
          direction === 'ASC' ? { id_after: String(last.id) } : { id_before: String(last.id) },
        )
      : await paginateOffset(query, params, request);
    const ids = page.items.map((project) => project.id);
    const levels = await projectAccessLevels(this.dataSource.manager, caller, ids);
    const attributes = params.with_custom_attributes && admin ? await this.customAttributes(ids) : undefined;
    return {
      headers: page.headers,
      items: page.items.map((project) => {
        const accessLevel = levels.get(project.id)?.level ?? 0;
        return {
          project: project as ProjectView['project'],
          accessLevel,
          customAttributes: attributes ? (attributes.get(project.id) ?? []) : undefined,
          showStatistics: Boolean(params.statistics) && canReadStatistics(caller, accessLevel),
        };
      }),
    };
  }

  async create(caller: Caller, params: CreateProjectParams): Promise<ProjectView> {
    const user = caller.user;
    if (!user) throw unauthorized();
    if (!params.name && !params.path) {
      throw badParameter('name, path are missing, at least one parameter must be provided');
    }
    const name = params.name || params.path!;
    const path = params.path || pathFromName(params.name!);
    const errors: Record<string, string[]> = {};
    if (!PATH_PATTERN.test(path) || /\.(git|atom)$/.test(path)) errors.path = [PATH_MESSAGE];
    if (!NAME_PATTERN.test(name)) errors.name = [NAME_MESSAGE];
    if (Object.keys(errors).length) throw validationFailed(errors);

    return this.dataSource.transaction(async (tx) => {
      const namespace = await this.targetNamespace(tx, caller, params.namespace_id);
      const visibilityLevel = Visibility[params.visibility ?? 'private'];
      if (visibilityLevel > namespace.visibilityLevel) {
        throw validationFailed({
          visibility_level: [
            `${params.visibility} is not allowed in a ${visibilityName(namespace.visibilityLevel)} group.`,
          ],
        });
      }
      const taken = await tx
        .getRepository(Project)
        .createQueryBuilder('p')
        .where('p.namespace_id = :ns', { ns: namespace.id })
        .andWhere('(lower(p.path) = lower(:path) OR lower(p.name) = lower(:name))', { path, name })
        .getMany();
      const conflicts: Record<string, string[]> = {};
      if (taken.some((p) => p.path.toLowerCase() === path.toLowerCase()))
        conflicts.path = ['has already been taken'];
      if (taken.some((p) => p.name.toLowerCase() === name.toLowerCase()))
        conflicts.name = ['has already been taken'];
      if (Object.keys(conflicts).length) throw validationFailed(conflicts);

      const projects = tx.getRepository(Project);
      let project: Project;
      try {
        project = await projects.save(
          projects.create({
            namespaceId: namespace.id,
            name,
            path,
            description: params.description ?? null,
            defaultBranch: params.default_branch ?? 'main',
            visibilityLevel,
            creatorId: user.id,
            topics: dedupeTopics(params.topics ?? params.tag_list ?? []),
            settings: settingsFromParams(params as Record<string, unknown>),
            runnersToken: `GR1348941${crypto.randomBytes(15).toString('base64url')}`,
          }),
        );
      } catch (err) {
        // A concurrent create took the path between our check and the insert.
        if (err instanceof QueryFailedError && (err.driverError as { code?: string })?.code === '23505') {
          throw validationFailed({ path: ['has already been taken'] });
        }
        throw err;
      }
      await tx.getRepository(ProjectStatistics).insert({ projectId: project.id });
      if (namespace.kind === 'user') {
        await tx.getRepository(Member).insert({
          sourceType: 'Project',
          sourceId: project.id,
          userId: namespace.ownerId!,
          accessLevel: AccessLevel.Owner,
        });
      }
      const created = (await this.baseQuery(tx)
        .where('p.id = :id', { id: project.id })
        .getOneOrFail()) as ProjectView['project'];
      const access = await projectAccess(tx, caller, created);
      return {
        project: created,
        accessLevel: access.level,
        projectAccess: access.project,
        groupAccess: access.group,
        showStatistics: false,
      };
    });
  }

  /** The namespace to create in: the caller's own, or a group where the caller is Developer or above. */
  private async targetNamespace(
    tx: EntityManager,
    caller: Caller,
    namespaceId: number | undefined,
  ): Promise<Namespace> {
    const user = caller.user!;
    const namespaces = tx.getRepository(Namespace);
    if (namespaceId === undefined) {
      const own = await namespaces.findOne({ where: { ownerId: user.id, kind: 'user' } });
      if (!own) throw notFound('Namespace');
      return own;
    }
    const namespace = await namespaces.findOne({ where: { id: namespaceId } });
    if (!namespace) throw notFound('Namespace');
    if (user.admin) return namespace;
    if (namespace.kind === 'user') {
      if (namespace.ownerId === user.id) return namespace;
      throw notFound('Namespace');
    }
    const level = await groupAccessLevel(tx, caller, namespace);
    if (level === 0 && namespace.visibilityLevel < Visibility.internal) throw notFound('Namespace');
    if (level < AccessLevel.Developer) throw forbidden();
    return namespace;
  }
}

function dedupeTopics(topics: string[]): string[] {
  const seen = new Set<string>();
  return topics
    .flatMap((t) => t.split(','))
    .map((t) => t.trim())
    .filter((t) => t && !seen.has(t.toLowerCase()) && seen.add(t.toLowerCase()));
}

/**
 * A project's CI/CD job token scope (`/projects/:id/job_token_scope`): whether it limits which projects'
 * job tokens reach it (`inbound_enabled`), and its allowlists of projects and groups.
 */
import type { DataSource } from 'typeorm';
import type { Caller } from '../core/auth.js';
import { badParameter } from '../core/errors.js';
import { paginateOffset, type Page, type PageParams, type RequestInfo } from '../core/pagination.js';
import type { GroupsService } from '../groups/groups.service.js';
import { Namespace } from '../namespaces/namespace.entity.js';
import { Project } from '../projects/project.entity.js';
import type { ProjectsService, ProjectView } from '../projects/projects.service.js';

export class JobTokenScopeService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly projects: ProjectsService,
    private readonly groups: GroupsService,
  ) {}

  async settings(view: ProjectView): Promise<{ inbound_enabled: boolean; outbound_enabled: boolean }> {
    const rows: Array<{ inbound_enabled: boolean }> = await this.dataSource.query(
      'SELECT inbound_enabled FROM ci_job_token_scope_settings WHERE project_id = $1',
      [view.project.id],
    );
    return { inbound_enabled: rows[0]?.inbound_enabled ?? true, outbound_enabled: false };
  }

  async setInbound(view: ProjectView, enabled: boolean): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO ci_job_token_scope_settings (project_id, inbound_enabled) VALUES ($1, $2)
       ON CONFLICT (project_id) DO UPDATE SET inbound_enabled = EXCLUDED.inbound_enabled`,
      [view.project.id, enabled],
    );
  }

  /** The allowlisted projects and the project itself (GitLab lists it too), by id. */
  async projectAllowlist(
    view: ProjectView,
    params: PageParams,
    request: RequestInfo,
  ): Promise<Page<Project & { namespace: Namespace }>> {
    const query = this.dataSource
      .getRepository(Project)
      .createQueryBuilder('p')
      .innerJoinAndSelect('p.namespace', 'n')
      .where(
        `p.id = :id OR p.id IN (SELECT target_project_id FROM ci_job_token_project_scope_links WHERE source_project_id = :id)`,
        { id: view.project.id },
      )
      .orderBy('p.id', 'ASC');
    return paginateOffset(query, params, request) as Promise<Page<Project & { namespace: Namespace }>>;
  }

  async addProject(
    caller: Caller,
    view: ProjectView,
    targetId: number,
  ): Promise<{ source_project_id: number; target_project_id: number }> {
    const target = await this.projects.find(caller, targetId);
    // The project itself is always in its scope: refused before anything is written.
    if (target.project.id === view.project.id)
      throw badParameter('Target project is already in the job token scope');
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO ci_job_token_project_scope_links (source_project_id, target_project_id, added_by_id)
       VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1`,
      [view.project.id, target.project.id, caller.user?.id ?? null],
    );
    if (rows.length === 0) throw badParameter('Target project is already in the job token scope');
    return { source_project_id: view.project.id, target_project_id: target.project.id };
  }

  /** Answers false when the project was not on the allowlist. */
  async removeProject(view: ProjectView, targetId: number): Promise<boolean> {
    const rows: Array<{ n: number }> = await this.dataSource.query(
      `WITH d AS (DELETE FROM ci_job_token_project_scope_links WHERE source_project_id = $1 AND target_project_id = $2
                  RETURNING 1) SELECT count(*)::int AS n FROM d`,
      [view.project.id, targetId],
    );
    return rows[0].n > 0;
  }

  async groupAllowlist(
    view: ProjectView,
    params: PageParams,
    request: RequestInfo,
  ): Promise<Page<Namespace>> {
    const query = this.dataSource
      .getRepository(Namespace)
      .createQueryBuilder('g')
      .where(
        `g.id IN (SELECT target_group_id FROM ci_job_token_group_scope_links WHERE source_project_id = :id)`,
        { id: view.project.id },
      )
      .orderBy('g.id', 'ASC');
    return paginateOffset(query, params, request);
  }

  async addGroup(
    caller: Caller,
    view: ProjectView,
    groupId: number,
  ): Promise<{ source_project_id: number; target_group_id: number }> {
    const group = await this.groups.find(caller, groupId);
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO ci_job_token_group_scope_links (source_project_id, target_group_id, added_by_id)
       VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1`,
      [view.project.id, group.group.id, caller.user?.id ?? null],
    );
    if (rows.length === 0) throw badParameter('Target group is already in the job token scope');
    return { source_project_id: view.project.id, target_group_id: group.group.id };
  }

  async removeGroup(view: ProjectView, groupId: number): Promise<boolean> {
    const rows: Array<{ n: number }> = await this.dataSource.query(
      `WITH d AS (DELETE FROM ci_job_token_group_scope_links WHERE source_project_id = $1 AND target_group_id = $2
                  RETURNING 1) SELECT count(*)::int AS n FROM d`,
      [view.project.id, groupId],
    );
    return rows[0].n > 0;
  }
}

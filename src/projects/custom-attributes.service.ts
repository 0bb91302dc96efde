import type { DataSource } from 'typeorm';
import { isAdmin } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { forbidden, notFound } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import { ProjectCustomAttribute } from './custom-attribute.entity.js';
import type { ProjectsService } from './projects.service.js';

export type CustomAttributeFields = Pick<ProjectCustomAttribute, 'key' | 'value'>;

/** Custom attributes of projects: administrators only, as in GitLab. */
export class ProjectCustomAttributesService {
  private readonly dataSource: DataSource;

  constructor(
    deps: CoreDeps,
    private readonly projects: ProjectsService,
  ) {
    this.dataSource = deps.dataSource;
  }

  private async projectFor(caller: Caller, id: string | number): Promise<number> {
    if (!isAdmin(caller)) throw forbidden();
    return (await this.projects.find(caller, id)).project.id;
  }

  async list(caller: Caller, id: string | number): Promise<ProjectCustomAttribute[]> {
    const projectId = await this.projectFor(caller, id);
    return (await this.projects.customAttributes([projectId])).get(projectId) ?? [];
  }

  async get(caller: Caller, id: string | number, key: string): Promise<ProjectCustomAttribute> {
    const projectId = await this.projectFor(caller, id);
    const attribute = await this.dataSource
      .getRepository(ProjectCustomAttribute)
      .findOneBy({ projectId, key });
    if (!attribute) throw notFound('Custom Attribute');
    return attribute;
  }

  /** Creates or replaces, in one statement, so concurrent sets of a key cannot collide. */
  async set(caller: Caller, id: string | number, key: string, value: string): Promise<CustomAttributeFields> {
    const projectId = await this.projectFor(caller, id);
    const rows: CustomAttributeFields[] = await this.dataSource.query(
      `INSERT INTO project_custom_attributes (project_id, key, value) VALUES ($1, $2, $3)
       ON CONFLICT (project_id, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
       RETURNING key, value`,
      [projectId, key, value],
    );
    return rows[0];
  }

  async delete(caller: Caller, id: string | number, key: string): Promise<void> {
    const projectId = await this.projectFor(caller, id);
    const result = await this.dataSource.getRepository(ProjectCustomAttribute).delete({ projectId, key });
    if (!result.affected) throw notFound('Custom Attribute');
  }
}

import type { DataSource, EntityManager } from 'typeorm';
import { GROUP_SETTING_DEFAULTS, newRunnersToken, type GroupSettings } from '../groups/group-settings.js';
import type { CoreDeps } from '../core/family.js';
import { Namespace } from './namespace.entity.js';

export interface NewGroup {
  name: string;
  path: string;
  parentId?: number | null;
  visibilityLevel: number;
  description?: string;
  /** Resolved group settings; GitLab's defaults when left out. */
  settings?: GroupSettings;
}

export class NamespacesService {
  private readonly dataSource: DataSource;

  constructor(deps: CoreDeps) {
    this.dataSource = deps.dataSource;
  }

  /** A group under an optional parent, with its full path, full name and traversal ids derived. */
  createGroup(attrs: NewGroup, manager: EntityManager = this.dataSource.manager): Promise<Namespace> {
    return manager.transaction(async (tx) => {
      const namespaces = tx.getRepository(Namespace);
      const parent = attrs.parentId ? await namespaces.findOneByOrFail({ id: attrs.parentId }) : null;
      const group = await namespaces.save(
        namespaces.create({
          name: attrs.name,
          path: attrs.path,
          kind: 'group',
          parentId: parent?.id ?? null,
          fullPath: parent ? `${parent.fullPath}/${attrs.path}` : attrs.path,
          fullName: parent ? `${parent.fullName} / ${attrs.name}` : attrs.name,
          visibilityLevel: attrs.visibilityLevel,
          description: attrs.description ?? '',
          settings: { ...(attrs.settings ?? GROUP_SETTING_DEFAULTS), runners_token: newRunnersToken() },
        }),
      );
      group.traversalIds = [...(parent?.traversalIds ?? []), group.id];
      await namespaces.update(group.id, { traversalIds: group.traversalIds });
      return group;
    });
  }

  /**
   * Gives a group a new name and path, and carries them into the full path and full name of every
   * group below it. Descendants' paths start with the group's old full path, so a prefix swap does.
   */
  async renameGroup(group: Namespace, name: string, path: string, manager: EntityManager): Promise<void> {
    const parent = group.parentId
      ? await manager.getRepository(Namespace).findOneByOrFail({ id: group.parentId })
      : null;
    const fullPath = parent ? `${parent.fullPath}/${path}` : path;
    const fullName = parent ? `${parent.fullName} / ${name}` : name;
    if (fullPath === group.fullPath && fullName === group.fullName) return;
    await manager.query(
      `UPDATE namespaces SET
         full_path = $2 || substr(full_path, length($3) + 1),
         full_name = $4 || substr(full_name, length($5) + 1)
       WHERE traversal_ids @> ARRAY[$1::int]`,
      [group.id, fullPath, group.fullPath, fullName, group.fullName],
    );
    Object.assign(group, { name, path, fullPath, fullName });
    await manager.update(Namespace, group.id, { name, path });
  }
}

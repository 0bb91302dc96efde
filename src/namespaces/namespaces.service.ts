import type { DataSource, EntityManager } from 'typeorm';
import type { ServiceDeps } from '../services.js';
import { Namespace } from './namespace.entity.js';

export interface NewGroup {
  name: string;
  path: string;
  parentId?: number | null;
  visibilityLevel: number;
  description?: string;
}

export class NamespacesService {
  private readonly dataSource: DataSource;

  constructor(deps: ServiceDeps) {
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
        }),
      );
      group.traversalIds = [...(parent?.traversalIds ?? []), group.id];
      await namespaces.update(group.id, { traversalIds: group.traversalIds });
      return group;
    });
  }
}

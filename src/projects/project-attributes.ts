/**
 * What other families add to projects. GitLab's project edit takes some attributes that belong to a
 * feature (the approval settings that `/projects/:id/approvals` also reads and writes); the family of
 * that feature keeps them and contributes them through two extension points, so that neither family
 * calls into the other by hand:
 * - `projectAttributes`, the settings half: it writes the edit's attributes it keeps;
 * - `projectFields`, the presenter half: it fills fields of each project's representation (CI or
 *   registry settings, plan limits), composed after the parts of project-fields.ts.
 */
import type { EntityManager } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import type { Contributions } from '../core/family.js';

/** Fields of the project's representation that a contribution fills. */
export type ContributedAttributes = Partial<components['schemas']['Project']>;

export interface ProjectAttributesContribution {
  /** Writes the edit's attributes that it keeps, in the transaction of the project's update. */
  write(tx: EntityManager, projectId: number, params: Record<string, unknown>): Promise<void>;
}

export interface ProjectFieldsContribution {
  /** What it shows in each project's representation, by project id (absent: the defaults). */
  read(manager: EntityManager, projectIds: number[]): Promise<Map<number, ContributedAttributes>>;
}

declare module '../core/family.js' {
  interface ContributionPoints {
    projectAttributes: ProjectAttributesContribution;
    projectFields: ProjectFieldsContribution;
  }
}

export async function writeContributedAttributes(
  contributions: Contributions,
  tx: EntityManager,
  projectId: number,
  params: Record<string, unknown>,
): Promise<void> {
  for (const contribution of contributions.of('projectAttributes'))
    await contribution.write(tx, projectId, params);
}

export async function readContributedFields(
  contributions: Contributions,
  manager: EntityManager,
  projectIds: number[],
): Promise<Map<number, ContributedAttributes>> {
  const byProject = new Map<number, ContributedAttributes>();
  if (projectIds.length === 0) return byProject;
  for (const contribution of contributions.of('projectFields'))
    for (const [id, attributes] of await contribution.read(manager, projectIds))
      byProject.set(id, { ...byProject.get(id), ...attributes });
  return byProject;
}

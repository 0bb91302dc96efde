/**
 * Project attributes that another family keeps. GitLab's project edit takes some attributes that belong
 * to a feature (the approval settings that `/projects/:id/approvals` also reads and writes); the family
 * of that feature keeps them and contributes them to the project's edit and representation through the
 * `projectAttributes` extension point, so that neither family calls into the other by hand.
 */
import type { EntityManager } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import type { Contributions } from '../core/family.js';

/** Fields of the project's representation that a contribution fills. */
export type ContributedAttributes = Partial<components['schemas']['Project']>;

export interface ProjectAttributesContribution {
  /** Writes the edit's attributes that it keeps, in the transaction of the project's update. */
  write(tx: EntityManager, projectId: number, params: Record<string, unknown>): Promise<void>;
  /** What it shows in each project's representation, by project id (absent: the defaults). */
  read(manager: EntityManager, projectIds: number[]): Promise<Map<number, ContributedAttributes>>;
}

declare module '../core/family.js' {
  interface ContributionPoints {
    projectAttributes: ProjectAttributesContribution;
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

export async function readContributedAttributes(
  contributions: Contributions,
  manager: EntityManager,
  projectIds: number[],
): Promise<Map<number, ContributedAttributes>> {
  const byProject = new Map<number, ContributedAttributes>();
  if (projectIds.length === 0) return byProject;
  for (const contribution of contributions.of('projectAttributes'))
    for (const [id, attributes] of await contribution.read(manager, projectIds))
      byProject.set(id, { ...byProject.get(id), ...attributes });
  return byProject;
}

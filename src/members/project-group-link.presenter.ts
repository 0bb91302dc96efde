import type { components } from '../../generated/openapi.js';
import type { ProjectGroupLink } from './project-group-link.entity.js';

export type ProjectGroupLinkJson = components['schemas']['ProjectGroupLink'];

export function presentProjectGroupLink(link: ProjectGroupLink): ProjectGroupLinkJson {
  return {
    id: link.id,
    project_id: link.projectId,
    group_id: link.groupId,
    group_access: link.groupAccess as ProjectGroupLinkJson['group_access'],
    expires_at: link.expiresAt,
  };
}

import type { components } from '../../generated/openapi.js';
import type { Namespace } from './namespace.entity.js';

export type NamespaceSummaryJson = components['schemas']['NamespaceSummary'];

export const namespaceWebUrl = (externalUrl: string, namespace: Namespace) =>
  namespace.kind === 'group'
    ? `${externalUrl}/groups/${namespace.fullPath}`
    : `${externalUrl}/${namespace.fullPath}`;

export function presentNamespaceSummary(namespace: Namespace, externalUrl: string): NamespaceSummaryJson {
  return {
    id: namespace.id,
    name: namespace.name,
    path: namespace.path,
    kind: namespace.kind,
    full_path: namespace.fullPath,
    parent_id: namespace.parentId,
    avatar_url: null,
    web_url: namespaceWebUrl(externalUrl, namespace),
  };
}

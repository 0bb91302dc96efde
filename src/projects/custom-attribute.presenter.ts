import type { components } from '../../generated/openapi.js';
import type { ProjectCustomAttribute } from './custom-attribute.entity.js';

export type CustomAttributeJson = components['schemas']['CustomAttribute'];

export const presentCustomAttribute = (
  attribute: Pick<ProjectCustomAttribute, 'key' | 'value'>,
): CustomAttributeJson => ({
  key: attribute.key,
  value: attribute.value,
});

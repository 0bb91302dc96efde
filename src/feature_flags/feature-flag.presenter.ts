import type { components } from '../../generated/openapi.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { FeatureFlag, FeatureFlagsClient, FeatureFlagUserList } from './feature-flag.entity.js';
import type { FlagRecords } from './feature-flags.service.js';

type UserListJson = components['schemas']['FeatureFlagUserList'];
type FlagJson = components['schemas']['FeatureFlag'];
type StrategyJson = components['schemas']['FeatureFlagStrategy'];
type ClientJson = components['schemas']['FeatureFlagsClient'];
type UnleashJson = components['schemas']['UnleashFeatures'];

export function presentUserList(list: FeatureFlagUserList, { project }: ProjectView): UserListJson {
  const path = `/${project.namespace.fullPath}/${project.path}/-/feature_flags_user_lists/${list.iid}`;
  return {
    id: list.id,
    iid: list.iid,
    project_id: list.projectId,
    name: list.name,
    user_xids: list.userXids,
    created_at: list.createdAt.toISOString(),
    updated_at: list.updatedAt.toISOString(),
    path,
    edit_path: `${path}/edit`,
  };
}

export function presentFeatureFlag(flag: FeatureFlag, records: FlagRecords): FlagJson {
  return {
    name: flag.name,
    description: flag.description,
    active: flag.active,
    version: 'new_version_flag',
    created_at: flag.createdAt.toISOString(),
    updated_at: flag.updatedAt.toISOString(),
    scopes: [],
    strategies: (records.strategies.get(flag.id) ?? []).map((strategy) => {
      const list = strategy.userListId === null ? undefined : records.userLists.get(strategy.userListId);
      const json: StrategyJson = {
        id: strategy.id,
        name: strategy.name as StrategyJson['name'],
        parameters: strategy.parameters as Record<string, string>,
        scopes: (records.scopes.get(strategy.id) ?? []).map((scope) => ({
          id: scope.id,
          environment_scope: scope.environmentScope,
        })),
      };
      if (list) json.user_list = { id: list.id, iid: list.iid, name: list.name, user_xids: list.userXids };
      return json;
    }),
  };
}

export const presentFeatureFlagsClient = (client: FeatureFlagsClient, externalUrl: string): ClientJson => ({
  unleash_api_url: `${externalUrl}/api/v4/feature_flags/unleash/${client.projectId}`,
  instance_id: client.token,
});

/** Unleash's shape: a `gitlabUserList` strategy becomes `userWithId` over the list's current ids. */
export function presentUnleashFeatures(records: FlagRecords): UnleashJson {
  return {
    version: 1,
    features: records.flags.map((flag) => ({
      name: flag.name,
      ...(flag.description === null ? {} : { description: flag.description }),
      enabled: flag.active,
      strategies: (records.strategies.get(flag.id) ?? []).map((strategy) => {
        if (strategy.name !== 'gitlabUserList')
          return { name: strategy.name, parameters: strategy.parameters };
        const list = strategy.userListId === null ? undefined : records.userLists.get(strategy.userListId);
        return { name: 'userWithId', parameters: { userIds: list?.userXids ?? '' } };
      }),
    })),
  };
}

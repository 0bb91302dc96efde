/**
 * GitLab's strategy validations (Operations::FeatureFlags::Strategy), with its full messages, and
 * GitLab's user id list rules (FeatureFlagUserXidsValidator).
 */
export const STRATEGY_NAMES = [
  'default',
  'gradualRolloutUserId',
  'userWithId',
  'flexibleRollout',
  'gitlabUserList',
] as const;

const PARAMETER_KEYS: Record<string, string[]> = {
  default: [],
  gradualRolloutUserId: ['groupId', 'percentage'],
  userWithId: ['userIds'],
  flexibleRollout: ['groupId', 'rollout', 'stickiness'],
  gitlabUserList: [],
};
const STICKINESS = ['default', 'userId', 'sessionId', 'random'];
const GROUP_ID = /^[a-z]{1,32}$/;
const PERCENT = /^(\d|[1-9]\d|100)$/;
export const USER_XID_MAX_LENGTH = 256;

const isString = (value: unknown): value is string => typeof value === 'string';

/** Valid as GitLab stores them: no empty, untrimmed, repeated or overlong id, no stray separators. */
export function validUserXids(value: unknown): boolean {
  if (!isString(value) || /[\n\r\t]|,,/.test(value)) return false;
  if (value === '') return true;
  const ids = value.split(',');
  return (
    new Set(ids).size === ids.length &&
    ids.every((id) => id.length > 0 && id.trim() === id && id.length <= USER_XID_MAX_LENGTH)
  );
}

/** Trimmed ids, empties and repeats dropped, order kept: what a list stores. */
export const normaliseUserXids = (value: string) =>
  [...new Set(value.split(',').map((id) => id.trim()))].filter(Boolean).join(',');

export const userXidsMessage = (attribute: string) =>
  `${attribute} must be a string of unique comma separated values each ${USER_XID_MAX_LENGTH} characters or less`;

export interface StrategyShape {
  name: string;
  parameters: Record<string, unknown>;
  userListId: number | null;
}

/** The full messages GitLab gives for one strategy (empty when valid). */
export function strategyErrors(strategy: StrategyShape): string[] {
  const { name, parameters, userListId } = strategy;
  if (!(STRATEGY_NAMES as readonly string[]).includes(name))
    return ['Strategies name strategy name is invalid'];
  const errors: string[] = [];
  const keys = Object.keys(parameters).sort();
  if (keys.join() !== [...PARAMETER_KEYS[name]].sort().join()) {
    errors.push('Strategies parameters parameters are invalid');
  } else if (name === 'gradualRolloutUserId') {
    if (!isString(parameters.percentage) || !PERCENT.test(parameters.percentage))
      errors.push('Strategies parameters percentage must be a string between 0 and 100 inclusive');
    if (!isString(parameters.groupId) || !GROUP_ID.test(parameters.groupId))
      errors.push('Strategies parameters groupId parameter is invalid');
  } else if (name === 'flexibleRollout') {
    if (!isString(parameters.rollout) || !PERCENT.test(parameters.rollout))
      errors.push('Strategies parameters rollout must be a string between 0 and 100 inclusive');
    if (!isString(parameters.groupId) || !GROUP_ID.test(parameters.groupId))
      errors.push('Strategies parameters groupId parameter is invalid');
    if (!isString(parameters.stickiness) || !STICKINESS.includes(parameters.stickiness))
      errors.push('Strategies parameters stickiness parameter must be default, userId, sessionId, or random');
  } else if (name === 'userWithId' && !validUserXids(parameters.userIds)) {
    errors.push(`Strategies parameters ${userXidsMessage('userIds')}`);
  }
  if (name === 'gitlabUserList' && userListId === null) errors.push("Strategies user list can't be blank");
  if (name !== 'gitlabUserList' && userListId !== null) errors.push('Strategies user list must be blank');
  return errors;
}

/** GitLab's `on_environment`: `*` matches anything, the rest literally. */
export function scopeMatches(scope: string, environment: string): boolean {
  if (scope === '*') return true;
  const pattern = scope
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`).test(environment);
}

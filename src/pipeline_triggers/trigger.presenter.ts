import type { components } from '../../generated/openapi.js';
import type { Caller } from '../core/auth.js';
import { presentUserSummary } from '../users/user.presenter.js';
import type { TriggerRecord } from './pipeline-triggers.service.js';

type TriggerJson = components['schemas']['PipelineTrigger'];

/** The token whole for its owner only; anyone else sees its first four characters, as GitLab shows it. */
export function presentTrigger(
  { trigger, token, owner }: TriggerRecord,
  caller: Caller,
  externalUrl: string,
): TriggerJson {
  const mine = caller.user !== null && caller.user.id === trigger.ownerId;
  return {
    id: trigger.id,
    description: trigger.description,
    created_at: trigger.createdAt.toISOString(),
    updated_at: trigger.updatedAt.toISOString(),
    last_used: trigger.lastUsed?.toISOString() ?? null,
    token: mine ? token : token.slice(0, 4),
    owner: owner ? presentUserSummary(owner, externalUrl) : null,
  };
}

import type { components } from '../../generated/openapi.js';
import type { PushRule } from './push-rule.entity.js';

export type PushRuleJson = components['schemas']['PushRule'];

export function presentPushRule(rule: PushRule): PushRuleJson {
  return {
    id: rule.id,
    project_id: rule.projectId,
    created_at: rule.createdAt.toISOString(),
    commit_message_regex: rule.commitMessageRegex,
    commit_message_negative_regex: rule.commitMessageNegativeRegex,
    branch_name_regex: rule.branchNameRegex,
    author_email_regex: rule.authorEmailRegex,
    file_name_regex: rule.fileNameRegex,
    deny_delete_tag: rule.denyDeleteTag,
    member_check: rule.memberCheck,
    commit_committer_check: rule.commitCommitterCheck,
    commit_committer_name_check: rule.commitCommitterNameCheck,
    reject_non_dco_commits: rule.rejectNonDcoCommits,
    max_file_size: rule.maxFileSize,
  };
}

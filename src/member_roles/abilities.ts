import { defineAbilities, type MemberRolePermission, type RoleGrant } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

/**
 * The abilities each flag of a custom role opens, on projects and on groups, whatever the membership's
 * base level. A flag whose family does not exist yet (CI/CD variables, runners, vulnerabilities, web
 * hooks, deploy tokens, compliance, Terraform state, security policies) names the ability that family
 * will declare, and grants it from the day it does.
 */
export const MEMBER_ROLE_GRANTS: Record<MemberRolePermission, RoleGrant> = {
  admin_cicd_variables: { project: ['admin_cicd_variables'], group: ['admin_cicd_variables'] },
  admin_compliance_framework: {
    project: ['admin_compliance_framework'],
    group: ['admin_compliance_framework'],
  },
  admin_group_member: { group: ['admin_group_member'] },
  // GitLab's policy: the role reads, comments on (and reacts to), opens, administers and approves merge requests.
  admin_merge_request: {
    project: [
      'read_merge_request',
      'read_code',
      'create_note',
      'award_emoji',
      'create_merge_request_from',
      'admin_merge_request',
      'approve_merge_request',
    ],
  },
  admin_push_rules: { project: ['admin_push_rules'], group: ['admin_push_rules'] },
  admin_terraform_state: { project: ['admin_terraform_state'] },
  admin_vulnerability: {
    project: ['admin_vulnerability', 'read_vulnerability'],
    group: ['admin_vulnerability', 'read_vulnerability'],
  },
  admin_web_hook: { project: ['admin_web_hook'], group: ['admin_web_hook'] },
  archive_project: { project: ['archive_project'] },
  manage_deploy_tokens: { project: ['manage_deploy_tokens'], group: ['manage_deploy_tokens'] },
  manage_group_access_tokens: { group: ['admin_group_access_token'] },
  manage_merge_request_settings: { project: ['manage_merge_request_settings'] },
  manage_project_access_tokens: { project: ['admin_project_access_token'] },
  manage_security_policy_link: {
    project: ['manage_security_policy_link'],
    group: ['manage_security_policy_link'],
  },
  read_code: { project: ['read_code'] },
  read_runners: { project: ['read_runners'], group: ['read_runners'] },
  read_dependency: { project: ['read_dependency'], group: ['read_dependency'] },
  read_vulnerability: { project: ['read_vulnerability'], group: ['read_vulnerability'] },
  remove_group: { group: ['remove_group'] },
  remove_project: { project: ['remove_project'] },
};

export const memberRolesAbilities = defineAbilities({
  group: {
    admin_member_role: { minimum: AccessLevel.Owner },
  },
  grants: MEMBER_ROLE_GRANTS,
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    member_roles: typeof memberRolesAbilities;
  }
}

/** GitLab's access levels: the roles a membership, a share or a protection entry carries. */
export const AccessLevel = {
  NoAccess: 0,
  MinimalAccess: 5,
  Guest: 10,
  Planner: 15,
  Reporter: 20,
  Developer: 30,
  Maintainer: 40,
  Owner: 50,
} as const;

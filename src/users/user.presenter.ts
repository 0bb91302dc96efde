import type { components } from '../../generated/openapi.js';
import type { User } from './user.entity.js';
import type { AccountView, UserView } from './users.service.js';

type Schemas = components['schemas'];
export type UserSummaryJson = Schemas['UserSummary'];
export type UserJson = Schemas['User'];
export type CurrentUserJson = Schemas['CurrentUser'];
export type UserWithAdminJson = Schemas['UserWithAdmin'];
export type UserDetailsWithAdminJson = Schemas['UserDetailsWithAdmin'];

/** GitLab's defaults; forge-api has no appearance settings. */
const DEFAULT_THEME_ID = 3;
const DEFAULT_COLOR_SCHEME_ID = 1;

export const userWebUrl = (externalUrl: string, user: Pick<User, 'username'>) =>
  `${externalUrl}/${user.username}`;

/** The user summary embedded in other resources. */
export function presentUserSummary(user: User, externalUrl: string): UserSummaryJson {
  return {
    id: user.id,
    name: user.name,
    username: user.username,
    state: user.state,
    locked: false,
    avatar_url: null,
    web_url: userWebUrl(externalUrl, user),
  };
}

/** `<job title> at <organization>`, or whichever is set. */
function workInformation(jobTitle: string, organization: string): string | null {
  if (jobTitle && organization) return `${jobTitle} at ${organization}`;
  return jobTitle || organization || null;
}

/** The public profile (`GET /users/:id` for callers who are not administrators). */
export function presentUser(view: UserView, externalUrl: string): UserJson {
  const { user } = view;
  const profile = user.profile ?? {};
  const jobTitle = profile.job_title ?? '';
  const organization = profile.organization ?? '';
  // Assignments, not spreads: V8 builds these objects from leading and conditional spreads some fifty
  // times slower, and `GET /user` is among the hottest requests.
  const json = presentUserSummary(user, externalUrl) as UserJson;
  if (view.profileVisible) json.created_at = user.createdAt.toISOString();
  Object.assign(json, {
    bio: profile.bio ?? '',
    location: profile.location ?? '',
    public_email: profile.public_email || null,
    skype: profile.skype ?? '',
    linkedin: profile.linkedin ?? '',
    twitter: profile.twitter ?? '',
    discord: profile.discord ?? '',
    website_url: profile.website_url ?? '',
    organization,
    job_title: jobTitle,
    pronouns: profile.pronouns || null,
    bot: user.bot,
    work_information: workInformation(jobTitle, organization),
  });
  if (view.profileVisible) Object.assign(json, { followers: 0, following: 0, is_followed: false });
  json.local_time = null;
  return json;
}

/** The user as they see themselves (`GET /user`). */
export function presentCurrentUser(view: AccountView, externalUrl: string): CurrentUserJson {
  const { user, facts } = view;
  return Object.assign(presentUser(view, externalUrl), {
    created_at: user.createdAt.toISOString(),
    last_sign_in_at: null,
    confirmed_at: user.confirmedAt ? user.confirmedAt.toISOString() : null,
    last_activity_on: user.lastActivityOn,
    email: user.email,
    theme_id: DEFAULT_THEME_ID,
    color_scheme_id: DEFAULT_COLOR_SCHEME_ID,
    projects_limit: user.projectsLimit,
    current_sign_in_at: null,
    identities: [],
    can_create_group: user.canCreateGroup,
    can_create_project: user.projectsLimit - facts.personalProjects > 0,
    two_factor_enabled: false,
    external: user.external,
    private_profile: user.privateProfile,
    commit_email: user.email,
  });
}

/** A user as administrators see them in lists, on creation and on update. */
export function presentUserWithAdmin(view: AccountView, externalUrl: string): UserWithAdminJson {
  const { user, facts } = view;
  return Object.assign(presentCurrentUser(view, externalUrl), {
    is_admin: user.admin,
    note: user.note,
    namespace_id: facts.namespaceId,
    created_by: facts.createdBy ? presentUserSummary(facts.createdBy, externalUrl) : null,
    email_reset_offered_at: null,
  });
}

/** A single user as administrators see them. */
export function presentUserDetailsWithAdmin(
  view: AccountView & { highestRole: number },
  externalUrl: string,
): UserDetailsWithAdminJson {
  return Object.assign(presentUserWithAdmin(view, externalUrl), {
    highest_role: view.highestRole as UserDetailsWithAdminJson['highest_role'],
    current_sign_in_ip: null,
    last_sign_in_ip: null,
    sign_in_count: 0,
  });
}

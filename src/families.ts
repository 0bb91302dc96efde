/**
 * Every family, sorted by name: the one list the data source, the handler map and the services are
 * built from. Adding a family is its folder, its spec file, and one line here.
 */
import type { AnySubscriber } from './core/events.js';
import {
  buildCallerCredentialResolvers,
  buildCredentialResolvers,
  buildServices,
  buildSubjectResolvers,
  installAbilities,
  mergeHandlers,
  type CoreInput,
  type ServiceRegistry,
} from './core/family.js';
import type { CallerCredentialResolvers, CredentialResolvers } from './core/credentials.js';
import type { HandlerMap } from './core/handler.js';
import type { SubjectResolvers } from './core/subjects.js';
import type { DatabaseModel } from './db/data-source.js';
// Core's first, then every family's, by name.
import { coreManifest } from './core/manifest.js';
import { accessTokensManifest } from './access_tokens/manifest.js';
import { awardEmojiManifest } from './award_emoji/manifest.js';
import { branchesManifest } from './branches/manifest.js';
import { ciLintManifest } from './ci_lint/manifest.js';
import { ciVariablesManifest } from './ci_variables/manifest.js';
import { clusterAgentsManifest } from './cluster_agents/manifest.js';
import { commitStatusesManifest } from './commit_statuses/manifest.js';
import { commitsManifest } from './commits/manifest.js';
import { draftNotesManifest } from './draft_notes/manifest.js';
import { featureFlagsManifest } from './feature_flags/manifest.js';
import { filesManifest } from './files/manifest.js';
import { gitManifest } from './git/manifest.js';
import { gitHttpManifest } from './git_http/manifest.js';
import { groupsManifest } from './groups/manifest.js';
import { jobArtifactsManifest } from './job_artifacts/manifest.js';
import { labelsManifest } from './labels/manifest.js';
import { memberRolesManifest } from './member_roles/manifest.js';
import { membersManifest } from './members/manifest.js';
import { mergeRequestApprovalsManifest } from './merge_request_approvals/manifest.js';
import { mergeRequestPipelinesManifest } from './merge_request_pipelines/manifest.js';
import { mergeRequestsManifest } from './merge_requests/manifest.js';
import { metadataManifest } from './metadata/manifest.js';
import { milestonesManifest } from './milestones/manifest.js';
import { namespacesManifest } from './namespaces/manifest.js';
import { notesManifest } from './notes/manifest.js';
import { pipelineSchedulesManifest } from './pipeline_schedules/manifest.js';
import { pipelineTriggersManifest } from './pipeline_triggers/manifest.js';
import { pipelinesManifest } from './pipelines/manifest.js';
import { planLimitsManifest } from './plan_limits/manifest.js';
import { projectsManifest } from './projects/manifest.js';
import { protectedBranchesManifest } from './protected_branches/manifest.js';
import { protectedTagsManifest } from './protected_tags/manifest.js';
import { pushRulesManifest } from './push_rules/manifest.js';
import { remoteMirrorsManifest } from './remote_mirrors/manifest.js';
import { repositoryManifest } from './repository/manifest.js';
import { repositoryStorageMovesManifest } from './repository_storage_moves/manifest.js';
import { resourceEventsManifest } from './resource_events/manifest.js';
import { runnerJobsManifest } from './runner_jobs/manifest.js';
import { runnersManifest } from './runners/manifest.js';
import { sidekiqManifest } from './sidekiq/manifest.js';
import { snippetsManifest } from './snippets/manifest.js';
import { tagsManifest } from './tags/manifest.js';
import { uploadsManifest } from './uploads/manifest.js';
import { usersManifest } from './users/manifest.js';

export const families = [
  // Core first: no family of its own but what every family stands on (internal ids, the rate limiter,
  // the foundation's migrations); the families follow by name, which `make lint` checks.
  coreManifest,
  accessTokensManifest,
  awardEmojiManifest,
  branchesManifest,
  ciLintManifest,
  ciVariablesManifest,
  clusterAgentsManifest,
  commitStatusesManifest,
  commitsManifest,
  draftNotesManifest,
  featureFlagsManifest,
  filesManifest,
  gitManifest,
  gitHttpManifest,
  groupsManifest,
  jobArtifactsManifest,
  labelsManifest,
  memberRolesManifest,
  membersManifest,
  mergeRequestApprovalsManifest,
  mergeRequestPipelinesManifest,
  mergeRequestsManifest,
  metadataManifest,
  milestonesManifest,
  namespacesManifest,
  notesManifest,
  pipelineSchedulesManifest,
  pipelineTriggersManifest,
  pipelinesManifest,
  planLimitsManifest,
  projectsManifest,
  protectedBranchesManifest,
  protectedTagsManifest,
  pushRulesManifest,
  remoteMirrorsManifest,
  repositoryManifest,
  repositoryStorageMovesManifest,
  resourceEventsManifest,
  runnerJobsManifest,
  runnersManifest,
  sidekiqManifest,
  snippetsManifest,
  tagsManifest,
  uploadsManifest,
  usersManifest,
] as const;

/** One handler per operation in the contract: a missing one does not compile. */
export const handlers: HandlerMap = mergeHandlers(families);
installAbilities(families);

export const entities = families.flatMap((family) => family.entities ?? []);
export const migrations = families.flatMap((family) => family.migrations ?? []);
/** What src/db/data-source.ts maps and migrates, handed to it from here. */
export const databaseModel: DatabaseModel = { entities, migrations };

export type Services = ServiceRegistry;

export const createServices = (core: CoreInput): Services => buildServices(core, families);

export const createSubjectResolvers = (services: Services): SubjectResolvers =>
  buildSubjectResolvers(services, families);

export const createCredentialResolvers = (services: Services): CredentialResolvers =>
  buildCredentialResolvers(services, families);

export const createCallerCredentialResolvers = (services: Services): CallerCredentialResolvers =>
  buildCallerCredentialResolvers(services, families);

export const createSubscribers = (services: Services): AnySubscriber[] =>
  families.flatMap((family) => family.subscribers?.(services) ?? []);

import type { components } from '../../generated/openapi.js';
import { presentJob } from '../pipelines/pipeline.presenter.js';
import { presentProjectSimple } from '../projects/project.presenter.js';
import type { ProjectView } from '../projects/projects.service.js';
import { presentUserSummary } from '../users/user.presenter.js';
import type { DeploymentRecords } from './deployments.service.js';
import type { Deployment, Environment } from './environment.entity.js';

type EnvironmentBasicJson = components['schemas']['EnvironmentBasic'];
type EnvironmentJson = components['schemas']['Environment'];
type EnvironmentWithProjectJson = components['schemas']['EnvironmentWithProject'];
type EnvironmentDetailJson = components['schemas']['EnvironmentDetail'];
type DeploymentBasicJson = components['schemas']['DeploymentBasic'];
type DeploymentJson = components['schemas']['Deployment'];

export function presentEnvironmentBasic(e: Environment): EnvironmentBasicJson {
  return {
    id: e.id,
    name: e.name,
    slug: e.slug,
    external_url: e.externalUrl,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}

export function presentEnvironment(e: Environment): EnvironmentJson {
  return {
    ...presentEnvironmentBasic(e),
    description: e.description,
    state: e.state,
    tier: e.tier,
    auto_stop_at: e.autoStopAt?.toISOString() ?? null,
    auto_stop_setting: e.autoStopSetting as EnvironmentJson['auto_stop_setting'],
    kubernetes_namespace: null,
    flux_resource_path: null,
  };
}

/** As lists and changes answer it: with its project (GitLab's BasicProjectDetails). */
export const presentEnvironmentWith =
  (view: ProjectView, externalUrl: string) =>
  (e: Environment): EnvironmentWithProjectJson => ({
    ...presentEnvironment(e),
    project: presentProjectSimple(view, externalUrl),
  });

/** GitLab's get, without the project: the last successful deployment, without its environment (the one shown). */
export function presentEnvironmentDetail(
  e: Environment,
  last: Deployment | null,
  records: DeploymentRecords,
  externalUrl: string,
): EnvironmentDetailJson {
  return {
    ...presentEnvironment(e),
    last_deployment: last ? presentDeploymentBasic(last, records, externalUrl) : null,
    cluster_agent: null,
  };
}

function presentDeploymentBasic(
  d: Deployment,
  records: DeploymentRecords,
  externalUrl: string,
): DeploymentBasicJson {
  const user = d.userId === null ? null : (records.users.get(d.userId) ?? null);
  const job = d.deployableId === null ? undefined : records.jobs.get(d.deployableId);
  const jr = records.jobRecords;
  return {
    id: d.id,
    iid: d.iid,
    ref: d.ref,
    sha: d.sha,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
    user: user ? presentUserSummary(user, externalUrl) : null,
    deployable:
      job && jr
        ? presentJob(job, {
            ...jr.base,
            pipeline: jr.pipelines.get(job.pipelineId)!,
            user: job.userId === null ? null : (jr.users.get(job.userId) ?? null),
            commit: jr.commits.get(job.sha) ?? null,
          })
        : null,
    status: d.status,
  };
}

export const presentDeploymentWith =
  (records: DeploymentRecords, externalUrl: string) =>
  (d: Deployment): DeploymentJson => ({
    ...presentDeploymentBasic(d, records, externalUrl),
    environment: presentEnvironmentBasic(records.environments.get(d.environmentId)!),
  });

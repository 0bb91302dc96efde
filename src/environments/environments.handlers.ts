import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import {
  presentDeploymentWith,
  presentEnvironmentBasic,
  presentEnvironmentDetail,
  presentEnvironmentWith,
} from './environment.presenter.js';

export const environmentsHandlers = defineHandlers(['environments'], {
  async listEnvironments({ params, subject, services, request }) {
    const page = await services.environments.list(subject, params, request);
    return pagedResponse(page, presentEnvironmentWith(subject, request.externalUrl));
  },

  async getEnvironment({ params, subject, services, request }) {
    const environment = await services.environments.find(subject, params.environment_id);
    const last = await services.environments.lastDeployment(environment.id);
    const records = await services.environments.deployments.records(subject, last ? [last] : []);
    return {
      status: 200,
      body: presentEnvironmentDetail(environment, last, records, request.externalUrl),
    };
  },

  async createEnvironment({ body, subject, services, request }) {
    const environment = await services.environments.create(subject, body);
    return { status: 201, body: presentEnvironmentWith(subject, request.externalUrl)(environment) };
  },

  async updateEnvironment({ params, body, subject, services, request }) {
    const environment = await services.environments.update(subject, params.environment_id, body ?? {});
    return { status: 200, body: presentEnvironmentWith(subject, request.externalUrl)(environment) };
  },

  async deleteEnvironment({ params, subject, services }) {
    await services.environments.remove(subject, params.environment_id);
    return { status: 204, body: null };
  },

  async stopEnvironment({ params, body, subject, caller, services, request }) {
    const environment = await services.environments.stop(caller, subject, params.environment_id, body?.force);
    return { status: 200, body: presentEnvironmentWith(subject, request.externalUrl)(environment) };
  },

  async stopStaleEnvironments({ body, subject, caller, services }) {
    const message = await services.environments.stopStale(caller, subject, new Date(body.before));
    return { status: 200, body: { message } };
  },

  async deleteReviewApps({ params, subject, services }) {
    const { scheduled, dryRun } = await services.environments.scheduleReviewAppsDeletion(subject, params);
    const body = { scheduled_entries: scheduled.map(presentEnvironmentBasic), unprocessable_entries: [] };
    return dryRun ? { status: 200, body } : { status: 202, body };
  },

  async listDeployments({ params, subject, services, request }) {
    const deployments = services.environments.deployments;
    const page = await deployments.list(subject, params, request);
    const records = await deployments.records(subject, page.items);
    return pagedResponse(page, presentDeploymentWith(records, request.externalUrl));
  },

  async getDeployment({ params, subject, services, request }) {
    const deployments = services.environments.deployments;
    const deployment = await deployments.find(subject, params.deployment_id);
    const records = await deployments.records(subject, [deployment]);
    return { status: 200, body: presentDeploymentWith(records, request.externalUrl)(deployment) };
  },

  async createDeployment({ body, subject, caller, services, request }) {
    const deployments = services.environments.deployments;
    const deployment = await deployments.create(caller, subject, body);
    const records = await deployments.records(subject, [deployment]);
    return { status: 201, body: presentDeploymentWith(records, request.externalUrl)(deployment) };
  },

  async updateDeployment({ params, body, subject, services, request }) {
    const deployments = services.environments.deployments;
    const deployment = await deployments.update(subject, params.deployment_id, body.status);
    const records = await deployments.records(subject, [deployment]);
    return { status: 200, body: presentDeploymentWith(records, request.externalUrl)(deployment) };
  },

  async deleteDeployment({ params, subject, services }) {
    await services.environments.deployments.remove(subject, params.deployment_id);
    return { status: 204, body: null };
  },
});

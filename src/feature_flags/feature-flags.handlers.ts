import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import {
  presentFeatureFlag,
  presentFeatureFlagsClient,
  presentUnleashFeatures,
  presentUserList,
} from './feature-flag.presenter.js';

export const featureFlagsHandlers = defineHandlers(['featureFlagUserLists', 'featureFlags'], {
  async listFeatureFlagUserLists({ params, subject, services, request }) {
    const page = await services.featureFlagUserLists.list(subject, params, request);
    return pagedResponse(page, (list) => presentUserList(list, subject));
  },

  async createFeatureFlagUserList({ body, subject, services }) {
    const list = await services.featureFlagUserLists.create(subject, body);
    return { status: 201, body: presentUserList(list, subject) };
  },

  async getFeatureFlagUserList({ params, subject, services }) {
    const list = await services.featureFlagUserLists.get(subject, params.iid);
    return { status: 200, body: presentUserList(list, subject) };
  },

  async updateFeatureFlagUserList({ params, body, subject, services }) {
    const list = await services.featureFlagUserLists.update(subject, params.iid, body ?? {});
    return { status: 200, body: presentUserList(list, subject) };
  },

  async deleteFeatureFlagUserList({ params, subject, services }) {
    await services.featureFlagUserLists.remove(subject, params.iid);
    return { status: 204, body: null };
  },

  async listFeatureFlags({ params, subject, services, request }) {
    const records = await services.featureFlags.list(subject, params, request);
    return {
      status: 200,
      body: records.flags.map((flag) => presentFeatureFlag(flag, records)),
      headers: records.headers,
    };
  },

  async createFeatureFlag({ body, subject, services }) {
    const records = await services.featureFlags.create(subject, body);
    return { status: 201, body: presentFeatureFlag(records.flags[0], records) };
  },

  async getFeatureFlag({ params, subject, services }) {
    const records = await services.featureFlags.get(subject, params.feature_flag_name);
    return { status: 200, body: presentFeatureFlag(records.flags[0], records) };
  },

  async updateFeatureFlag({ params, body, subject, services }) {
    const records = await services.featureFlags.update(subject, params.feature_flag_name, body ?? {});
    return { status: 200, body: presentFeatureFlag(records.flags[0], records) };
  },

  async deleteFeatureFlag({ params, subject, services }) {
    const records = await services.featureFlags.remove(subject, params.feature_flag_name);
    return { status: 200, body: presentFeatureFlag(records.flags[0], records) };
  },

  async getFeatureFlagsClient({ subject, services, request }) {
    const client = await services.featureFlags.client(subject);
    return { status: 200, body: presentFeatureFlagsClient(client, request.externalUrl) };
  },

  async getUnleashClientFeatures({ params, principal: client, services }) {
    const environment = params['UNLEASH-APPNAME'] ?? params.app_name;
    const records = await services.featureFlags.unleashFeatures(client, environment);
    return { status: 200, body: presentUnleashFeatures(records) };
  },

  async getUnleashFeatures({ params, principal: client, services }) {
    const environment = params['UNLEASH-APPNAME'] ?? params.app_name;
    const records = await services.featureFlags.unleashFeatures(client, environment);
    return { status: 200, body: presentUnleashFeatures(records) };
  },

  // The instance id is the whole check: the pipeline resolved it for the project of the path.
  async registerUnleashClient() {
    return { status: 200, body: null };
  },

  async postUnleashClientMetrics() {
    return { status: 200, body: null };
  },
});

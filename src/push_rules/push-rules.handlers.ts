import { defineHandlers } from '../core/handler.js';
import { presentPushRule } from './push-rule.presenter.js';

export const pushRulesHandlers = defineHandlers(['pushRules'], {
  async getProjectPushRule({ subject, services }) {
    const rule = await services.pushRules.get(subject);
    return { status: 200, body: rule ? presentPushRule(rule) : null };
  },

  async createProjectPushRule({ subject, body, services }) {
    return { status: 201, body: presentPushRule(await services.pushRules.create(subject, body)) };
  },

  async updateProjectPushRule({ subject, body, services }) {
    return { status: 200, body: presentPushRule(await services.pushRules.update(subject, body)) };
  },

  async deleteProjectPushRule({ subject, services }) {
    await services.pushRules.remove(subject);
    return { status: 204, body: null };
  },
});

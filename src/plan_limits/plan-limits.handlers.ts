import { defineHandlers } from '../core/handler.js';
import { DEFAULT_PLAN } from './plan-limits.service.js';

export const planLimitsHandlers = defineHandlers(['planLimits'], {
  async getPlanLimits({ params, services }) {
    return { status: 200, body: await services.planLimits.get(params.plan_name ?? DEFAULT_PLAN) };
  },

  async updatePlanLimits({ params, body, services }) {
    return { status: 200, body: await services.planLimits.update(params.plan_name, body ?? {}) };
  },
});

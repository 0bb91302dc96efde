import { defineHandlers } from '../core/handler.js';
import { presentJobs, presentProcesses, presentQueues } from './sidekiq.presenter.js';
import { totals } from './sidekiq.service.js';

export const sidekiqHandlers = defineHandlers(['sidekiq'], {
  async getSidekiqQueueMetrics({ caller, services }) {
    return { status: 200, body: { queues: presentQueues(await services.sidekiq.queues(caller)) } };
  },

  async getSidekiqProcessMetrics({ caller, services }) {
    return { status: 200, body: { processes: presentProcesses(services.sidekiq.processes(caller)) } };
  },

  async getSidekiqJobStats({ caller, services }) {
    return { status: 200, body: { jobs: presentJobs(await services.sidekiq.jobs(caller)) } };
  },

  async getSidekiqCompoundMetrics({ caller, services }) {
    const queues = await services.sidekiq.queues(caller);
    return {
      status: 200,
      body: {
        queues: presentQueues(queues),
        processes: presentProcesses(services.sidekiq.processes(caller)),
        jobs: presentJobs(totals(queues)),
      },
    };
  },
});

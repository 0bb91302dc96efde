import { defineSubscriber } from '../core/events.js';
import { defineFamily, defineService } from '../core/family.js';
import { COMPLETED_STATUSES } from '../pipelines/statuses.js';
import { runnerJobsAbilities } from './abilities.js';
import './contracts.js';
import { JobTokenScopeService } from './job-token-scope.service.js';
import { JobTokens } from './job-tokens.js';
import { RunnerJobs1768300100000 } from './migrations/1768300100000-runner-jobs.js';
import { runnerJobsHandlers } from './runner-jobs.handlers.js';
import './runner-jobs.events.js';
import { RunnerJobsService } from './runner-jobs.service.js';
import { Traces } from './traces.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    /** The runner-facing job API: job requests, state updates, live logs, stuck jobs. */
    runnerJobs: RunnerJobsService;
    /** CI/CD job tokens: who a token stands for and what it reaches. */
    jobTokens: JobTokens;
    /** Projects' job token scope (inbound setting and allowlists). */
    jobTokenScope: JobTokenScopeService;
  }
}

export const runnerJobsManifest = defineFamily({
  name: 'runner_jobs',
  abilities: runnerJobsAbilities,
  migrations: [RunnerJobs1768300100000],
  services: [
    defineService('jobTokens', [], (core) => new JobTokens(core.dataSource)),
    defineService(
      'jobTokenScope',
      ['projects', 'groups'],
      (core, deps) => new JobTokenScopeService(core.dataSource, deps.projects, deps.groups),
    ),
    defineService(
      'runnerJobs',
      ['runners', 'pipelines', 'ciVariables', 'repositories'],
      (core, deps) => new RunnerJobsService(core, deps, new Traces(core.dataSource, core.objectStore)),
    ),
  ],
  callerCredentials: {
    JobToken:
      ({ jobTokens }) =>
      (token) =>
        jobTokens.caller(token),
    JobTokenQuery:
      ({ jobTokens }) =>
      (token) =>
        jobTokens.caller(token),
  },
  contributes: {
    // Multi-project pipelines triggered with CI_JOB_TOKEN run as the job's user.
    ciJobTokens: ({ jobTokens }) => ({ resolve: (token) => jobTokens.jobFor(token) }),
    // Runners' live logs and their archives are what the jobs API serves and erases.
    ciJobTraces: ({ runnerJobs }) => runnerJobs.traces,
    // A job a runner held that ends otherwise (canceled through the API): its log is archived off the request.
    ciJobChanges: ({ runnerJobs }) => ({
      async jobsChanged(manager, jobs) {
        for (const job of jobs)
          if (job.type === 'build' && job.runnerId !== null && COMPLETED_STATUSES.includes(job.status))
            await runnerJobs.publishEnded(manager, job.id);
      },
    }),
  },
  subscribers: ({ runnerJobs }) => [
    // A running job's time is up: a silent runner loses it (runner_system_failure).
    defineSubscriber({
      event: 'ci.runner_job_deadline',
      name: 'runner_jobs.stuck_sweep',
      handle: ({ jobId }) => runnerJobs.sweep(jobId),
    }),
    // A canceled job's token stops and its chunks move to the object store.
    defineSubscriber({
      event: 'ci.runner_job_ended',
      name: 'runner_jobs.archive_trace',
      handle: ({ jobId }) => runnerJobs.afterEnded(jobId),
    }),
  ],
  handlers: runnerJobsHandlers,
});

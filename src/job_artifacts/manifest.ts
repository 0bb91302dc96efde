import { defineSubscriber } from '../core/events.js';
import { defineFamily, defineService } from '../core/family.js';
import '../pipelines/pipelines.events.js';
import '../projects/projects.events.js';
import '../runner_jobs/contracts.js';
import { jobArtifactsAbilities } from './abilities.js';
import { JobArtifact, JobArtifactEntry } from './job-artifact.entity.js';
import { jobArtifactsHandlers } from './job-artifacts.handlers.js';
import { artifactSettings, JobArtifactsService } from './job-artifacts.service.js';
import { JobArtifacts1768300200000 } from './migrations/1768300200000-job-artifacts.js';
import './contracts.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    /** Job artifacts: uploads from runners, downloads, keep, delete and expiry. */
    jobArtifacts: JobArtifactsService;
  }
}

export const jobArtifactsManifest = defineFamily({
  name: 'job_artifacts',
  abilities: jobArtifactsAbilities,
  entities: [JobArtifact, JobArtifactEntry],
  migrations: [JobArtifacts1768300200000],
  services: [
    defineService(
      'jobArtifacts',
      ['pipelines'],
      (core, { pipelines }) => new JobArtifactsService(core, pipelines, artifactSettings()),
    ),
  ],
  subscribers: ({ jobArtifacts }) => [
    // An upload's object with no row an hour on is what a crash between the write and the commit left.
    defineSubscriber({
      event: 'ci.job_artifact_upload_settled',
      name: 'job_artifacts.settle_upload',
      retryDelaySeconds: 30,
      handle: ({ key }) => jobArtifacts.settleUpload(key),
    }),
    // An erased job's artifact rows went with its erase: their objects go after the commit.
    defineSubscriber({
      event: 'ci.job_artifact_objects_released',
      name: 'job_artifacts.remove_released_objects',
      retryDelaySeconds: 5,
      handle: ({ keys }) => jobArtifacts.removal.deleteObjects(keys),
    }),
    // An expiry date passed, or a project's artifacts were all set to expire: remove what may go.
    defineSubscriber({
      event: 'ci.job_artifacts_expiry_due',
      name: 'job_artifacts.remove_expired',
      handle: async ({ projectId }) => {
        await jobArtifacts.removal.removeExpired(projectId);
      },
    }),
    // A newer successful pipeline unlocks the previous one's artifacts of its ref: expired ones may go.
    defineSubscriber({
      event: 'ci.pipeline_status_changed',
      name: 'job_artifacts.unlock_previous',
      handle: async ({ pipelineId, status }) => {
        if (status === 'success') await jobArtifacts.removeExpiredAfterPipeline(pipelineId);
      },
    }),
    // A deleted project's rows went with it; its objects go here.
    defineSubscriber({
      event: 'project.deleted',
      name: 'job_artifacts.remove_project',
      retryDelaySeconds: 5,
      handle: ({ projectId }) => jobArtifacts.removal.removeProjectObjects(projectId),
    }),
  ],
  contributes: {
    // A job's representation lists its artifacts (`artifacts_file`, `artifacts`, `artifacts_expire_at`).
    jobFields: ({ jobArtifacts }) => ({ fieldsFor: (jobs) => jobArtifacts.jobFields(jobs) }),
    // Erasing a job removes its artifacts with its log, in the erase's transaction.
    ciJobChanges: ({ jobArtifacts }) => ({
      jobErased: (manager, job) => jobArtifacts.eraseWith(manager, job),
    }),
    // Runners download a dependency's archive: its name and size go in the job payload.
    runnerJobPayload: ({ jobArtifacts }) => ({
      artifactsFile: (manager, dependency) => jobArtifacts.artifactsFile(manager, dependency),
    }),
  },
  handlers: jobArtifactsHandlers,
});

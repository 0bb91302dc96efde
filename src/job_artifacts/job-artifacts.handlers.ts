import type { Readable } from 'node:stream';
import { badParameter } from '../core/errors.js';
import { defineHandlers } from '../core/handler.js';
import { presentJobWith } from '../pipelines/pipelines.handlers.js';
import type { Served } from './job-artifacts.service.js';

/** `attachment; filename="..."; filename*=UTF-8''...`, as GitLab sends files. */
const attachment = (filename: string) =>
  `attachment; filename="${filename.replace(/[^\x20-\x7e]|"/g, '_')}"; filename*=UTF-8''${encodeURIComponent(filename)}`;

type Bytes = {
  status: 200;
  stream: Readable;
  headers: Record<string, string> & { 'Content-Type': string };
};
type Redirect = { status: 302; body: null; headers: Record<string, string> };

/** A download: 302 to the bucket when the store gives a URL, else the bytes. */
function answer(served: Served): Bytes | Redirect {
  if ('redirect' in served) return { status: 302, body: null, headers: { Location: served.redirect } };
  return bytes(served);
}

function bytes(served: Exclude<Served, { redirect: string }>): Bytes {
  return {
    status: 200,
    stream: served.stream,
    headers: {
      'Content-Type': served.contentType,
      'Content-Length': String(served.size),
      'Content-Disposition': attachment(served.filename),
    },
  };
}

/** A file answer has no redirect (the file is cut out of the archive here). */
function fileAnswer(served: Served): Bytes {
  if ('redirect' in served) throw badParameter('artifact_path is invalid');
  return bytes(served);
}

export const jobArtifactsHandlers = defineHandlers(['jobArtifacts', 'pipelines'], {
  async authorizeJobArtifactsUpload({ params, caller, services }) {
    const body = await services.jobArtifacts.authorizeUpload(caller, params.id, params);
    return { status: 200, body };
  },

  async uploadJobArtifacts({ params, caller, services, files }) {
    await services.jobArtifacts.upload(caller, params.id, files?.file, params);
    return { status: 201, body: '201' };
  },

  async downloadJobArtifactsForRunner({ params, caller, services }) {
    const archive = await services.jobArtifacts.forRunner(caller, params.id);
    return answer(await services.jobArtifacts.serve(archive, { redirect: params.direct_download === true }));
  },

  async getJobArtifacts({ params, subject, services }) {
    const { archive } = await services.jobArtifacts.archiveForJob(subject, params.job_id);
    return answer(await services.jobArtifacts.serve(archive));
  },

  async downloadJobArtifactsByRef({ params, subject, services }) {
    const archive = await services.jobArtifacts.archiveForRef(subject, params.ref_name, params.job);
    return answer(await services.jobArtifacts.serve(archive));
  },

  async getJobArtifactFile({ params, subject, services }) {
    const { archive } = await services.jobArtifacts.archiveForJob(subject, params.job_id);
    return fileAnswer(await services.jobArtifacts.serveEntry(archive, params.artifact_path));
  },

  async getJobArtifactFileByRef({ params, subject, services }) {
    const archive = await services.jobArtifacts.archiveForRef(subject, params.ref_name, params.job);
    return fileAnswer(await services.jobArtifacts.serveEntry(archive, params.artifact_path));
  },

  async keepJobArtifacts({ params, subject, services }) {
    const job = await services.jobArtifacts.keep(subject, params.job_id);
    return { status: 200, body: presentJobWith(await services.pipelines.jobs.records(subject, [job]))(job) };
  },

  async deleteJobArtifacts({ params, subject, services }) {
    await services.jobArtifacts.deleteForJob(subject, params.job_id);
    return { status: 204, body: null };
  },

  async deleteProjectArtifacts({ subject, services }) {
    await services.jobArtifacts.deleteForProject(subject);
    return { status: 202, body: null };
  },
});

import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import { uploadHeaders } from './content-types.js';
import { presentUpload, presentUploadCreated } from './upload.presenter.js';

export const uploadsHandlers = defineHandlers(['uploads'], {
  async createProjectUpload({ subject, caller, services, files }) {
    const upload = await services.uploads.create(caller, subject, files?.file);
    return { status: 201, body: presentUploadCreated(upload) };
  },

  async listProjectUploads({ params, subject, services, request }) {
    const page = await services.uploads.list(subject, params, request);
    return pagedResponse(page, presentUpload);
  },

  async getProjectUpload({ params, subject, services }) {
    const upload = await services.uploads.findById(subject, params.upload_id);
    const stream = await services.uploads.open(upload);
    return { status: 200, stream, headers: uploadHeaders(upload.filename, upload.size) };
  },

  async deleteProjectUpload({ params, subject, services }) {
    await services.uploads.delete(await services.uploads.findById(subject, params.upload_id));
    return { status: 204, body: null };
  },

  async getProjectUploadBySecret({ params, subject, services }) {
    const upload = await services.uploads.findBySecret(subject.project.id, params.secret, params.filename);
    const stream = await services.uploads.open(upload);
    return { status: 200, stream, headers: uploadHeaders(upload.filename, upload.size) };
  },

  async deleteProjectUploadBySecret({ params, subject, services }) {
    const upload = await services.uploads.findBySecret(subject.project.id, params.secret, params.filename);
    await services.uploads.delete(upload);
    return { status: 204, body: null };
  },
});

import type { components } from '../../generated/openapi.js';
import type { Upload } from './upload.entity.js';
import { isInlineMedia } from './content-types.js';

type Schemas = components['schemas'];

/** What `POST /projects/:id/uploads` answers: the Markdown to paste and the URLs it uses. */
export function presentUploadCreated(upload: Upload): Schemas['UploadCreated'] {
  const url = `/uploads/${upload.secret}/${upload.filename}`;
  const dot = upload.filename.lastIndexOf('.');
  const alt = dot > 0 ? upload.filename.slice(0, dot) : upload.filename;
  return {
    id: upload.id,
    alt,
    url,
    full_path: `/-/project/${upload.projectId}${url}`,
    markdown: `${isInlineMedia(upload.filename) ? '!' : ''}[${alt}](${url})`,
  };
}

export function presentUpload(upload: Upload): Schemas['Upload'] {
  const by = upload.uploadedBy;
  return {
    id: upload.id,
    size: upload.size,
    filename: upload.filename,
    created_at: upload.createdAt.toISOString(),
    uploaded_by: by ? { id: by.id, name: by.name, username: by.username } : null,
  };
}

import type { components } from '../../generated/openapi.js';
import type { BlobInfo } from './files.service.js';

export type RepositoryFileJson = components['schemas']['RepositoryFile'];

/** The file as GitLab's `blob_data` shows it, with its content base64-encoded. */
export function presentRepositoryFile(info: BlobInfo, content: Buffer, sha256: string): RepositoryFileJson {
  return {
    file_name: info.fileName,
    file_path: info.filePath,
    size: info.size,
    encoding: 'base64',
    content: content.toString('base64'),
    content_sha256: sha256,
    ref: info.ref,
    blob_id: info.blobId,
    commit_id: info.commitId,
    last_commit_id: info.lastCommitId,
    execute_filemode: info.mode === '100755',
  };
}

/**
 * A header value for a file name, path or ref. Node sends no character beyond Latin-1 in a header, so
 * everything outside printable ASCII, and `%` itself, is percent-encoded as UTF-8: decoding gives the
 * text back.
 */
const headerValue = (text: string) =>
  text.replace(/[^\x20-\x24\x26-\x7e]/gu, (c) =>
    [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );

/** GitLab's `X-Gitlab-*` headers: each `blob_data` field as `X-Gitlab-File-Name` and so on. */
export function fileHeaders(info: BlobInfo, sha256: string): Record<string, string> {
  return {
    'X-Gitlab-File-Name': headerValue(info.fileName),
    'X-Gitlab-File-Path': headerValue(info.filePath),
    'X-Gitlab-Size': String(info.size),
    'X-Gitlab-Encoding': 'base64',
    'X-Gitlab-Content-Sha256': sha256,
    'X-Gitlab-Ref': headerValue(info.ref),
    'X-Gitlab-Blob-Id': info.blobId,
    'X-Gitlab-Commit-Id': info.commitId,
    'X-Gitlab-Last-Commit-Id': info.lastCommitId,
    'X-Gitlab-Execute-Filemode': String(info.mode === '100755'),
  };
}

const TRADITIONAL_UNSAFE = /[^ A-Za-z0-9!#$+.^_`|~-]/g;
const RFC5987_SAFE = /[A-Za-z0-9!#$&+.^_`|~-]/;

/** `inline; filename="..."; filename*=UTF-8''...`, escaped as Rails escapes it. */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(TRADITIONAL_UNSAFE, (c) =>
    c.charCodeAt(0) < 0x80 ? `%${c.charCodeAt(0).toString(16)}` : '?',
  );
  const encoded = [...Buffer.from(fileName, 'utf8')]
    .map((byte) =>
      RFC5987_SAFE.test(String.fromCharCode(byte)) && byte < 0x80
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
  return `inline; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

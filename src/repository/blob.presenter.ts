import type { components } from '../../generated/openapi.js';
import type { GitObject } from './repository.service.js';

export type BlobJson = components['schemas']['Blob'];

export const presentBlob = (blob: GitObject, content: Buffer): BlobJson => ({
  size: blob.size,
  encoding: 'base64',
  content: content.toString('base64'),
  sha: blob.id,
});

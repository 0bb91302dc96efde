import { defineFamily } from '../core/family.js';
import { metadataHandlers } from './metadata.handlers.js';

export const metadataManifest = defineFamily({ name: 'metadata', handlers: metadataHandlers });

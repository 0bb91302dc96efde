import { defineHandlers } from '../core/handler.js';
import { instanceMetadata } from './metadata.service.js';

export const metadataHandlers = defineHandlers({
  async getMetadata() {
    return { status: 200, body: await instanceMetadata() };
  },

  // The older name of the same answer.
  async getVersion() {
    return { status: 200, body: await instanceMetadata() };
  },
});

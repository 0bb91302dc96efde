import { defineHandlers } from '../core/handler.js';

export const metadataHandlers = defineHandlers(['metadata'], {
  async getMetadata({ services }) {
    return { status: 200, body: await services.metadata.describe() };
  },

  // The older name of the same answer.
  async getVersion({ services }) {
    return { status: 200, body: await services.metadata.describe() };
  },
});

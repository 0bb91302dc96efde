import { defineHandlers } from '../core/handler.js';
import { presentCustomAttribute } from './custom-attribute.presenter.js';

export const customAttributesHandlers = defineHandlers(['projectCustomAttributes'], {
  async listProjectCustomAttributes({ params, caller, services }) {
    const attributes = await services.projectCustomAttributes.list(caller, params.id);
    return { status: 200, body: attributes.map(presentCustomAttribute) };
  },

  async getProjectCustomAttribute({ params, caller, services }) {
    return {
      status: 200,
      body: presentCustomAttribute(await services.projectCustomAttributes.get(caller, params.id, params.key)),
    };
  },

  async setProjectCustomAttribute({ params, body, caller, services }) {
    const attribute = await services.projectCustomAttributes.set(caller, params.id, params.key, body.value);
    return { status: 200, body: presentCustomAttribute(attribute) };
  },

  async deleteProjectCustomAttribute({ params, caller, services }) {
    await services.projectCustomAttributes.delete(caller, params.id, params.key);
    return { status: 204, body: null };
  },
});

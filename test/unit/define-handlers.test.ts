import { describe, expect, it } from 'vitest';
import type { ServiceRegistry } from '../../src/core/family.js';
import { defineHandlers, type HandlerContext } from '../../src/core/handler.js';

describe('defineHandlers', () => {
  it('calls each handler with only the services its file names, the same object every time', async () => {
    const seen: object[] = [];
    const handlers = defineHandlers(['pushRules'], {
      async deleteProjectPushRule({ services }) {
        seen.push(services);
        return { status: 204, body: null };
      },
    });
    const registry = { pushRules: { name: 'push rules' }, projects: { name: 'projects' } };
    const context = {
      services: registry as unknown as ServiceRegistry,
    } as HandlerContext<'deleteProjectPushRule'>;
    expect(await handlers.deleteProjectPushRule(context)).toEqual({ status: 204, body: null });
    await handlers.deleteProjectPushRule(context);
    expect(seen[0]).toEqual({ pushRules: registry.pushRules });
    expect(seen[1]).toBe(seen[0]);
  });
});

/**
 * Type-level tests, checked by `tsc --noEmit` in `make lint`: each @ts-expect-error line must be an
 * error, or the build fails. They prove a handler cannot return what its operation does not declare.
 */
import { defineHandlers, type HandlerMap } from '../../src/core/handler.js';
import type { ProjectJson } from '../../src/projects/project.presenter.js';

declare const project: ProjectJson;

defineHandlers([], {
  // A body of the declared shape and status compiles.
  async getProject() {
    return { status: 200, body: project };
  },
});

defineHandlers([], {
  // @ts-expect-error A body that is not a Project.
  async getProject() {
    return { status: 200, body: { id: 'not-a-number' } };
  },
});

defineHandlers([], {
  // @ts-expect-error A status the operation does not declare as a success.
  async getProject() {
    return { status: 201, body: project };
  },
});

defineHandlers([], {
  // @ts-expect-error A list operation must return an array.
  async listProjects() {
    return { status: 200, body: project };
  },
});

defineHandlers([], {
  async getProject({ params }) {
    // @ts-expect-error Parameters are typed: `statistics` is a boolean, not a string.
    const statistics: string = params.statistics;
    void statistics;
    return { status: 200, body: project };
  },
});

defineHandlers(['projects'], {
  async getProject({ services }) {
    void services.projects;
    // @ts-expect-error A handler sees only the services its file names.
    void services.pushRules;
    return { status: 200, body: project };
  },
});

// @ts-expect-error The handler map must have a handler for every operation in the contract.
const incomplete: HandlerMap = { getProject: async () => ({ status: 200, body: project }) };
void incomplete;

import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import { presentRunner, presentRunnerDetails } from './runner.presenter.js';

const registration = (issued: { runner: { id: number; tokenExpiresAt: Date | null }; token: string }) => ({
  id: issued.runner.id,
  token: issued.token,
  token_expires_at: issued.runner.tokenExpiresAt?.toISOString() ?? null,
});

export const runnersHandlers = defineHandlers(['runners'], {
  async createUserRunner({ body, caller, services }) {
    return { status: 201, body: registration(await services.runners.create(caller, body)) };
  },

  async registerRunner({ body, services }) {
    const { token, ...settings } = body;
    return { status: 201, body: registration(await services.runners.register(token, settings)) };
  },

  async deleteRunnerByToken({ body, services }) {
    await services.runners.unregister(body.token);
    return { status: 204, body: null };
  },

  async verifyRunner({ body, services }) {
    const runner = await services.runners.runnerOfToken(body.token);
    return { status: 200, body: registration({ runner, token: body.token }) };
  },

  async resetRunnerAuthenticationTokenByToken({ body, services }) {
    const runner = await services.runners.runnerOfToken(body.token);
    return { status: 201, body: await services.runners.resetToken(runner) };
  },

  async listOwnedRunners({ params, caller, services, request }) {
    return pagedResponse(await services.runners.lists.owned(caller, params, request), presentRunner);
  },

  async listAllRunners({ params, services, request }) {
    return pagedResponse(await services.runners.lists.all(params, request), presentRunner);
  },

  async resetInstanceRunnerRegistrationToken({ services }) {
    return { status: 201, body: await services.runners.resetInstanceRegistrationToken() };
  },

  async getRunner({ params, caller, services, request }) {
    const { runner, access } = await services.runners.find(caller, params.id, 'read');
    const relations = await services.runners.relations(caller, runner, access, request.externalUrl);
    return { status: 200, body: presentRunnerDetails(runner, access, relations) };
  },

  async updateRunner({ params, body, caller, services, request }) {
    const { runner, access } = await services.runners.update(caller, params.id, body);
    const relations = await services.runners.relations(caller, runner, access, request.externalUrl);
    return { status: 200, body: presentRunnerDetails(runner, access, relations) };
  },

  async deleteRunner({ params, caller, services }) {
    await services.runners.remove(caller, params.id);
    return { status: 204, body: null };
  },

  async resetRunnerAuthenticationToken({ params, caller, services }) {
    const { runner } = await services.runners.find(caller, params.id, 'update');
    return { status: 201, body: await services.runners.resetToken(runner) };
  },

  async listRunnerJobs({ params, caller, services, request }) {
    const { runner } = await services.runners.find(caller, params.id, 'readJobs');
    return pagedResponse(await services.runners.jobs(caller, runner.id, params, request), (job) => job);
  },

  async listProjectRunners({ params, subject, services, request }) {
    const { project } = subject;
    const page = await services.runners.lists.project(
      project.id,
      project.namespace.traversalIds,
      params,
      request,
    );
    return pagedResponse(page, presentRunner);
  },

  async enableProjectRunner({ body, subject, caller, services }) {
    return {
      status: 201,
      body: presentRunner(await services.runners.enable(caller, subject.project.id, body.runner_id)),
    };
  },

  async disableProjectRunner({ params, subject, services }) {
    await services.runners.disable(subject.project.id, params.runner_id);
    return { status: 204, body: null };
  },

  async resetProjectRunnerRegistrationToken({ subject, services }) {
    return { status: 201, body: await services.runners.resetProjectRegistrationToken(subject.project.id) };
  },

  async listGroupRunners({ params, subject, services, request }) {
    return pagedResponse(
      await services.runners.lists.group(subject.group.traversalIds, params, request),
      presentRunner,
    );
  },

  async resetGroupRunnerRegistrationToken({ subject, services }) {
    return { status: 201, body: await services.runners.resetGroupRegistrationToken(subject.group.id) };
  },
});

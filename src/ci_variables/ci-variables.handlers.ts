import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import { presentInstanceVariable, presentVariable } from './ci-variable.presenter.js';
import type { VariableOwner } from './ci-variables.service.js';

const INSTANCE: VariableOwner = { level: 'instance' };
const ofProject = (subject: { project: { id: number } }): VariableOwner => ({
  level: 'project',
  projectId: subject.project.id,
});
const ofGroup = (subject: { group: { id: number } }): VariableOwner => ({
  level: 'group',
  groupId: subject.group.id,
});
/** `filter[environment_scope]`, when given. */
const scopeOf = (params: { filter?: { environment_scope?: string } }) => params.filter?.environment_scope;

export const ciVariablesHandlers = defineHandlers(['ciVariables'], {
  async listProjectVariables({ params, subject, services, request }) {
    return pagedResponse(
      await services.ciVariables.list(ofProject(subject), params, request),
      presentVariable,
    );
  },
  async createProjectVariable({ body, subject, services }) {
    return {
      status: 201,
      body: presentVariable(await services.ciVariables.create(ofProject(subject), body)),
    };
  },
  async getProjectVariable({ params, subject, services }) {
    const variable = await services.ciVariables.get(ofProject(subject), params.key, scopeOf(params));
    return { status: 200, body: presentVariable(variable) };
  },
  async updateProjectVariable({ params, body, subject, services }) {
    const owner = ofProject(subject);
    const variable = await services.ciVariables.update(owner, params.key, scopeOf(params), body ?? {});
    return { status: 200, body: presentVariable(variable) };
  },
  async deleteProjectVariable({ params, subject, services }) {
    await services.ciVariables.remove(ofProject(subject), params.key, scopeOf(params));
    return { status: 204, body: null };
  },

  async listGroupVariables({ params, subject, services, request }) {
    return pagedResponse(await services.ciVariables.list(ofGroup(subject), params, request), presentVariable);
  },
  async createGroupVariable({ body, subject, services }) {
    return { status: 201, body: presentVariable(await services.ciVariables.create(ofGroup(subject), body)) };
  },
  async getGroupVariable({ params, subject, services }) {
    const variable = await services.ciVariables.get(ofGroup(subject), params.key, scopeOf(params));
    return { status: 200, body: presentVariable(variable) };
  },
  async updateGroupVariable({ params, body, subject, services }) {
    const owner = ofGroup(subject);
    const variable = await services.ciVariables.update(owner, params.key, scopeOf(params), body ?? {});
    return { status: 200, body: presentVariable(variable) };
  },
  async deleteGroupVariable({ params, subject, services }) {
    await services.ciVariables.remove(ofGroup(subject), params.key, scopeOf(params));
    return { status: 204, body: null };
  },

  async listInstanceVariables({ params, services, request }) {
    return pagedResponse(await services.ciVariables.list(INSTANCE, params, request), presentInstanceVariable);
  },
  async createInstanceVariable({ body, services }) {
    return { status: 201, body: presentInstanceVariable(await services.ciVariables.create(INSTANCE, body)) };
  },
  async getInstanceVariable({ params, services }) {
    return {
      status: 200,
      body: presentInstanceVariable(await services.ciVariables.get(INSTANCE, params.key)),
    };
  },
  async updateInstanceVariable({ params, body, services }) {
    const variable = await services.ciVariables.update(INSTANCE, params.key, undefined, body ?? {});
    return { status: 200, body: presentInstanceVariable(variable) };
  },
  async deleteInstanceVariable({ params, services }) {
    await services.ciVariables.remove(INSTANCE, params.key);
    return { status: 204, body: null };
  },
});

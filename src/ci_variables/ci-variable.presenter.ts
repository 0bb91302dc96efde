import type { components } from '../../generated/openapi.js';
import type { OpenedVariable } from './ci-variables.service.js';

export type CiVariableJson = components['schemas']['CiVariable'];
export type CiInstanceVariableJson = components['schemas']['CiInstanceVariable'];

/** A project or group variable; a hidden one never shows its value. */
export function presentVariable({ variable, value }: OpenedVariable): CiVariableJson {
  return {
    variable_type: variable.variableType,
    key: variable.key,
    value: variable.hidden ? null : value,
    hidden: variable.hidden,
    protected: variable.protected,
    masked: variable.masked,
    raw: variable.raw,
    environment_scope: variable.environmentScope,
    description: variable.description,
  };
}

export function presentInstanceVariable({ variable, value }: OpenedVariable): CiInstanceVariableJson {
  return {
    variable_type: variable.variableType,
    key: variable.key,
    value,
    hidden: false,
    protected: variable.protected,
    masked: variable.masked,
    raw: variable.raw,
    description: variable.description,
  };
}

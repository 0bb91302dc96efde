/** The parameters of merge request operations, and the helpers that read them. */
import type { components, operations } from '../../generated/openapi.js';
import { badParameter } from '../core/errors.js';

type ListQuery = NonNullable<operations['listProjectMergeRequests']['parameters']['query']>;
export type ListMergeRequestsParams = ListQuery & { scope?: string; iids?: number[] };
export type CreateMergeRequestParams = components['schemas']['MergeRequestCreate'];
export type UpdateMergeRequestParams = components['schemas']['MergeRequestUpdate'];
export type PageParams = { page?: number; per_page?: number };

export const isNone = (value: unknown) => typeof value === 'string' && value.toLowerCase() === 'none';
export const isAny = (value: unknown) => typeof value === 'string' && value.toLowerCase() === 'any';

/** A date-time parameter as PostgreSQL can store it (years 1 to 9999), else 400 naming the parameter. */
export function storableDate(name: string, value: string): Date {
  const date = new Date(value);
  const year = date.getUTCFullYear();
  if (Number.isNaN(date.getTime()) || year < 1 || year > 9999) throw badParameter(`${name} is invalid`);
  return date;
}

/** Label names from a comma-separated string or a list; undefined when not given. */
export function namesOf(value: string | string[] | undefined | null): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const parts = Array.isArray(value) ? value.flatMap((name) => name.split(',')) : value.split(',');
  return parts.map((name) => name.trim()).filter((name) => name !== '');
}

export function exclusive(params: Record<string, unknown>, a: string, b: string): void {
  if (params[a] !== undefined && params[b] !== undefined)
    throw badParameter(`${a}, ${b} are mutually exclusive`);
}

export function assigneesOf(params: { assignee_id?: number; assignee_ids?: number[] }): number[] | undefined {
  if (params.assignee_ids !== undefined) return params.assignee_ids;
  if (params.assignee_id !== undefined) return params.assignee_id === 0 ? [] : [params.assignee_id];
  return undefined;
}

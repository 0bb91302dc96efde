/**
 * The subject an operation acts on (`x-subject` in the contract), resolved once per request by the
 * pipeline: 404 when the caller may not see it, 403 when the declared ability (`x-ability`) is missing.
 * The families that own a subject kind add its type here by declaration merging and supply its resolver
 * through their manifest, so core names neither.
 */
import type { Caller } from './auth.js';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface SubjectTypes {}

export interface SubjectResolver<T> {
  /** The subject named by an integer id or an encoded full path, as the caller sees it: 404 otherwise. */
  find(caller: Caller, id: string): Promise<T>;
  /** 403 unless the caller has the ability on the subject (404 if it cannot see it). */
  authorize(caller: Caller, ability: string, subject: T): void;
}

export type SubjectResolvers = { [K in keyof SubjectTypes]: SubjectResolver<SubjectTypes[K]> };

/**
 * Every service of every family, by key. Families add theirs by declaration merging on
 * `core/family.js`, which re-exports it; it has a module of its own so that handler.ts can name it
 * without importing family.ts, which imports handler.ts.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ServiceRegistry {}

export type ServiceKey = keyof ServiceRegistry;

import { QueryFailedError } from 'typeorm';

/** A write lost to a unique index: someone else took the name or path between our check and the write. */
export const isUniqueViolation = (err: unknown): err is QueryFailedError =>
  err instanceof QueryFailedError && (err.driverError as { code?: string })?.code === '23505';

import type { ValueTransformer } from 'typeorm';

/** node-postgres returns bigint as a string; our sizes and counters fit a JS number. */
export const bigintToNumber: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | number | null) => (value === null ? null : Number(value)),
};

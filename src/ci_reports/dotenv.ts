/**
 * dotenv reports, by GitLab's `Ci::ParseDotenvArtifactService` rules: the uploaded file must be smaller
 * than the `dotenv_size` plan limit (its size as uploaded); every line is `KEY=VALUE` (split at the first
 * `=`, both sides stripped); no empty lines, comments or multiline values; keys are letters, digits and
 * `_`, at most 255 characters; a later line with the same key wins (in the first one's place); at most
 * `dotenv_variables` variables. Values are taken as written: no quote handling, no expansion. Errors
 * are GitLab's messages.
 */
import { ApiError } from '../core/errors.js';

export interface DotenvVariable {
  key: string;
  value: string;
}

export interface DotenvLimits {
  /** `dotenv_size` in bytes; 0: no limit. */
  size: number;
  /** `dotenv_variables`; 0: no limit. */
  variables: number;
}

const refuse = (message: string) => new ApiError(400, { message });

/** Ruby's `String#strip`: whitespace and NUL at both ends. */
const strip = (value: string) => value.replace(/^[\s\0]+|[\s\0]+$/g, '');

/** GitLab's validations of a variable key (`Ci::HasVariable`), as a record-invalid message; null if valid. */
export function keyError(key: string): string | null {
  const errors: string[] = [];
  if (key === '') errors.push("Key can't be blank");
  if (key.length > 255) errors.push('Key is too long (maximum is 255 characters)');
  if (!/^[a-zA-Z0-9_]+$/.test(key)) errors.push("Key can contain only letters, digits and '_'.");
  return errors.length ? `Validation failed: ${errors.join(', ')}` : null;
}

/** Refuses a file of `size` bytes (as uploaded) that is not under the size limit. */
export function checkDotenvSize(size: number, limits: DotenvLimits): void {
  if (limits.size > 0 && !(size < limits.size))
    throw refuse(`Dotenv Artifact Too Big. Maximum Allowable Size: ${limits.size}`);
}

/** The variables of a dotenv file's text (UTF-8, a leading byte order mark dropped), or a 400 ApiError. */
export function parseDotenv(content: string, limits: DotenvLimits): DotenvVariable[] {
  const variables = new Map<string, string>();
  const body = content.startsWith('\uFEFF') ? content.slice(1) : content;
  if (body === '') return [];
  // Ruby's each_line: lines keep their "\n"; the last may lack it; no empty line after a final "\n".
  const lines = body.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const line of lines) {
    const eq = line.indexOf('=');
    if (eq < 0) throw refuse('Invalid Format');
    const key = strip(line.slice(0, eq));
    variables.set(key, strip(line.slice(eq + 1)));
  }
  if (limits.variables > 0 && variables.size > limits.variables)
    throw refuse(`Dotenv files cannot have more than ${limits.variables} variables`);
  // Keys are validated when the variables are saved, after the count (GitLab's order).
  for (const key of variables.keys()) {
    const error = keyError(key);
    if (error) throw refuse(error);
  }
  return [...variables].map(([key, value]) => ({ key, value }));
}

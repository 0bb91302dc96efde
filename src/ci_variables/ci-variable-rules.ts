/**
 * GitLab's validations of a CI/CD variable (Ci::HasVariable, Ci::Maskable, Ci::HidableVariable,
 * HasEnvironmentScope), with its messages. Pure: the service hands in the variable as it would be saved.
 */

const KEY = /^[a-zA-Z0-9_]+$/;
const KEY_FORMAT = "can contain only letters, digits and '_'.";
/** Maskable: one line of the Base64 alphabet (RFC 4648) plus `@`, `:`, `.`, `~`, at least 8 long. */
const MASKABLE = /^[a-zA-Z0-9_+=/@:.~-]{8,}$/;
/** A masked raw value (never expanded) may hold any character but whitespace. */
const MASKABLE_RAW = /^\S{8,}$/;
const SCOPE = /^[a-zA-Z0-9_/${}. *-]+$/;
const SCOPE_FORMAT = "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', '*' and spaces";
/** Instance variables' values (Ci::InstanceVariable). */
export const INSTANCE_VALUE_MAX = 10_000;

export type Errors = Record<string, string[]>;

/** The attributes that are validated, as they would be saved. */
export interface VariableDraft {
  key: string;
  value: string;
  masked: boolean;
  raw: boolean;
  environmentScope: string;
  description: string | null;
  instance: boolean;
}

const add = (errors: Errors, field: string, message: string) => (errors[field] ??= []).push(message);

/** GitLab strips the key before validating it. */
export const normalizeKey = (key: string) => key.trim();

export function keyErrors(key: string, errors: Errors = {}): Errors {
  if (key === '') add(errors, 'key', "can't be blank");
  if (key.length > 255) add(errors, 'key', 'is too long (maximum is 255 characters)');
  if (!KEY.test(key)) add(errors, 'key', KEY_FORMAT);
  return errors;
}

/** Every validation error of the draft, by attribute, in GitLab's order (none: `{}`). */
export function draftErrors(draft: VariableDraft): Errors {
  const errors = keyErrors(draft.key);
  if (draft.masked && !(draft.raw ? MASKABLE_RAW : MASKABLE).test(draft.value))
    add(errors, 'value', 'is invalid');
  if (draft.instance && draft.value.length > INSTANCE_VALUE_MAX)
    add(
      errors,
      'value',
      `The value of the provided variable exceeds the ${INSTANCE_VALUE_MAX} character limit`,
    );
  if (!draft.instance) {
    const scope = draft.environmentScope;
    if (scope === '') add(errors, 'environment_scope', "can't be blank");
    if (scope.length > 255) add(errors, 'environment_scope', 'is too long (maximum is 255 characters)');
    if (scope !== '' && !SCOPE.test(scope)) add(errors, 'environment_scope', SCOPE_FORMAT);
  }
  if (draft.description !== null && draft.description.length > 255)
    add(errors, 'description', 'is too long (maximum is 255 characters)');
  return errors;
}

/** Ci::HidableVariable on update: a masked and hidden variable keeps its masking. */
export function hiddenUpdateErrors(hidden: boolean, maskedBefore: boolean, maskedAfter: boolean): Errors {
  if (hidden && maskedBefore !== maskedAfter)
    return { base: ['The visibility setting cannot be changed for masked and hidden variables.'] };
  return {};
}

export const duplicateKeyError = (key: string): Errors => ({ key: [`(${key}) has already been taken`] });

/**
 * Does an environment match a scope? `*` matches any run of characters, everything else itself
 * (GitLab's `LIKE` on the scope with `*` as `%`, case-sensitive). No environment matches only `*`.
 */
export function scopeMatches(scope: string, environment: string | null | undefined): boolean {
  if (environment === null || environment === undefined) return scope === '*';
  const pattern = scope
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`, 's').test(environment);
}

/**
 * GitLab orders the variables of one owner by their scope as a `LIKE` pattern in the C collation, so
 * that `*` (`%`) comes before letters and a more specific scope later, where it overrides.
 */
export const scopeOrder = (a: string, b: string) => {
  const x = a.replaceAll('*', '%');
  const y = b.replaceAll('*', '%');
  return x < y ? -1 : x > y ? 1 : 0;
};

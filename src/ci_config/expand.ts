/**
 * GitLab's variable expansion (`$VAR`, `${VAR}`, `%VAR%`), as the server applies it to
 * `workflow:name`, include paths, `environment` names and the right side of `=~`.
 */
const VARIABLE =
  /\$([a-zA-Z_][a-zA-Z0-9_]*)|\$\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}|%([a-zA-Z_][a-zA-Z0-9_]*)%/g;

export interface ExpandOptions {
  /** Keep `$UNKNOWN` as written instead of replacing it with an empty string (GitLab's expand_existing). */
  keepUnknown?: boolean;
}

export function expandVariables(
  value: string,
  variables: Record<string, string>,
  options: ExpandOptions = {},
): string {
  return value.replace(VARIABLE, (whole, a?: string, b?: string, c?: string) => {
    const name = (a ?? b ?? c) as string;
    if (Object.prototype.hasOwnProperty.call(variables, name)) return variables[name] ?? '';
    return options.keepUnknown ? whole : '';
  });
}

/**
 * `include:`: every kind (local, project, remote, template), nested, with `inputs` and `rules`,
 * through the injected IncludeSources. Included files merge first, in order; the including file wins.
 */
import { expandVariables } from './expand.js';
import { evaluateExpression, isValidExpression } from './expression.js';
import { interpolate, resolveInputs } from './inputs.js';
import { deepMerge, isPlainObject, parseFile } from './parse.js';
import type { IncludeRecord, IncludeSources } from './types.js';

/**
 * GitLab's limit on included files, nested ones counted. It also bounds the nesting depth: an include
 * loop ends here, with the message GitLab documents for loops.
 */
export const MAX_INCLUDES = 150;

/** A failure that invalidates the whole configuration with one GitLab message. */
export class ConfigError extends Error {}

/** Where a file came from: a local include inside it resolves in the same project and commit. */
interface FileContext {
  project: string;
  sha: string;
  /** Local includes read the pipeline's own checkout only when the file is the pipeline project's. */
  own: boolean;
}

export interface IncludeState {
  sources: IncludeSources;
  variables: Record<string, string>;
  exists?: (globs: string[]) => Promise<boolean>;
  records: IncludeRecord[];
  count: number;
  root: FileContext;
}

const ACCESSORS = ['local', 'project', 'remote', 'template', 'component'] as const;
const INCLUDE_KEYS = [...ACCESSORS, 'file', 'ref', 'inputs', 'rules', 'cache', 'integrity'];

/**
 * Parses a file's text, checks and applies its `spec:inputs`, then expands its own includes.
 * `what` names the file in messages (null for the pipeline's own configuration).
 */
export async function loadFile(
  text: string,
  given: Record<string, unknown> | undefined,
  ctx: FileContext,
  state: IncludeState,
  depth: number,
  what: string | null,
): Promise<Record<string, unknown>> {
  const parsed = parseFile(text);
  if (parsed.error)
    throw new ConfigError(what ? `Included file \`${what}\` does not have valid YAML syntax!` : parsed.error);
  // An included file that holds nothing (only comments, `{}`) is GitLab's "not valid YAML syntax".
  if (
    what &&
    (parsed.body === null ||
      parsed.body === undefined ||
      (isPlainObject(parsed.body) && Object.keys(parsed.body).length === 0))
  ) {
    throw new ConfigError(`Included file \`${what}\` does not have valid YAML syntax!`);
  }
  let body: unknown = parsed.body ?? {};
  if (parsed.header) {
    const spec = parsed.header.spec;
    const specInputs = isPlainObject(spec) ? spec.inputs : undefined;
    const resolved = resolveInputs(specInputs, given ?? {});
    if (resolved.errors.length > 0)
      throw new ConfigError(prefixed(what, resolved.errors.slice(0, 3).join(', ')));
    const done = interpolate(body, resolved.values, state.variables);
    if (done.errors.length > 0) throw new ConfigError(prefixed(what, done.errors.slice(0, 3).join(', ')));
    body = done.value;
  } else if (given && Object.keys(given).length > 0) {
    throw new ConfigError(
      prefixed(what, 'Given inputs not defined in the `spec` section of the included configuration file'),
    );
  }
  if (!isPlainObject(body)) {
    if (what) throw new ConfigError(`Included file \`${what}\` does not have valid YAML syntax!`);
    throw new ConfigError('Invalid configuration format');
  }
  if (!('include' in body)) return body;
  const { include, ...rest } = body;
  let merged: Record<string, unknown> = {};
  for (const entry of await normalizeIncludes(include, state)) {
    const included = await loadEntry(entry, ctx, state, depth + 1);
    if (included) merged = deepMerge(merged, included);
  }
  return deepMerge(merged, rest);
}

function prefixed(what: string | null, message: string): string {
  return what ? `\`${what}\`: ${message}` : message;
}

type Entry = Record<string, unknown>;

async function normalizeIncludes(include: unknown, state: IncludeState): Promise<Entry[]> {
  const list = Array.isArray(include) ? include : [include];
  const out: Entry[] = [];
  for (const item of list) {
    if (typeof item === 'string') {
      out.push(/^https?:\/\//i.test(item) ? { remote: item } : { local: item });
      continue;
    }
    if (!isPlainObject(item))
      throw new ConfigError('include config should be a hash, a string or an array of hashes and strings');
    const accessors = ACCESSORS.filter((a) => a in item);
    if (accessors.length !== 1)
      throw new ConfigError(`Include \`${JSON.stringify(item)}\` needs to match exactly one accessor!`);
    const unknown = Object.keys(item).filter((k) => !INCLUDE_KEYS.includes(k));
    if (unknown.length > 0)
      throw new ConfigError(`include config contains unknown keys: ${unknown.join(', ')}`);
    if (item.inputs !== undefined && !isPlainObject(item.inputs))
      throw new ConfigError('include:inputs config must be a hash');
    if (item.rules !== undefined && !(await includeRulesPass(item.rules, state))) continue;
    out.push(item);
  }
  return out;
}

/** `include:rules`: `if` and `exists` (changes hold: no diff is known while loading). */
async function includeRulesPass(rules: unknown, state: IncludeState): Promise<boolean> {
  if (!Array.isArray(rules)) throw new ConfigError('include:rules config should be an array of hashes');
  for (const rule of rules) {
    if (!isPlainObject(rule)) throw new ConfigError('include:rules:rule config should be a hash');
    const unknown = Object.keys(rule).filter((k) => !['if', 'exists', 'changes', 'when'].includes(k));
    if (unknown.length > 0)
      throw new ConfigError(`include:rules:rule config contains unknown keys: ${unknown.join(', ')}`);
    if (rule.if !== undefined && !isValidExpression(rule.if))
      throw new ConfigError('include:rules:rule if invalid expression syntax');
    if (rule.when !== undefined && !['never', 'always'].includes(String(rule.when))) {
      throw new ConfigError(`include:rules:rule when unknown value: ${String(rule.when)}`);
    }
    let ok = rule.if === undefined || evaluateExpression(String(rule.if), state.variables);
    if (ok && rule.exists !== undefined && state.exists) {
      const globs = (Array.isArray(rule.exists) ? rule.exists : [rule.exists]).map(String);
      ok = await state.exists(globs.map((g) => expandVariables(g, state.variables)));
    }
    if (ok) return rule.when !== 'never';
  }
  return false;
}

function count(state: IncludeState, depth: number): void {
  void depth;
  if (state.count >= MAX_INCLUDES)
    throw new ConfigError(`Maximum of ${MAX_INCLUDES} nested includes are allowed!`);
  state.count++;
}

function yamlExtension(location: string): void {
  if (!/\.ya?ml$/.test(location))
    throw new ConfigError(`Included file \`${location}\` does not have YAML extension!`);
}

async function loadEntry(
  entry: Entry,
  ctx: FileContext,
  state: IncludeState,
  depth: number,
): Promise<Record<string, unknown> | null> {
  const inputs = entry.inputs as Record<string, unknown> | undefined;
  const vars = state.variables;
  if (entry.local !== undefined) {
    const location = expandVariables(String(entry.local), vars).replace(/^\/+/, '');
    if (!location.includes('*')) return loadLocal(location, inputs, ctx, state, depth);
    const paths = await localWildcard(location, state);
    let merged: Record<string, unknown> = {};
    for (const path of paths)
      merged = deepMerge(merged, await loadLocal(path, inputs, state.root, state, depth));
    return merged;
  }
  if (entry.project !== undefined) {
    const project = expandVariables(String(entry.project), vars).replace(/^\/+/, '');
    const ref = entry.ref === undefined ? undefined : expandVariables(String(entry.ref), vars);
    const files = Array.isArray(entry.file) ? entry.file : [entry.file];
    if (entry.file === undefined || files.length === 0)
      throw new ConfigError('include config must specify the file where to fetch the config from');
    let merged: Record<string, unknown> = {};
    for (const f of files) {
      const file = expandVariables(String(f), vars).replace(/^\/+/, '');
      count(state, depth);
      yamlExtension(file);
      const got = await state.sources.project(project, ref, file);
      if (got === 'forbidden') {
        throw new ConfigError(
          `Project \`${project}\` not found or access denied! Make sure any includes in the pipeline configuration are correctly defined.`,
        );
      }
      if (got === null) throw new ConfigError(`Project \`${project}\` file \`${file}\` does not exist!`);
      record(state, 'file', file, ctx, got.content, { project, ref: ref ?? null });
      const inner: FileContext = {
        project,
        sha: got.sha,
        own: project === state.root.project && got.sha === state.root.sha,
      };
      merged = deepMerge(merged, await loadFile(got.content, inputs, inner, state, depth, file));
    }
    return merged;
  }
  if (entry.remote !== undefined) {
    const url = expandVariables(String(entry.remote), vars);
    count(state, depth);
    if (!/^https?:\/\/[^\s/]+/i.test(url))
      throw new ConfigError(`Remote file \`${url}\` does not have a valid address!`);
    yamlExtension(url.replace(/[?#].*$/, ''));
    let content: string;
    try {
      content = await state.sources.remote(url);
    } catch (err) {
      throw new ConfigError(`Remote file \`${url}\` could not be fetched because of ${remoteReason(err)}!`);
    }
    record(state, 'remote', url, ctx, content, {});
    return loadFile(content, inputs, { project: '', sha: '', own: false }, state, depth, url);
  }
  if (entry.template !== undefined) {
    const name = expandVariables(String(entry.template), vars);
    count(state, depth);
    if (!name.endsWith('.gitlab-ci.yml'))
      throw new ConfigError(`Template file \`${name}\` is not a valid location!`);
    const content = await state.sources.template(name);
    if (content === null || content.trim() === '')
      throw new ConfigError(`Included file \`${name}\` is empty or does not exist!`);
    record(state, 'template', name, ctx, content, {});
    return loadFile(content, inputs, { project: '', sha: '', own: false }, state, depth, name);
  }
  throw new ConfigError(`Include \`${JSON.stringify(entry)}\` needs to match exactly one accessor!`);
}

async function loadLocal(
  raw: string,
  inputs: Record<string, unknown> | undefined,
  ctx: FileContext,
  state: IncludeState,
  depth: number,
): Promise<Record<string, unknown>> {
  const location = raw.replace(/^\/+/, '');
  count(state, depth);
  yamlExtension(location);
  let content: string | null;
  if (ctx.own || !ctx.project) {
    content = await state.sources.local(location);
  } else {
    const got = await state.sources.project(ctx.project, ctx.sha, location);
    content = got === null || got === 'forbidden' ? null : got.content;
  }
  if (content === null) throw new ConfigError(`Local file \`${location}\` does not exist!`);
  if (content.trim() === '') throw new ConfigError(`Local file \`${location}\` is empty!`);
  record(state, 'local', location, ctx, content, {});
  return loadFile(content, inputs, ctx.project ? ctx : state.root, state, depth, location);
}

/**
 * GitLab's wildcard locals as its documentation states them: `*` within a directory, `**.yml` in the
 * directory and every subdirectory, `**` then a slash only in subdirectories; .yml/.yaml files, sorted.
 */
export function wildcardRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (pattern.startsWith('**/', i)) {
      re += '(?:.+/)';
      i += 2;
    } else if (pattern.startsWith('**', i)) {
      re += '.*';
      i += 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

async function localWildcard(pattern: string, state: IncludeState): Promise<string[]> {
  const all = state.sources.localPaths ? await state.sources.localPaths() : [];
  const match = wildcardRegExp(pattern);
  const paths = all.filter((p) => /\.ya?ml$/.test(p) && match.test(p)).sort();
  if (paths.length === 0) throw new ConfigError(`Local file \`${pattern}\` does not exist!`);
  return paths;
}

function remoteReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = /\b([1-5]\d\d)\b/.exec(message);
  if (/time(d)? ?out/i.test(message)) return 'a timeout error';
  if (code) return `HTTP code \`${code[1]}\` error`;
  return 'a socket error';
}

function record(
  state: IncludeState,
  type: IncludeRecord['type'],
  location: string,
  ctx: FileContext,
  content: string,
  extra: Record<string, unknown>,
): void {
  void content;
  state.records.push({
    type,
    location,
    blob: null,
    raw: type === 'remote' ? location : null,
    extra,
    context_project: ctx.project || null,
    context_sha: ctx.sha || null,
  });
}

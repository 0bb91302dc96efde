/**
 * `extends:` (multi-level, several bases, deep-merged in order, the job's own keys last) and then
 * `!reference [job, key, ...]`, in GitLab's order: includes, extends, references.
 */
import { ConfigError } from './include.js';
import { deepMerge, InvalidReferenceTag, isPlainObject, ReferenceTag } from './parse.js';

/** More ancestors than this along one chain: "nesting too deep". */
export const MAX_EXTENDS_NESTING = 10;
const MAX_REFERENCE_NESTING = 10;

export function resolveExtends(config: Record<string, unknown>): Record<string, unknown> {
  const out = { ...config };
  const done = new Set<string>();
  const resolve = (key: string, ancestors: string[]): Record<string, unknown> => {
    const value = out[key] as Record<string, unknown>;
    if (done.has(key) || !isPlainObject(value) || value.extends === undefined) return value;
    const bases = Array.isArray(value.extends) ? value.extends : [value.extends];
    if (!bases.every((b) => typeof b === 'string')) return value; // reported by the job's own validation
    const names = bases as string[];
    const unknown = names.filter((b) => !(b in out));
    if (unknown.length > 0)
      throw new ConfigError(`${key}: unknown keys in \`extends\` (${unknown.join(', ')})`);
    const invalid = names.filter((b) => !isPlainObject(out[b]));
    if (invalid.length > 0)
      throw new ConfigError(`${key}: invalid base hashes in \`extends\` (${invalid.join(', ')})`);
    if (ancestors.length > MAX_EXTENDS_NESTING)
      throw new ConfigError(`${key}: nesting too deep in \`extends\``);
    if (ancestors.includes(key)) throw new ConfigError(`${key}: circular dependency detected in \`extends\``);
    let merged: Record<string, unknown> = {};
    for (const base of names) merged = deepMerge(merged, resolve(base, [...ancestors, key]));
    out[key] = deepMerge(merged, value);
    done.add(key);
    return out[key] as Record<string, unknown>;
  };
  for (const key of Object.keys(out)) resolve(key, []);
  return out;
}

/** Replaces every `!reference` by the value it names, in the configuration after extends. */
export function resolveReferences(config: Record<string, unknown>): Record<string, unknown> {
  const walk = (node: unknown, chain: string[]): unknown => {
    if (node instanceof InvalidReferenceTag) throw new ConfigError(`!reference ${node.written} is not valid`);
    if (node instanceof ReferenceTag) return follow(node, chain);
    if (Array.isArray(node)) return node.map((n) => walk(n, chain));
    if (isPlainObject(node)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(node)) out[k] = walk(v, chain);
      return out;
    }
    return node;
  };
  const follow = (ref: ReferenceTag, chain: string[]): unknown => {
    const id = ref.toString();
    if (ref.path.length === 0) throw new ConfigError(`${id} is not valid`);
    if (chain.includes(id)) throw new ConfigError(`${id} is part of a circular chain`);
    if (chain.length >= MAX_REFERENCE_NESTING) throw new ConfigError(`${id} is nested too deep`);
    let target: unknown = config;
    for (const part of ref.path) {
      if (!isPlainObject(target) || !(part in target)) throw new ConfigError(`${id} could not be found`);
      target = target[part];
    }
    return walk(target, [...chain, id]);
  };
  return walk(config, []) as Record<string, unknown>;
}

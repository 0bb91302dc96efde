/**
 * YAML to plain values with the maintained `yaml` package: YAML 1.1 as GitLab's Psych reads it
 * (`<<` merge keys, anchors), and the `!reference [job, key]` tag kept as a marker for later.
 */
import YAML from 'yaml';

/** A `!reference [job, key, ...]` that has not been resolved yet. */
export class ReferenceTag {
  constructor(readonly path: string[]) {}
  /** GitLab's way of writing it in messages: `!reference ["job", "script"]`. */
  toString(): string {
    return `!reference [${this.path.map((p) => JSON.stringify(String(p))).join(', ')}]`;
  }
}

/** `!reference` on a scalar or an empty list: kept to be reported when references are resolved. */
export class InvalidReferenceTag {
  constructor(readonly written: string) {}
}

const scalarReferenceTag = {
  tag: '!reference',
  resolve(value: string): InvalidReferenceTag {
    return new InvalidReferenceTag(JSON.stringify(value));
  },
};

const referenceTag = {
  tag: '!reference',
  collection: 'seq' as const,
  resolve(seq: YAML.YAMLSeq): YAML.Scalar {
    const path = seq.items.map((item) => {
      const v = YAML.isScalar(item) ? item.value : item;
      return typeof v === 'string' || typeof v === 'number' ? String(v) : JSON.stringify(v);
    });
    return new YAML.Scalar(new ReferenceTag(path));
  },
};

export interface ParsedFile {
  /** The `spec:` header (the document before `---`), or null. */
  header: Record<string, unknown> | null;
  body: unknown;
  error: string | null;
}

/**
 * Psych's booleans: YAML 1.1's words except the single letters (`y`, `n` stay strings, so that
 * `needs: [y]` names a job as it does on GitLab).
 */
const psychBool = {
  tag: 'tag:yaml.org,2002:bool',
  default: true,
  test: /^(?:[Yy]es|YES|[Tt]rue|TRUE|[Oo]n|ON|[Nn]o|NO|[Ff]alse|FALSE|[Oo]ff|OFF)$/,
  resolve: (text: string): boolean => /^(?:[Yy]es|YES|[Tt]rue|TRUE|[Oo]n|ON)$/.test(text),
};

const OPTIONS = {
  version: '1.1' as const,
  merge: true,
  customTags: (tags: YAML.Tags) => [
    ...tags.filter((t) => typeof t !== 'object' || t.tag !== 'tag:yaml.org,2002:bool'),
    psychBool,
    referenceTag,
    scalarReferenceTag,
  ],
  uniqueKeys: false,
  prettyErrors: false,
};

/** Parses a CI file: an optional header document with `spec`, then the configuration. */
export function parseFile(text: string): ParsedFile {
  let docs: YAML.Document.Parsed[];
  try {
    docs = YAML.parseAllDocuments(text, OPTIONS) as YAML.Document.Parsed[];
  } catch (err) {
    return { header: null, body: null, error: firstLine((err as Error).message) };
  }
  if (!Array.isArray(docs)) return { header: null, body: null, error: 'Invalid configuration format' };
  for (const doc of docs) {
    const err = doc.errors[0];
    if (err) return { header: null, body: null, error: firstLine(err.message) };
  }
  try {
    const values = docs.map((doc) => doc.toJS({ maxAliasCount: 10_000 }) as unknown);
    if (values.some((v) => isCyclic(v, new Set())))
      return { header: null, body: null, error: '(<unknown>): recursive aliases are not allowed' };
    if (values.length === 0) return { header: null, body: null, error: null };
    if (values.length === 1) return { header: null, body: values[0], error: null };
    const [head, body] = values;
    if (values.length > 2 || !isPlainObject(head) || !('spec' in head)) {
      return { header: null, body: null, error: 'Invalid configuration format' };
    }
    return { header: head, body, error: null };
  } catch (err) {
    return { header: null, body: null, error: firstLine((err as Error).message) };
  }
}

/** An alias inside its own anchor makes a value that contains itself: nothing could walk it. */
function isCyclic(v: unknown, ancestors: Set<unknown>): boolean {
  if (typeof v !== 'object' || v === null) return false;
  if (ancestors.has(v)) return true;
  ancestors.add(v);
  const children = Array.isArray(v) ? v : v instanceof ReferenceTag ? [] : Object.values(v);
  const found = children.some((c) => isCyclic(c, ancestors));
  ancestors.delete(v);
  return found;
}

function firstLine(message: string): string {
  return `(<unknown>): ${message.split('\n')[0]?.trim() ?? message}`;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    !(v instanceof ReferenceTag) &&
    !(v instanceof InvalidReferenceTag)
  );
}

/** GitLab's deep_merge: hashes merge key by key, anything else (arrays included) replaces. */
export function deepMerge(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key];
    out[key] = isPlainObject(prev) && isPlainObject(value) ? deepMerge(prev, value) : value;
  }
  return out;
}

/** Back to YAML for lint's `merged_yaml`. */
export function toYaml(value: unknown): string {
  return YAML.stringify(value, (_key, v: unknown) => (v instanceof ReferenceTag ? v.toString() : v), {
    lineWidth: 0,
    aliasDuplicateObjects: false,
  });
}

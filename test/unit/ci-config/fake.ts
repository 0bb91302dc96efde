/** Fake include sources and rule contexts for the configuration-language tests (no server, no git). */
import { anyPathMatches } from '../../../src/ci_config/glob.js';
import { templateSource } from '../../../src/ci_config/index.js';
import type { IncludeSources, RuleContext } from '../../../src/ci_config/index.js';

export interface FakeFiles {
  local?: Record<string, string>;
  /** `group/project@ref:path` → content. */
  project?: Record<string, string>;
  forbidden?: string[];
  remote?: Record<string, string>;
  templates?: Record<string, string>;
}

export function fakeSources(files: FakeFiles = {}, builtinTemplates = false): IncludeSources {
  return {
    local: async (path) => files.local?.[path] ?? null,
    project: async (fullPath, ref, file) => {
      if (files.forbidden?.includes(fullPath)) return 'forbidden';
      const content = files.project?.[`${fullPath}@${ref ?? 'main'}:${file}`];
      return content === undefined ? null : { content, sha: `sha-of-${fullPath}` };
    },
    remote: async (url) => {
      const content = files.remote?.[url];
      if (content === undefined) throw new Error('HTTP 404 Not Found');
      return content;
    },
    template: async (name) => files.templates?.[name] ?? (builtinTemplates ? templateSource(name) : null),
  };
}

export interface FakeContext {
  ref?: string;
  tag?: boolean;
  source?: string;
  variables?: Record<string, string>;
  /** Changed paths of the push; null (the default) when unknown. */
  changed?: string[] | null;
  changedByCompare?: Record<string, string[]>;
  existing?: string[];
}

export const MAIN_PUSH: Required<Pick<FakeContext, 'ref' | 'tag' | 'source' | 'variables'>> = {
  ref: 'main',
  tag: false,
  source: 'push',
  variables: {
    CI_COMMIT_BRANCH: 'main',
    CI_COMMIT_REF_NAME: 'main',
    CI_PIPELINE_SOURCE: 'push',
    CI_DEFAULT_BRANCH: 'main',
  },
};

export function fakeContext(c: FakeContext = MAIN_PUSH): RuleContext {
  return {
    ref: c.ref ?? 'main',
    tag: c.tag ?? false,
    source: c.source ?? 'push',
    variables: c.variables ?? {},
    changedPaths: async (compareTo) =>
      compareTo !== undefined && c.changedByCompare?.[compareTo]
        ? (c.changedByCompare[compareTo] as string[])
        : (c.changed ?? null),
    exists: async (globs) => anyPathMatches(c.existing ?? [], globs),
  };
}

/**
 * A job's variables as GitLab Runner's shell executor sets them (common/build.go GetAllVariables): the
 * runner's own (CI_BUILDS_DIR, CI_PROJECT_DIR, CI_SERVER...), then the payload's in its order (later ones
 * win), then CI_SHARED_ENVIRONMENT and the runner's version; `$VAR` references are expanded except in raw
 * variables; file variables become files holding the value, and the variable their path.
 */
import fs from 'node:fs';
import path from 'node:path';
import { RUNNER_VERSION } from './client.js';
import type { JobVariable } from './payload.js';

export interface Variable extends JobVariable {
  /** Set by the runner, not the server. */
  internal?: boolean;
}

/** os.Expand's rules as GitLab Runner uses them: $NAME and ${NAME}; unknown names become empty. */
export function expandValue(value: string, lookup: (key: string) => string | undefined): string {
  return value.replace(
    /\$(?:\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+)|\$)/g,
    (whole, braced?: string, bare?: string) => {
      if (whole === '$$') return '$';
      return lookup((braced ?? bare) as string) ?? '';
    },
  );
}

/** The last definition of each key wins; values are expanded against the list before expansion. */
export function expandAll(variables: Variable[]): Variable[] {
  const latest = new Map<string, string>();
  for (const v of variables) latest.set(v.key, v.value);
  return variables.map((v) =>
    v.raw || v.file ? v : { ...v, value: expandValue(v.value, (key) => latest.get(key)) },
  );
}

export interface JobDirs {
  buildsDir: string;
  projectDir: string;
  tmpDir: string;
}

export function runnerVariables(dirs: JobDirs, concurrentId: number, runnerShortToken: string): Variable[] {
  const v = (key: string, value: string): Variable => ({
    key,
    value,
    public: true,
    masked: false,
    internal: true,
  });
  return [
    v('CI_BUILDS_DIR', dirs.buildsDir),
    v('CI_PROJECT_DIR', dirs.projectDir),
    v('CI_CONCURRENT_ID', String(concurrentId)),
    v('CI_CONCURRENT_PROJECT_ID', String(concurrentId)),
    v('CI_SERVER', 'yes'),
    v('CI_RUNNER_SHORT_TOKEN', runnerShortToken),
  ];
}

export function afterJobVariables(): Variable[] {
  const v = (key: string, value: string): Variable => ({
    key,
    value,
    public: true,
    masked: false,
    internal: true,
  });
  return [
    v('CI_SHARED_ENVIRONMENT', 'true'),
    v('CI_RUNNER_VERSION', RUNNER_VERSION),
    v('CI_RUNNER_REVISION', 'builtin'),
    v('CI_RUNNER_EXECUTABLE_ARCH', `${process.platform}/${process.arch}`),
  ];
}

/** Writes file variables to `tmpDir` (mode 0600) and returns the environment the job's processes get. */
export async function jobEnvironment(
  variables: Variable[],
  tmpDir: string,
  base: NodeJS.ProcessEnv,
  owner?: { uid: number; gid: number },
): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const variable of variables) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable.key)) continue;
    if (variable.file) {
      const file = path.join(tmpDir, variable.key);
      await fs.promises.writeFile(file, variable.value, { mode: 0o600 });
      if (owner) await fs.promises.chown(file, owner.uid, owner.gid);
      env[variable.key] = file;
    } else env[variable.key] = variable.value;
  }
  return env;
}

/** The runner's own environment without its secrets: what a job's processes inherit from it. */
export function inheritedEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env))
    if (!/^(FORGE_|DATABASE_URL$|PGPASSWORD$|AWS_|S3_)/.test(key)) out[key] = value;
  return out;
}

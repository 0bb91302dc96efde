/**
 * Times `loadConfig` (the `.gitlab-ci.yml` language, src/ci_config) on a generated configuration of
 * about 2,000 lines spread over the main file and 20 local includes, with extends, !reference,
 * anchors, rules and a parallel matrix; then `planPipeline` on it. Goal: loadConfig under 200 ms.
 *
 * A benchmark, not a test: it prints numbers and never fails on one. Env: CI_BENCH_RUNS (default 30).
 * Run: node --import tsx scripts/bench/ci-lint-config.ts
 */
import { performance } from 'node:perf_hooks';
import { loadConfig, planPipeline, type IncludeSources } from '../../src/ci_config/index.js';
import { INCLUDES, includeFile, mainFile } from './ci-config-sample.js';

const RUNS = Number(process.env.CI_BENCH_RUNS ?? 30);

const files = new Map<string, string>();
for (let n = 0; n < INCLUDES; n++) files.set(`ci/part-${n}.yml`, includeFile(n));
const content = mainFile();
const totalLines = [content, ...files.values()].reduce((sum, t) => sum + t.split('\n').length, 0);
const sources: IncludeSources = {
  local: async (path) => files.get(path) ?? null,
  project: async () => null,
  remote: async () => {
    throw new Error('no remote includes here');
  },
  template: async () => null,
};

const loadTimes: number[] = [];
const planTimes: number[] = [];
let jobs = 0;
for (let i = 0; i < RUNS; i++) {
  const t0 = performance.now();
  const config = await loadConfig({ content, sources, projectPath: 'g/p', sha: 'abc' });
  const t1 = performance.now();
  if (config.errors.length > 0)
    throw new Error(`the generated configuration is invalid: ${config.errors.join('; ')}`);
  const plan = await planPipeline(config, {
    variables: { CI_COMMIT_BRANCH: 'main', CI_PIPELINE_SOURCE: 'push' },
    changedPaths: async () => ['src/a.ts'],
    exists: async () => false,
    ref: 'main',
    tag: false,
    source: 'push',
  });
  const t2 = performance.now();
  if (!plan.ok) throw new Error('the generated configuration made no pipeline');
  jobs = plan.jobs.length;
  loadTimes.push(t1 - t0);
  planTimes.push(t2 - t1);
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] as number;
const print = (line: string) => process.stdout.write(`${line}\n`);
const fmt = (n: number) => `${n.toFixed(1)} ms`;
print(
  `ci config: ${totalLines} lines, ${INCLUDES} includes, ${jobs} planned jobs, ${RUNS} runs (first run included)`,
);
print(
  `  loadConfig   first ${fmt(loadTimes[0] as number)}  median ${fmt(pct(loadTimes, 50))}  p95 ${fmt(pct(loadTimes, 95))}  (goal < 200 ms)`,
);
print(
  `  planPipeline first ${fmt(planTimes[0] as number)}  median ${fmt(pct(planTimes, 50))}  p95 ${fmt(pct(planTimes, 95))}`,
);

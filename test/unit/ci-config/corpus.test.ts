/**
 * The corpus: each `corpus/NN-name.yml` beside `NN-name.expected.json`, which says what the test
 * gives (`context`, `files`, `inputs`…) and what GitLab answers: the stages and jobs of the pipeline
 * (stage, when, allow_failure, needs), or its errors, or that no pipeline is made.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, planPipeline, type PlannedJob } from '../../../src/ci_config/index.js';
import { fakeContext, fakeSources, MAIN_PUSH, type FakeContext, type FakeFiles } from './fake.js';

const DIR = path.join(import.meta.dirname, 'corpus');

interface Expected {
  context?: FakeContext;
  files?: FakeFiles;
  builtinTemplates?: boolean;
  inputs?: Record<string, unknown>;
  loadVariables?: Record<string, string>;
  needsLimit?: number;
  errors?: string[];
  skipped?: boolean;
  stages?: string[];
  jobs?: Array<{
    name: string;
    stage: string;
    when?: string;
    allow_failure?: boolean;
    needs?: string[] | null;
  }>;
  options?: Record<string, Record<string, unknown>>;
  variables?: Record<string, Record<string, string>>;
  globals?: Record<string, string>;
  startIn?: Record<string, string>;
  exitCodes?: Record<string, number[]>;
  trigger?: Record<string, unknown>;
  includes?: Array<[string, string]>;
  resourceGroup?: Record<string, string>;
  interruptible?: Record<string, boolean>;
  pipelineName?: string;
}

const cases = fs
  .readdirSync(DIR)
  .filter((f) => f.endsWith('.yml'))
  .sort()
  .map((f) => f.replace(/\.yml$/, ''));

function summary(j: PlannedJob) {
  return {
    name: j.name,
    stage: j.stage,
    when: j.when,
    allow_failure: j.allowFailure,
    needs: j.needs === null ? null : j.needs.map((n) => n.name),
  };
}

describe('ci_config corpus', () => {
  it('has at least 50 configurations and 20 broken ones', () => {
    const expected = cases.map(
      (c) => JSON.parse(fs.readFileSync(path.join(DIR, `${c}.expected.json`), 'utf8')) as Expected,
    );
    expect(expected.length).toBeGreaterThanOrEqual(50);
    expect(expected.filter((e) => e.errors).length).toBeGreaterThanOrEqual(20);
  });

  it.each(cases)('%s', async (name) => {
    const content = fs.readFileSync(path.join(DIR, `${name}.yml`), 'utf8');
    const exp = JSON.parse(fs.readFileSync(path.join(DIR, `${name}.expected.json`), 'utf8')) as Expected;
    const ctx = exp.context ?? MAIN_PUSH;
    const config = await loadConfig({
      content,
      sources: fakeSources(exp.files, exp.builtinTemplates),
      projectPath: 'group/project',
      sha: 'abc123',
      ...(exp.inputs ? { inputs: exp.inputs } : {}),
      variables: exp.loadVariables ?? ctx.variables ?? {},
    });
    const plan = await planPipeline(config, {
      ...fakeContext(ctx),
      ...(exp.needsLimit ? { needsLimit: exp.needsLimit } : {}),
    });
    if (exp.errors) {
      expect(
        config.errors.length > 0 ? config.errors : plan.ok ? [] : 'errors' in plan ? plan.errors : [],
      ).toEqual(exp.errors);
      return;
    }
    expect(config.errors).toEqual([]);
    if (exp.skipped) {
      expect(plan).toMatchObject({ ok: false, skipped: true });
      return;
    }
    if (!plan.ok) throw new Error(`no pipeline: ${JSON.stringify(plan)}`);
    expect(plan.stages).toEqual(exp.stages);
    for (const j of plan.jobs) expect(j.stageIndex).toBe(config.stages.indexOf(j.stage));
    const want = (exp.jobs ?? []).map((j) => ({
      when: 'on_success',
      allow_failure: false,
      needs: null,
      ...j,
    }));
    expect(plan.jobs.map(summary)).toEqual(want);
    const byName = new Map(plan.jobs.map((j) => [j.name, j]));
    const job = (n: string) => byName.get(n) as PlannedJob;
    for (const [n, o] of Object.entries(exp.options ?? {})) expect(job(n).options).toMatchObject(o);
    for (const [n, v] of Object.entries(exp.variables ?? {})) expect(job(n).variables).toEqual(v);
    for (const [n, s] of Object.entries(exp.startIn ?? {})) expect(job(n).startIn).toBe(s);
    for (const [n, c] of Object.entries(exp.exitCodes ?? {})) expect(job(n).allowFailureExitCodes).toEqual(c);
    for (const [n, t] of Object.entries(exp.trigger ?? {})) expect(job(n).trigger).toEqual(t);
    for (const [n, r] of Object.entries(exp.resourceGroup ?? {})) expect(job(n).resourceGroup).toBe(r);
    for (const [n, i] of Object.entries(exp.interruptible ?? {})) expect(job(n).interruptible).toBe(i);
    if (exp.globals) expect(config.variables).toEqual(exp.globals);
    if (exp.includes) expect(config.includes.map((i) => [i.type, i.location])).toEqual(exp.includes);
    if (exp.pipelineName) expect(plan.name).toBe(exp.pipelineName);
  });
});

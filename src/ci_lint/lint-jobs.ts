/** The `jobs` of a lint result, as GitLab lists them for a static check and for a dry run. */
import type { components } from '../../generated/openapi.js';
import type { JobDefinition, LoadedConfig, PlannedJob } from '../ci_config/index.js';

export type LintJobJson = components['schemas']['CiLintJob'];

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.map(String) : typeof value === 'string' ? [value] : [];

const environmentName = (options: Record<string, unknown>): string | null => {
  const env = options.environment as { name?: unknown } | undefined;
  return typeof env?.name === 'string' ? env.name : null;
};

const objectOrNull = (value: unknown): Record<string, unknown> | null =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

/** A job as written: `only` defaults to branches and tags when it has no `rules`, as GitLab normalises it. */
function staticJob(job: JobDefinition): LintJobJson {
  const { options } = job;
  const hasRules = options.rules !== undefined;
  const when = typeof options.when === 'string' ? options.when : 'on_success';
  const allowFailure = options.allow_failure;
  return {
    name: job.name,
    stage: job.stage,
    before_script: strings(options.before_script),
    script: strings(options.script),
    after_script: strings(options.after_script),
    tag_list: strings(options.tags),
    only: objectOrNull(options.only) ?? (hasRules || job.trigger ? null : { refs: ['branches', 'tags'] }),
    except: objectOrNull(options.except),
    environment: environmentName(options),
    when: when as LintJobJson['when'],
    allow_failure: allowFailure === undefined ? when === 'manual' && !hasRules : allowFailure !== false,
    needs: Array.isArray(options.needs) ? (options.needs as Array<Record<string, unknown>>) : null,
  };
}

/** Every job of the configuration, stage by stage, in file order within a stage. */
export function staticJobs(config: LoadedConfig): LintJobJson[] {
  return config.stages.flatMap((stage) => config.jobs.filter((job) => job.stage === stage).map(staticJob));
}

/** The jobs a simulated pipeline would have, stage by stage. */
export function plannedJobs(jobs: PlannedJob[], stages: string[]): LintJobJson[] {
  const order = (job: PlannedJob) => stages.indexOf(job.stage);
  return [...jobs]
    .sort((a, b) => order(a) - order(b))
    .map((job) => ({
      name: job.name,
      stage: job.stage,
      before_script: strings(job.options.before_script),
      script: strings(job.options.script),
      after_script: strings(job.options.after_script),
      tag_list: strings(job.options.tags),
      only: null,
      except: null,
      environment: environmentName(job.options),
      when: job.when,
      allow_failure: job.allowFailure,
      needs: null,
    }));
}

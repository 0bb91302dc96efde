/**
 * The contract between the `.gitlab-ci.yml` language (this folder: pure, no database, no git, no
 * network of its own) and the families that make pipelines from it. Whatever reads files or URLs is
 * passed in as `IncludeSources`; whatever the rules read is passed in as `RuleContext`.
 */

/** Where included files come from. Each answers the file's text, or null when it does not exist. */
export interface IncludeSources {
  /** A file of the pipeline's own project at the pipeline's commit (`include: local`). */
  local(path: string): Promise<string | null>;
  /**
   * A file of another project (`include: project`), at `ref` or its default branch. `forbidden` when
   * the pipeline's user may not read that project.
   */
  project(
    fullPath: string,
    ref: string | undefined,
    file: string,
  ): Promise<{ content: string; sha: string } | null | 'forbidden'>;
  /** `include: remote`: the caller fetches with bounded time and size, under the local-request rule. */
  remote(url: string): Promise<string>;
  /** `include: template`: a template the server ships (src/ci_config/templates). */
  template(name: string): Promise<string | null>;
  /**
   * `include: local` with a wildcard (`configs/*.yml`, `configs/**.yml`): the pipeline project's paths
   * at its commit, to match here. Without it a wildcard include is a file that does not exist.
   */
  localPaths?(): Promise<string[]>;
}

export interface IncludeRecord {
  type: 'local' | 'file' | 'remote' | 'template' | 'component';
  location: string;
  blob: string | null;
  raw: string | null;
  extra: Record<string, unknown>;
  context_project: string | null;
  context_sha: string | null;
}

export interface LoadInput {
  content: string;
  sources: IncludeSources;
  /** The pipeline's project (`group/project`) and commit, for include records and relative paths. */
  projectPath: string;
  sha: string;
  /** `spec:inputs` values given by the API, a trigger or a schedule. */
  inputs?: Record<string, unknown>;
  /** Variables usable in `include` rules and paths (predefined and project variables). */
  variables?: Record<string, string>;
  /** `include:rules:exists`: whether a file matching one of the globs exists at the commit (else true). */
  exists?(globs: string[]): Promise<boolean>;
}

/** The configuration after includes, extends, !reference, anchors and inputs, checked statically. */
export interface LoadedConfig {
  errors: string[];
  warnings: string[];
  /** The merged configuration as YAML (lint's `merged_yaml`). */
  mergedYaml: string;
  includes: IncludeRecord[];
  stages: string[];
  /** Jobs by name after `parallel` expansion, in file order; hidden (`.name`) jobs are gone. */
  jobs: JobDefinition[];
  workflow: { rules?: unknown[]; name?: string; autoCancel?: Record<string, unknown> };
  /** Top-level `variables`, values only (descriptions and options are in `variableOptions`). */
  variables: Record<string, string>;
  variableOptions: Record<string, { description?: string; value?: string; options?: string[] }>;
}

/** One job as written (after normalisation), before rules are evaluated. */
export interface JobDefinition {
  name: string;
  stage: string;
  /** Every keyword of the job, normalised (script as arrays, `image` as an object…), for the runner. */
  options: Record<string, unknown>;
  /** `trigger` jobs are bridges: a child pipeline (`include`) or another project (`project`). */
  trigger?: {
    include?: unknown[];
    project?: string;
    branch?: string;
    strategy?: 'depend';
    forward?: { yaml_variables?: boolean; pipeline_variables?: boolean };
  };
  /** The name before `parallel` expansion and the index/total, when parallel. */
  parallel?: { baseName: string; index: number; total: number; matrix?: Record<string, string> };
}

/** What rules read when a pipeline is planned (or a dry run lints). */
export interface RuleContext {
  /** Every variable visible to the pipeline: predefined, instance, group, project, pipeline. */
  variables: Record<string, string>;
  /** Paths changed by the push or merge request; null when unknown (changes are then true). */
  changedPaths(compareTo?: string): Promise<string[] | null>;
  /** Whether any file matching one of the globs exists at the commit. */
  exists(globs: string[]): Promise<boolean>;
  /** `only`/`except` refs need the kind of pipeline and the ref. */
  ref: string;
  tag: boolean;
  source: string;
  /** GitLab's `ci_needs_size_limit`: how many jobs one job may need (50 by default). */
  needsLimit?: number;
}

export interface PlannedJob {
  name: string;
  stage: string;
  /** GitLab's `stage_idx`: the stage's place among the configuration's stages (`.pre` is 0). */
  stageIndex: number;
  when: 'on_success' | 'on_failure' | 'always' | 'manual' | 'delayed';
  startIn?: string;
  allowFailure: boolean;
  allowFailureExitCodes?: number[];
  needs: Array<{
    name: string;
    artifacts: boolean;
    optional: boolean;
    pipeline?: string;
    project?: string;
    ref?: string;
    /** `needs:parallel:matrix` as written; the planned needs already name the matching jobs. */
    parallel?: unknown;
  }> | null;
  /** Job-level variables after rules:variables. */
  variables: Record<string, string>;
  /**
   * Every YAML variable the job sees, in GitLab's order: top-level ones it inherits (after workflow
   * rules' variables), then its own, then its matching rule's. Project and pipeline variables are not in it.
   */
  yamlVariables?: Record<string, string>;
  options: Record<string, unknown>;
  trigger?: JobDefinition['trigger'];
  resourceGroup?: string;
  interruptible: boolean;
}

export type PlanResult =
  | {
      ok: true;
      name: string | null;
      /** Variables the matching `workflow:rules` rule sets. */
      variables: Record<string, string>;
      stages: string[];
      jobs: PlannedJob[];
      warnings: string[];
      /** `workflow:auto_cancel`, with the matching workflow rule's `auto_cancel` over it. */
      autoCancel?: Record<string, unknown>;
    }
  /** `workflow:rules` or every job's rules said no: no pipeline, and no error. */
  | { ok: false; skipped: true; reason: string }
  | { ok: false; skipped: false; errors: string[] };

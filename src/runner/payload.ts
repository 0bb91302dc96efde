/** The job `POST /jobs/request` hands a runner (GitLab Runner's common.JobResponse), as far as it is used. */

/** A variable as the server sends it (the runner_jobs family's RunnerVariable). */
export interface JobVariable {
  key: string;
  value: string;
  public?: boolean;
  masked?: boolean;
  /** The value goes to a file; the variable holds its path. */
  file?: boolean;
  /** Not expanded. */
  raw?: boolean;
}

export interface JobStep {
  name: string;
  script: string[];
  timeout?: number;
  when?: 'on_success' | 'on_failure' | 'always';
  allow_failure?: boolean;
}

export interface JobArtifactSpec {
  name?: string;
  untracked?: boolean;
  paths?: string[];
  exclude?: string[];
  when?: 'on_success' | 'on_failure' | 'always';
  artifact_type?: string;
  artifact_format?: string;
  expire_in?: string;
}

export interface JobCacheSpec {
  key?: string;
  untracked?: boolean;
  policy?: string;
  paths?: string[];
  when?: 'on_success' | 'on_failure' | 'always';
}

export interface JobDependency {
  id: number;
  token: string;
  name: string;
  artifacts_file?: { filename: string; size: number } | null;
}

export interface JobImage {
  name?: string;
  alias?: string;
}

export interface JobPayload {
  id: number;
  token: string;
  allow_git_fetch?: boolean;
  job_info?: { id?: number; name?: string; stage?: string; project_id?: number; project_name?: string };
  git_info: {
    repo_url: string;
    ref?: string;
    sha: string;
    before_sha?: string;
    ref_type?: string;
    refspecs?: string[];
    depth?: number;
  };
  runner_info?: { timeout?: number };
  variables?: JobVariable[];
  steps?: JobStep[];
  image?: JobImage | null;
  services?: JobImage[] | null;
  artifacts?: JobArtifactSpec[] | null;
  cache?: JobCacheSpec[] | null;
  dependencies?: JobDependency[] | null;
  features?: { trace_sections?: boolean; token_mask_prefixes?: string[] };
}

/** GitLab's predefined CI/CD variables known when a pipeline is created (those its rules can read). */
import type { GitCommit } from '../git/commits.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { User } from '../users/user.entity.js';
import type { PipelineSource } from './pipeline.entity.js';

export interface MergeRequestInfo {
  id: number;
  iid: number;
  sourceBranch: string;
  targetBranch: string;
  sha: string;
  diffBaseSha: string;
}

export interface PredefinedInput {
  externalUrl: string;
  project: ProjectView['project'];
  ref: string;
  tag: boolean;
  sha: string;
  beforeSha: string;
  commit: GitCommit | null;
  source: PipelineSource;
  user: User | null;
  protectedRef: boolean;
  mergeRequest?: MergeRequestInfo;
}

export const projectFullPath = (project: ProjectView['project']) =>
  `${project.namespace.fullPath}/${project.path}`;

const VISIBILITY: Record<number, string> = { 0: 'private', 10: 'internal', 20: 'public' };

/** `CI_COMMIT_REF_SLUG`: lowercased, anything but a-z and 0-9 as `-`, at most 63 characters, no `-` at the ends. */
export function refSlug(ref: string): string {
  return ref
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '-')
    .slice(0, 63)
    .replace(/^-+|-+$/g, '');
}

export function predefinedVariables(input: PredefinedInput): Record<string, string> {
  const { project, commit } = input;
  const fullPath = projectFullPath(project);
  const url = new URL(input.externalUrl);
  const message = commit?.message ?? '';
  const title = message.split('\n', 1)[0] ?? '';
  const vars: Record<string, string> = {
    CI: 'true',
    GITLAB_CI: 'true',
    CI_SERVER_URL: input.externalUrl,
    CI_SERVER_HOST: url.hostname,
    CI_SERVER_PROTOCOL: url.protocol.replace(':', ''),
    CI_PROJECT_ID: String(project.id),
    CI_PROJECT_NAME: project.path,
    CI_PROJECT_TITLE: project.name,
    CI_PROJECT_PATH: fullPath,
    CI_PROJECT_PATH_SLUG: refSlug(fullPath),
    CI_PROJECT_NAMESPACE: project.namespace.fullPath,
    CI_PROJECT_ROOT_NAMESPACE: project.namespace.fullPath.split('/')[0],
    CI_PROJECT_URL: `${input.externalUrl}/${fullPath}`,
    CI_PROJECT_VISIBILITY: VISIBILITY[project.visibilityLevel] ?? 'private',
    CI_DEFAULT_BRANCH: project.defaultBranch ?? '',
    CI_CONFIG_PATH: '.gitlab-ci.yml',
    CI_COMMIT_SHA: input.sha,
    CI_COMMIT_SHORT_SHA: input.sha.slice(0, 8),
    CI_COMMIT_BEFORE_SHA: input.beforeSha,
    CI_COMMIT_REF_NAME: input.ref,
    CI_COMMIT_REF_SLUG: refSlug(input.ref),
    CI_COMMIT_REF_PROTECTED: String(input.protectedRef),
    CI_COMMIT_MESSAGE: message,
    CI_COMMIT_TITLE: title,
    CI_COMMIT_DESCRIPTION: message.slice(title.length).replace(/^\n+/, ''),
    CI_PIPELINE_SOURCE: input.source,
  };
  if (commit) {
    vars.CI_COMMIT_AUTHOR = `${commit.authorName} <${commit.authorEmail}>`;
    vars.CI_COMMIT_TIMESTAMP = commit.committedDate.toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  if (input.tag) vars.CI_COMMIT_TAG = input.ref;
  else if (!input.mergeRequest) vars.CI_COMMIT_BRANCH = input.ref;
  if (input.source === 'trigger' || input.source === 'pipeline') vars.CI_PIPELINE_TRIGGERED = 'true';
  if (input.user) {
    vars.GITLAB_USER_ID = String(input.user.id);
    vars.GITLAB_USER_LOGIN = input.user.username;
    vars.GITLAB_USER_NAME = input.user.name;
    vars.GITLAB_USER_EMAIL = input.user.email;
  }
  const mr = input.mergeRequest;
  if (mr) {
    Object.assign(vars, {
      CI_MERGE_REQUEST_ID: String(mr.id),
      CI_MERGE_REQUEST_IID: String(mr.iid),
      CI_MERGE_REQUEST_PROJECT_ID: String(project.id),
      CI_MERGE_REQUEST_PROJECT_PATH: fullPath,
      CI_MERGE_REQUEST_PROJECT_URL: `${input.externalUrl}/${fullPath}`,
      CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: mr.sourceBranch,
      CI_MERGE_REQUEST_SOURCE_BRANCH_SHA: mr.sha,
      CI_MERGE_REQUEST_TARGET_BRANCH_NAME: mr.targetBranch,
      CI_MERGE_REQUEST_DIFF_BASE_SHA: mr.diffBaseSha,
      CI_MERGE_REQUEST_EVENT_TYPE: 'detached',
      CI_MERGE_REQUEST_REF_PATH: `refs/merge-requests/${mr.iid}/head`,
    });
  }
  return vars;
}

/** `[ci skip]` or `[skip ci]` (any case) in the commit message skips a push's pipeline. */
export const skipsCi = (message: string) => /\[(ci[ _-]skip|skip[ _-]ci)\]/i.test(message);

/**
 * CI lint outside any project (GitLab 15.x's `POST /ci/lint`) and the CI templates; the project's lint,
 * which reads its repository and variables, is in project-lint.ts.
 */
import { notFound } from '../core/errors.js';
import {
  offsetHeaders,
  pageWindow,
  type Page,
  type PageParams,
  type RequestInfo,
} from '../core/pagination.js';
import { ZERO_SHA } from '../git/ref-changes.js';
import {
  listTemplates,
  loadConfig,
  readTemplate,
  templateSource,
  type IncludeSources,
} from '../ci_config/index.js';
import type { CoreDeps } from '../core/family.js';
import { staticJobs } from './lint-jobs.js';
import { lintResult } from './lint-result.js';
export type { LintResult } from './lint-result.js';
import { ProjectLint } from './project-lint.js';

/** Sources of a configuration checked outside any project: templates only. */
const NO_PROJECT_SOURCES: IncludeSources = {
  local: () => Promise.resolve(null),
  project: () => Promise.resolve('forbidden'),
  remote: (url) => Promise.reject(new Error(`Remote file \`${url}\` could not be fetched outside a project`)),
  template: templateSource,
};

export class CiLintService {
  /** The project's lint (project-lint.ts). */
  readonly project: ProjectLint;

  constructor(core: CoreDeps, deps: ConstructorParameters<typeof ProjectLint>[1]) {
    this.project = new ProjectLint(core, deps);
  }

  templates(params: PageParams, request: RequestInfo): Page<{ key: string; name: string }> {
    const all = listTemplates();
    const { page, perPage, offset } = pageWindow(params);
    return {
      items: all.slice(offset, offset + perPage),
      headers: offsetHeaders(all.length, page, perPage, request),
    };
  }

  template(key: string): { name: string; content: string } {
    const entry = listTemplates().find((t) => t.key === key);
    const content = entry ? readTemplate(key) : null;
    if (!entry || content === null) throw notFound('Template');
    return { name: entry.name, content };
  }

  /** The instance-level check: static, outside any project. */
  async lintWithoutProject(content: string) {
    const config = await loadConfig({ content, sources: NO_PROJECT_SOURCES, projectPath: '', sha: ZERO_SHA });
    return lintResult(config, config.errors.length ? [] : staticJobs(config));
  }
}

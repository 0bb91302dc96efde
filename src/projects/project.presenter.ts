import { visibilityName } from '../core/abilities.js';
import { presentNamespaceSummary } from '../namespaces/namespace.presenter.js';
import {
  blobPath,
  PROJECT_FIELD_PARTS,
  type PresentOptions,
  type ProjectJson,
  type ProjectSimpleJson,
} from './project-fields.js';
import { projectSettings } from './project-settings.js';
import type { ProjectView } from './projects.service.js';

export type { PresentOptions, ProjectJson, ProjectSimpleJson } from './project-fields.js';

/** `<external URL>/<namespace>/<project>`: the project's page, and the base of its commit and file URLs. */
export const projectWebUrl = (view: ProjectView, externalUrl: string) =>
  `${externalUrl}/${view.project.namespace.fullPath}/${view.project.path}`;

/** The fields every caller may see, also the whole of `simple=true` and anonymous lists. */
export function presentProjectSimple({ project }: ProjectView, externalUrl: string): ProjectSimpleJson {
  const namespace = project.namespace;
  const fullPath = `${namespace.fullPath}/${project.path}`;
  return {
    id: project.id,
    description: project.description,
    name: project.name,
    name_with_namespace: `${namespace.fullName} / ${project.name}`,
    path: project.path,
    path_with_namespace: fullPath,
    created_at: project.createdAt.toISOString(),
    default_branch: project.defaultBranch,
    tag_list: project.topics,
    topics: project.topics,
    ssh_url_to_repo: `git@${new URL(externalUrl).hostname}:${fullPath}.git`,
    http_url_to_repo: `${externalUrl}/${fullPath}.git`,
    web_url: `${externalUrl}/${fullPath}`,
    readme_url: project.readmePath
      ? `${externalUrl}/${fullPath}/${blobPath(project.defaultBranch, project.readmePath)}`
      : null,
    forks_count: project.forksCount,
    avatar_url: null,
    star_count: project.starCount,
    last_activity_at: project.lastActivityAt.toISOString(),
    visibility: visibilityName(project.visibilityLevel),
    namespace: presentNamespaceSummary(namespace, externalUrl),
  };
}

/**
 * A project's full representation: the simple fields, then each part of `PROJECT_FIELD_PARTS`, a fork's
 * source, and last the fields other families contribute (`projectFields`), loaded with the view.
 */
export function presentProject(view: ProjectView, options: PresentOptions): ProjectJson {
  const { project } = view;
  const simple = presentProjectSimple(view, options.externalUrl);
  const input = {
    view,
    settings: projectSettings(project.settings),
    options,
    fullPath: simple.path_with_namespace,
  };
  // Object.assign onto one object, not spreads: V8 builds a literal that starts with a spread and goes on
  // for a hundred properties some twenty times slower.
  const json = simple as ProjectJson;
  for (const part of PROJECT_FIELD_PARTS) Object.assign(json, part(input));
  if (project.forkedFromProjectId !== null) {
    json.mr_default_target_self = input.settings.mr_default_target_self;
    if (view.forkedFrom)
      json.forked_from_project = presentProjectSimple(view.forkedFrom, options.externalUrl);
  }
  if (view.contributed) Object.assign(json, view.contributed);
  return json;
}

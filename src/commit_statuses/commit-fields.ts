/**
 * A commit's `status` and `last_pipeline` (GitLab's CommitDetail): its newest pipeline, through the
 * commits family's `commitFields` point, one query for every commit of the response.
 */
import type { DataSource } from 'typeorm';
import { canProject } from '../core/abilities.js';
import type { CommitFieldsContribution } from '../commits/extension-points.js';
import { entityRows } from '../db/rows.js';
import { Pipeline } from '../pipelines/pipeline.entity.js';
import { presentPipelineBasic } from '../pipelines/pipeline.presenter.js';
import type { ProjectsService } from '../projects/projects.service.js';

export function commitPipelineFields(
  dataSource: DataSource,
  projects: ProjectsService,
): CommitFieldsContribution {
  return {
    async read(manager, { caller, view, shas, externalUrl }) {
      const found = (await manager.query(
        `SELECT DISTINCT ON (p.sha) row_to_json(p) AS row FROM ci_pipelines p
         WHERE p.project_id = $1 AND p.sha = ANY($2) ORDER BY p.sha, p.id DESC`,
        [view.project.id, shas],
      )) as Array<{ row: Record<string, unknown> }>;
      const rows = entityRows(dataSource, Pipeline, 'p');
      const mayRead = canProject(caller, 'read_pipeline', projects.subject(view));
      const ctx = { fullPath: `${view.project.namespace.fullPath}/${view.project.path}`, externalUrl };
      return new Map(
        found.map(({ row }) => {
          const pipeline = rows.fromJson(row);
          return [
            pipeline.sha,
            { status: pipeline.status, last_pipeline: mayRead ? presentPipelineBasic(pipeline, ctx) : null },
          ];
        }),
      );
    },
  };
}

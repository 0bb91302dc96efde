/**
 * Which pipelines belong to a merge request, in SQL (GitLab's `all_pipelines`): its merge request
 * pipelines, and its source branch's pipelines for the heads of its versions. Both run in the source
 * project, which keeps every lookup on the pipelines' `(project_id, …)` indexes. Child pipelines are
 * their parents' business.
 */
export const mergeRequestPipelinesSql = (p: string, mr: string) => `(${p}.project_id = ${mr}.source_project_id
  AND ${p}.source <> 'parent_pipeline' AND (${p}.merge_request_id = ${mr}.id
    OR (${p}.ref = ${mr}.source_branch AND NOT ${p}.tag
      AND ${p}.sha IN (SELECT d.head_commit_sha FROM merge_request_diffs d WHERE d.merge_request_id = ${mr}.id))))`;

/**
 * The head pipeline of merge request `mr`: the newest of its pipelines for its current head. A lateral
 * subquery (`JOIN LATERAL (…) hp ON true`) selecting the pipeline's row as `hp`.
 */
export const headPipelineSql = (mr: string) => `(SELECT p.* FROM ci_pipelines p
  WHERE p.project_id = ${mr}.source_project_id AND p.sha = ${mr}.head_sha AND p.source <> 'parent_pipeline'
    AND (p.merge_request_id = ${mr}.id OR (p.ref = ${mr}.source_branch AND NOT p.tag))
  ORDER BY p.id DESC LIMIT 1)`;

import type { components } from '../../generated/openapi.js';
import type { MilestoneRecord } from './milestones.service.js';

export type MilestoneJson = components['schemas']['Milestone'];

/** Today in UTC, GitLab's default time zone, as `YYYY-MM-DD`. */
const today = () => new Date().toISOString().slice(0, 10);

export function presentMilestone(
  { milestone, webPath }: MilestoneRecord,
  externalUrl: string,
): MilestoneJson {
  return {
    id: milestone.id,
    iid: milestone.iid,
    ...(milestone.projectId !== null ? { project_id: milestone.projectId } : {}),
    ...(milestone.groupId !== null ? { group_id: milestone.groupId } : {}),
    title: milestone.title,
    description: milestone.description,
    state: milestone.state,
    created_at: milestone.createdAt.toISOString(),
    updated_at: milestone.updatedAt.toISOString(),
    due_date: milestone.dueDate,
    start_date: milestone.startDate,
    // Dates of the same length compare as text; the column holds four-digit years only.
    expired: milestone.dueDate !== null && milestone.dueDate < today(),
    web_url: `${externalUrl}/${webPath}`,
  };
}

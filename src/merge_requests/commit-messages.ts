/**
 * The messages of merge and squash commits: GitLab's defaults, and the project's `merge_commit_template`
 * and `squash_commit_template` with GitLab's `%{…}` variables.
 */

/** What the templates' variables are made of, read before the merge. */
export interface MessageFacts {
  sourceBranch: string;
  targetBranch: string;
  title: string;
  description: string | null;
  /** `group/project!1`. */
  reference: string;
  /** `!1`. */
  localReference: string;
  sourceProjectId: number;
  url: string;
  mergedBy: { name: string; email: string };
  /** The merge request's commits, oldest first. */
  commits: Array<{ message: string; authorName: string; authorEmail: string }>;
}

const trailers = (name: string, people: Array<{ name: string; email: string }>) =>
  people.map((person) => `${name}: ${person.name} <${person.email}>`).join('\n');

function variables(facts: MessageFacts): Record<string, string> {
  const first = facts.commits[0]?.message.trimEnd() ?? '';
  const multiline = facts.commits.find((commit) => commit.message.trim().includes('\n'));
  const merger = facts.mergedBy.email.toLowerCase();
  const coAuthors = new Map<string, { name: string; email: string }>();
  for (const commit of facts.commits) {
    const email = commit.authorEmail.toLowerCase();
    if (email !== merger && !coAuthors.has(email))
      coAuthors.set(email, { name: commit.authorName, email: commit.authorEmail });
  }
  return {
    source_branch: facts.sourceBranch,
    target_branch: facts.targetBranch,
    title: facts.title,
    description: facts.description ?? '',
    reference: facts.reference,
    local_reference: facts.localReference,
    source_project_id: String(facts.sourceProjectId),
    url: facts.url,
    first_commit: first,
    first_multiline_commit: multiline ? multiline.message.trimEnd() : facts.title,
    merged_by: `${facts.mergedBy.name} <${facts.mergedBy.email}>`,
    co_authored_by: trailers('Co-authored-by', [...coAuthors.values()]),
    all_commits: facts.commits.map((commit) => `* ${commit.message.trimEnd()}`).join('\n\n'),
    // Issues, approvals and submitted reviews do not exist in forge-api yet: empty, as GitLab renders them
    // for a merge request without any.
    issues: '',
    approved_by: '',
    reviewed_by: '',
  };
}

/**
 * Fills a template. A variable that comes out empty at the end of a line is removed with the blank
 * space (line breaks included) before it, so that an empty `%{description}` leaves no blank lines.
 */
export function fillTemplate(template: string, facts: MessageFacts): string {
  const values = variables(facts);
  let message = template.replace(/\r\n/g, '\n');
  for (const [key, value] of Object.entries(values)) {
    if (value === '') message = message.replace(new RegExp(`\\s*%\\{${key}\\}$`, 'gm'), '');
  }
  message = message.replace(/%\{([a-z_]+)\}/g, (whole, key: string) => (key in values ? values[key] : whole));
  return message.trimEnd();
}

/** GitLab's merge commit message without a template. */
export function defaultMergeMessage(
  facts: Pick<MessageFacts, 'sourceBranch' | 'targetBranch' | 'title' | 'reference'>,
): string {
  return [
    `Merge branch '${facts.sourceBranch}' into '${facts.targetBranch}'`,
    facts.title,
    `See merge request ${facts.reference}`,
  ].join('\n\n');
}

export const mergeCommitMessage = (template: string | null, facts: MessageFacts) =>
  template ? fillTemplate(template, facts) : defaultMergeMessage(facts);

/** Without a template, GitLab's squash commit message is the merge request's title. */
export const squashCommitMessage = (template: string | null, facts: MessageFacts) =>
  template ? fillTemplate(template, facts) : facts.title;

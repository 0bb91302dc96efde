import { describe, expect, it } from 'vitest';
import {
  defaultMergeMessage,
  fillTemplate,
  squashCommitMessage,
  type MessageFacts,
} from '../../src/merge_requests/commit-messages.js';

const facts: MessageFacts = {
  sourceBranch: 'feature',
  targetBranch: 'main',
  title: 'Parse lazily',
  description: null,
  reference: 'group/app!7',
  localReference: '!7',
  sourceProjectId: 3,
  url: 'http://forge.test/group/app/-/merge_requests/7',
  mergedBy: { name: 'Mia Merger', email: 'mia@example.com' },
  commits: [
    { message: 'First\n', authorName: 'Ann', authorEmail: 'ann@example.com' },
    { message: 'Second\n\nWith a body\n', authorName: 'Mia Merger', authorEmail: 'MIA@example.com' },
    { message: 'Third\n', authorName: 'Ann', authorEmail: 'ann@example.com' },
  ],
};

describe('commit message templates', () => {
  it.each([
    ['%{source_branch} into %{target_branch}', 'feature into main'],
    ['%{title} (%{reference}, %{local_reference})', 'Parse lazily (group/app!7, !7)'],
    ['%{first_commit}', 'First'],
    ['%{first_multiline_commit}', 'Second\n\nWith a body'],
    ['%{all_commits}', '* First\n\n* Second\n\nWith a body\n\n* Third'],
    ['%{merged_by}', 'Mia Merger <mia@example.com>'],
    // The merger is no co-author (emails compare without case), each co-author once.
    ['%{co_authored_by}', 'Co-authored-by: Ann <ann@example.com>'],
    ['%{url} %{source_project_id}', 'http://forge.test/group/app/-/merge_requests/7 3'],
    // An empty variable at a line's end goes with the blank lines before it.
    ['%{title}\n\n%{description}\n\nSee %{reference}', 'Parse lazily\n\nSee group/app!7'],
    ['%{title}\n\n%{approved_by}\n%{reviewed_by}', 'Parse lazily'],
    ['Closes: %{issues}', 'Closes:'],
    ['%{unknown} stays', '%{unknown} stays'],
    ['line\r\nbreaks', 'line\nbreaks'],
  ])('%j gives %j', (template, expected) => {
    expect(fillTemplate(template, facts)).toBe(expected);
  });

  it('defaults as GitLab does', () => {
    expect(defaultMergeMessage(facts)).toBe(
      "Merge branch 'feature' into 'main'\n\nParse lazily\n\nSee merge request group/app!7",
    );
    expect(squashCommitMessage(null, facts)).toBe('Parse lazily');
  });
});

/** GitLab's CODEOWNERS syntax: sections, optional sections, approval counts, default owners, patterns. */
import { describe, expect, it } from 'vitest';
import {
  entriesFor,
  parseCodeOwners,
  patternMatcher,
  splitOwners,
} from '../../src/merge_request_approvals/codeowners.js';
import { evaluate, type ApprovalRuleRow } from '../../src/merge_request_approvals/approval-state.js';
import { toSentence } from '../../src/merge_request_approvals/approvals.service.js';

const FILE = `# Comment
* @everyone
/README.md @readme-owner   # trailing comment
docs/ @docs-team dev@example.com
*.rb @ruby

[Backend][2] @backend-default
app/ @alice
lib/
/config/**/*.yml @ops

^[Optional Section]
*.md @writer

[backend]
db/ @dba
path\\ with\\ spaces/ @spacey
`;

describe('parseCodeOwners', () => {
  const file = parseCodeOwners(FILE);

  it('reads sections in order with their approvals, optional flag and default owners', () => {
    expect(file.sections.map((s) => [s.name, s.optional, s.approvalsRequired, s.defaultOwners])).toEqual([
      ['codeowners', false, 1, []],
      ['Backend', false, 2, ['@backend-default']],
      ['Optional Section', true, 1, []],
    ]);
  });

  it('gives an entry without owners its section’s default owners, and merges repeated sections', () => {
    const lib = file.entries.find((entry) => entry.pattern === 'lib/')!;
    expect(lib.owners).toEqual(['@backend-default']);
    const db = file.entries.find((entry) => entry.pattern === 'db/')!;
    expect(db.section).toBe('Backend');
    expect(db.approvalsRequired).toBe(2);
  });

  it('drops comments and keeps escaped spaces', () => {
    expect(file.entries.find((entry) => entry.pattern === '/README.md')!.owners).toEqual(['@readme-owner']);
    expect(file.entries.some((entry) => entry.pattern === 'path with spaces/')).toBe(true);
  });
});

describe('matching', () => {
  const file = parseCodeOwners(FILE);
  const owners = (path: string) =>
    entriesFor(file, path)
      .map((entry) => `${entry.section}:${entry.pattern}`)
      .sort();

  it.each([
    ['README.md', ['Optional Section:*.md', 'codeowners:/README.md']],
    ['sub/README.md', ['Optional Section:*.md', 'codeowners:*']],
    ['docs/guide/intro.txt', ['codeowners:docs/']],
    ['nested/docs/a.txt', ['codeowners:docs/']],
    ['app/models/user.rb', ['Backend:app/', 'codeowners:*.rb']],
    ['config/a/b/c.yml', ['Backend:/config/**/*.yml', 'codeowners:*']],
    ['config/c.yml', ['Backend:/config/**/*.yml', 'codeowners:*']],
    ['other/config/c.yml', ['codeowners:*']],
    ['db/schema.sql', ['Backend:db/', 'codeowners:*']],
    ['path with spaces/x', ['Backend:path with spaces/', 'codeowners:*']],
  ])('%s is owned by the last matching entry of each section', (path, expected) => {
    expect(owners(path)).toEqual(expected);
  });

  it.each([
    ['*', '/a/b/c', true],
    ['/docs/*', '/docs/a', true],
    ['/docs/*', '/docs/a/b', false],
    ['*.js', '/a/b.js', true],
    ['?.txt', '/a.txt', true],
    ['?.txt', '/ab.txt', false],
    ['[ab].txt', '/b.txt', true],
    ['.gitlab/', '/.gitlab/ci.yml', true],
  ])('%s against %s: %s', (pattern, path, expected) => {
    expect(patternMatcher(pattern).test(path)).toBe(expected);
  });
});

describe('owners and state', () => {
  it('splits usernames and groups from e-mail addresses', () => {
    expect(splitOwners(['@alice', '@group/sub', 'Dev@Example.com'])).toEqual({
      names: ['alice', 'group/sub'],
      emails: ['dev@example.com'],
    });
  });

  it('joins mentions as GitLab’s to_sentence', () => {
    expect(toSentence(['@a'])).toBe('@a');
    expect(toSentence(['@a', '@b'])).toBe('@a and @b');
    expect(toSentence(['@a', '@b', '@c'])).toBe('@a, @b, and @c');
  });

  const rule = (attrs: Partial<ApprovalRuleRow>): ApprovalRuleRow => ({
    id: 1,
    project_id: 1,
    merge_request_id: 1,
    source_rule_id: null,
    name: 'r',
    rule_type: 'regular',
    report_type: null,
    section: null,
    approvals_required: 1,
    applies_to_all_protected_branches: false,
    user_ids: [],
    group_ids: [],
    protected_branch_ids: [],
    created_at: new Date(),
    ...attrs,
  });
  const approval = (userId: number) => ({
    merge_request_id: 1,
    user_id: userId,
    sha: null,
    created_at: new Date(),
  });

  it.each([
    ['no rule, fallback 0', [], [], 0, 0, 0],
    ['no rule, fallback 2, one approval', [], [1], 2, 2, 1],
    [
      'a rule of 2 with one eligible approval',
      [rule({ approvals_required: 2, user_ids: [1, 2] })],
      [1, 3],
      0,
      2,
      1,
    ],
    ['a group member counts', [rule({ approvals_required: 1, group_ids: [9] })], [7], 0, 1, 0],
    [
      'any approver counts anyone',
      [rule({ rule_type: 'any_approver', approvals_required: 2 })],
      [5, 6],
      0,
      2,
      0,
    ],
    [
      'two rules add up',
      [
        rule({ id: 1, approvals_required: 1, user_ids: [1] }),
        rule({ id: 2, approvals_required: 1, user_ids: [2] }),
      ],
      [1],
      0,
      2,
      1,
    ],
  ] as const)('%s', (_what, rules, approvers, fallback, required, left) => {
    const state = evaluate([...rules], approvers.map(approval), new Map([[9, [7]]]), fallback);
    expect([state.approvalsRequired, state.approvalsLeft]).toEqual([required, left]);
  });
});

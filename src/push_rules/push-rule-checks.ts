/**
 * A project's push rule (the push_rules family) applied to ref changes: branch names, tag deletion, and
 * the new commits' messages, authors, committers and files, with GitLab's messages. New commits are those
 * no existing ref reaches; during `git push` they sit in git's quarantine, which `env` points at.
 * Regexes are RE2 (re2js), as GitLab's untrusted regexps are.
 */
import type { DataSource } from 'typeorm';
import { RE2JS } from 're2js';
import type { PreReceiveCheck } from '../git/pre-receive.js';
import { blobSizes, filesAddedOrChanged, newCommits, type NewCommit } from '../git/pushed-commits.js';
import { ZERO_SHA } from '../git/ref-changes.js';
import { PushRule } from './push-rule.entity.js';
const MIB = 1024 * 1024;
const DCO_SIGNOFF = /^Signed-off-by: .+/im;

interface Change {
  ref: string;
  oldSha: string;
  newSha: string;
}

/** Where the commits are, and who pushes them. */
export interface ContentContext {
  dir: string;
  /** git's quarantine variables of a running push. */
  env?: Record<string, string>;
  defaultBranch: string | null;
  userId: number | null;
  /** API writes may delete tags; `deny_delete_tag` is about `git push`. */
  throughApi?: boolean;
}

/** Why RE2 refuses a pattern, or null when it compiles. */
export function regexSyntaxError(pattern: string): string | null {
  try {
    RE2JS.compile(pattern);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

const matches = (pattern: string, text: string, multiline = false) =>
  RE2JS.compile(pattern, multiline ? RE2JS.MULTILINE : 0)
    .matcher(text)
    .find();

export class PushRuleChecks {
  constructor(private readonly dataSource: DataSource) {}

  /** The push rule as a pre-receive check of the new commits, where the push says where they are. */
  preReceiveCheck(): PreReceiveCheck {
    return {
      stage: 'content',
      refusal: (push, changes) =>
        push.content
          ? this.refusal(push.project.id, changes, {
              ...push.content,
              defaultBranch: push.project.defaultBranch,
              userId: push.caller.user?.id ?? null,
              throughApi: push.throughApi,
            })
          : Promise.resolve(null),
    };
  }

  /** The first refusal of the project's push rule for these changes, or null (also without a rule). */
  async refusal(projectId: number, changes: Change[], context: ContentContext): Promise<string | null> {
    const rule = await this.dataSource.getRepository(PushRule).findOneBy({ projectId });
    if (!rule) return null;
    for (const change of changes) {
      const deleting = change.newSha === ZERO_SHA;
      if (change.ref.startsWith('refs/tags/') && deleting && rule.denyDeleteTag && !context.throughApi)
        return 'You cannot delete a tag';
      if (change.ref.startsWith('refs/heads/') && !deleting && rule.branchNameRegex) {
        const branch = change.ref.slice('refs/heads/'.length);
        if (branch !== context.defaultBranch && !matches(rule.branchNameRegex, branch))
          return `Branch name does not follow the pattern '${rule.branchNameRegex}'`;
      }
    }
    const tips = changes.filter((c) => c.newSha !== ZERO_SHA).map((c) => c.newSha);
    if (tips.length === 0 || !this.checksCommits(rule)) return null;
    const commits = await newCommits(context.dir, tips, context.env);
    if (commits.length === 0) return null;
    const pusher = await this.pusher(context.userId);
    const knownEmails = rule.memberCheck ? await this.knownEmails(commits) : new Set<string>();
    for (const commit of commits) {
      const reason = this.commitRefusal(rule, commit, pusher, knownEmails);
      if (reason) return reason;
    }
    if (rule.fileNameRegex || rule.maxFileSize > 0) return this.fileRefusal(rule, commits, context);
    return null;
  }

  private checksCommits(rule: PushRule): boolean {
    return Boolean(
      rule.commitMessageRegex ||
      rule.commitMessageNegativeRegex ||
      rule.authorEmailRegex ||
      rule.fileNameRegex ||
      rule.maxFileSize > 0 ||
      rule.memberCheck ||
      rule.commitCommitterCheck ||
      rule.commitCommitterNameCheck ||
      rule.rejectNonDcoCommits,
    );
  }

  private commitRefusal(
    rule: PushRule,
    commit: NewCommit,
    pusher: { name: string; email: string } | null,
    knownEmails: Set<string>,
  ): string | null {
    if (rule.commitCommitterCheck && commit.committerEmail.toLowerCase() !== pusher?.email.toLowerCase())
      return `You cannot push commits for '${commit.committerEmail}'. You can only push commits if the committer email is one of your own verified emails.`;
    if (rule.commitCommitterNameCheck && commit.committerName !== pusher?.name)
      return 'Your git username is inconsistent with GitLab account name';
    if (rule.commitMessageRegex && !matches(rule.commitMessageRegex, commit.message, true))
      return `Commit message does not follow the pattern '${rule.commitMessageRegex}'`;
    if (rule.commitMessageNegativeRegex && matches(rule.commitMessageNegativeRegex, commit.message, true))
      return `Commit message contains the forbidden pattern '${rule.commitMessageNegativeRegex}'`;
    if (rule.rejectNonDcoCommits && !DCO_SIGNOFF.test(commit.message))
      return 'Commit message must contain a DCO signoff';
    if (rule.authorEmailRegex) {
      if (!matches(rule.authorEmailRegex, commit.authorEmail))
        return `Author's commit email '${commit.authorEmail}' does not follow the pattern '${rule.authorEmailRegex}'`;
      if (!matches(rule.authorEmailRegex, commit.committerEmail))
        return `Committer's email '${commit.committerEmail}' does not follow the pattern '${rule.authorEmailRegex}'`;
    }
    if (rule.memberCheck) {
      if (!knownEmails.has(commit.authorEmail.toLowerCase()))
        return `Author '${commit.authorEmail}' is not a member of team`;
      if (!knownEmails.has(commit.committerEmail.toLowerCase()))
        return `Committer '${commit.committerEmail}' is not a member of team`;
    }
    return null;
  }

  /** Files added or changed by the new commits: names against the regex, blob sizes against the limit. */
  private async fileRefusal(rule: PushRule, commits: NewCommit[], context: ContentContext) {
    const changed = [];
    for (const commit of commits)
      changed.push(...(await filesAddedOrChanged(context.dir, commit.sha, context.env)));
    if (rule.fileNameRegex) {
      const prohibited = changed.find((file) => matches(rule.fileNameRegex!, file.path));
      if (prohibited)
        return `File name ${prohibited.path} was prohibited by the pattern "${rule.fileNameRegex}".`;
    }
    if (rule.maxFileSize > 0 && changed.length) {
      const sizes = await blobSizes(
        context.dir,
        changed.map((file) => file.blob),
        context.env,
      );
      const large = changed.find((_, i) => sizes[i] > rule.maxFileSize * MIB);
      if (large)
        return `File "${large.path}" is larger than the allowed size of ${rule.maxFileSize} MiB. Use Git LFS to manage this file.`;
    }
    return null;
  }

  private async pusher(userId: number | null) {
    if (userId === null) return null;
    const rows: Array<{ name: string; email: string }> = await this.dataSource.query(
      'SELECT name, email FROM users WHERE id = $1',
      [userId],
    );
    return rows[0] ?? null;
  }

  /** The commits' author and committer emails that belong to a user of the instance (lowercased). */
  private async knownEmails(commits: NewCommit[]): Promise<Set<string>> {
    const emails = [...new Set(commits.flatMap((c) => [c.authorEmail, c.committerEmail]))].map((e) =>
      e.toLowerCase(),
    );
    const rows: Array<{ email: string }> = await this.dataSource.query(
      'SELECT lower(email) AS email FROM users WHERE lower(email) = ANY($1::text[])',
      [emails],
    );
    return new Set(rows.map((row) => row.email));
  }
}

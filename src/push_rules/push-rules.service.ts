import type { DataSource } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import { ApiError, badParameter, notFound, validationFailed } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import { isUniqueViolation } from '../db/errors.js';
import { PushRuleChecks, regexSyntaxError } from './push-rule-checks.js';
import type { ProjectView } from '../projects/projects.service.js';
import { PushRule } from './push-rule.entity.js';

export type PushRuleParams = components['schemas']['PushRuleInput'];

/** The API's attributes and the entity's, in GitLab's order (the order of the "are missing" message). */
const ATTRIBUTES = {
  commit_message_regex: 'commitMessageRegex',
  commit_message_negative_regex: 'commitMessageNegativeRegex',
  branch_name_regex: 'branchNameRegex',
  author_email_regex: 'authorEmailRegex',
  file_name_regex: 'fileNameRegex',
  deny_delete_tag: 'denyDeleteTag',
  member_check: 'memberCheck',
  commit_committer_check: 'commitCommitterCheck',
  commit_committer_name_check: 'commitCommitterNameCheck',
  reject_non_dco_commits: 'rejectNonDcoCommits',
  max_file_size: 'maxFileSize',
} as const satisfies Record<keyof PushRuleParams, keyof PushRule>;

const REGEXES = [
  'commit_message_regex',
  'commit_message_negative_regex',
  'branch_name_regex',
  'author_email_regex',
  'file_name_regex',
] as const;

const ruleExists = () => new ApiError(422, { message: 'Project push rule exists' });

export class PushRulesService {
  private readonly dataSource: DataSource;

  /** The rule applied to pushes and API writes (contributed to the pre-receive checks). */
  readonly checks: PushRuleChecks;

  constructor(deps: CoreDeps) {
    this.dataSource = deps.dataSource;
    this.checks = new PushRuleChecks(deps.dataSource);
  }

  get(view: ProjectView): Promise<PushRule | null> {
    return this.dataSource.getRepository(PushRule).findOneBy({ projectId: view.project.id });
  }

  async create(view: ProjectView, params: PushRuleParams): Promise<PushRule> {
    const changes = this.changes(params);
    const rules = this.dataSource.getRepository(PushRule);
    if (await rules.existsBy({ projectId: view.project.id })) throw ruleExists();
    try {
      const { identifiers } = await rules.insert({ ...changes, projectId: view.project.id });
      return await rules.findOneByOrFail({ id: identifiers[0].id as number });
    } catch (err) {
      if (isUniqueViolation(err)) throw ruleExists();
      throw err;
    }
  }

  async update(view: ProjectView, params: PushRuleParams): Promise<PushRule> {
    const changes = this.changes(params);
    const rules = this.dataSource.getRepository(PushRule);
    const { affected } = await rules.update({ projectId: view.project.id }, changes);
    if (!affected) throw notFound('Push Rule');
    return rules.findOneByOrFail({ projectId: view.project.id });
  }

  async remove(view: ProjectView): Promise<void> {
    const { affected } = await this.dataSource.getRepository(PushRule).delete({ projectId: view.project.id });
    if (!affected) throw notFound('Push Rule');
  }

  /** The given attributes as column values: at least one, and every regex valid RE2 (empty means none). */
  private changes(params: PushRuleParams): Partial<PushRule> {
    const given = (Object.keys(ATTRIBUTES) as Array<keyof PushRuleParams>).filter(
      (name) => params[name] !== undefined,
    );
    if (given.length === 0)
      throw badParameter(
        `${Object.keys(ATTRIBUTES).join(', ')} are missing, at least one parameter must be provided`,
      );
    const errors: Record<string, string[]> = {};
    for (const name of REGEXES) {
      const value = params[name];
      const error = value ? regexSyntaxError(value) : null;
      if (error) errors[name] = [`not valid RE2 syntax: ${error}`];
    }
    if (Object.keys(errors).length) throw validationFailed(errors);
    const changes: Record<string, unknown> = {};
    for (const name of given) {
      const value = params[name];
      changes[ATTRIBUTES[name]] =
        REGEXES.includes(name as (typeof REGEXES)[number]) && value === '' ? null : value;
    }
    return changes as Partial<PushRule>;
  }
}

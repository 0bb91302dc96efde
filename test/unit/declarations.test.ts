/**
 * The permission declarations: the outcome rule the pipeline and the matrix share, and the lint
 * plugin's ability names, which it reads from the families' declarations and must equal what the server uses.
 */
import fs from 'node:fs';
// The catalogue of abilities is filled from the list of families.
import '../../src/families.js';
import { describe, expect, it } from 'vitest';
import {
  ABILITY_NAMES,
  CALLER_KINDS,
  declaredOutcome,
  pipelineAbility,
  RULE_NAMES,
  type CallerKind,
  type DeclaredOutcome,
  type SubjectKind,
  type VisibilityName,
} from '../../src/core/abilities.js';
// @ts-expect-error: a plain JavaScript Redocly plugin, without types.
import { readAbilityNames, readRuleNames } from '../../scripts/redocly-declarations.js';

describe('declaredOutcome', () => {
  const cases: Array<
    [SubjectKind, string | undefined, boolean, CallerKind, VisibilityName, DeclaredOutcome]
  > = [
    ['project', 'read_code', true, 'anonymous', 'public', 'allowed'],
    ['project', 'read_code', true, 'anonymous', 'internal', 'not_found'],
    ['project', 'read_code', false, 'anonymous', 'public', 'unauthorized'],
    ['project', 'read_code', true, 'guest', 'private', 'forbidden'],
    ['project', 'read_code', true, 'guest', 'internal', 'allowed'],
    ['project', 'read_code', true, 'external', 'internal', 'not_found'],
    ['project', 'read_code', true, 'blocked', 'public', 'unauthorized'],
    ['project', 'push_code', false, 'reporter', 'public', 'forbidden'],
    ['project', 'push_code', false, 'developer', 'private', 'allowed'],
    ['project', 'remove_project', false, 'maintainer', 'private', 'forbidden'],
    ['project', 'remove_project', false, 'owner', 'private', 'allowed'],
    ['project', 'remove_project', false, 'admin', 'private', 'allowed'],
    ['project', 'admin_project', false, 'non_member', 'private', 'not_found'],
    ['group', 'admin_group_member', false, 'maintainer', 'public', 'forbidden'],
    ['group', 'read_group', true, 'non_member', 'internal', 'allowed'],
    ['instance', 'read_instance', true, 'anonymous', 'public', 'allowed'],
    ['instance', 'use_api', true, 'anonymous', 'public', 'unauthorized'],
    ['instance', 'create_group', false, 'external', 'public', 'forbidden'],
    ['instance', 'create_group', false, 'non_member', 'public', 'allowed'],
    ['instance', 'admin_all_resources', false, 'owner', 'public', 'forbidden'],
    ['instance', 'admin_all_resources', false, 'admin', 'public', 'allowed'],
    ['none', undefined, false, 'anonymous', 'public', 'unauthorized'],
    ['none', undefined, true, 'anonymous', 'public', 'allowed'],
  ];
  it.each(cases)(
    '%s %s (anonymous allowed: %s) for %s on %s: %s',
    (subject, ability, anon, caller, vis, out) => {
      expect(declaredOutcome({ subject, ability, allowsAnonymous: anon }, CALLER_KINDS[caller], vis)).toBe(
        out,
      );
    },
  );
});

describe('the lint rule and the server agree on ability names', () => {
  it('reads the same names from abilities.ts as the module exports', () => {
    expect(readAbilityNames()).toEqual(ABILITY_NAMES);
  });

  it('reads the same finer rules as the module exports', () => {
    expect(readRuleNames()).toEqual(RULE_NAMES);
  });

  it("the pipeline enforces a rule's floor, or only sight when the service answers 400", () => {
    const removal = { subject: 'project', ability: 'admin_project_member', rule: 'or_self' } as const;
    expect(pipelineAbility(removal)).toBe('read_project');
    expect(pipelineAbility({ ...removal, subject: 'group', ability: 'admin_group_member' })).toBe(
      'read_group',
    );
    const token = { subject: 'group', ability: 'admin_group_access_token', refusal: 'bad_request' } as const;
    // Only sight: the subject's resolver already answers 404 for what the caller cannot see.
    expect(pipelineAbility(token)).toBeUndefined();
    expect(pipelineAbility({ subject: 'project', ability: 'read_snippet', rule: 'admins_only' })).toBe(
      'read_snippet',
    );
  });

  it('every operation of the contract declares a known ability for its subject', () => {
    const spec = JSON.parse(
      fs.readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'),
    ) as { paths: Record<string, Record<string, Record<string, unknown>>> };
    for (const item of Object.values(spec.paths))
      for (const op of Object.values(item)) {
        if (!op || typeof op !== 'object' || !('operationId' in op)) continue;
        const subject = op['x-subject'] as SubjectKind;
        if (subject === 'none') expect(op['x-ability'], String(op.operationId)).toBeUndefined();
        else expect(ABILITY_NAMES[subject], String(op.operationId)).toContain(op['x-ability']);
      }
  });
});

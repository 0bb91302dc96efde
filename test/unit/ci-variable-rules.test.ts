/** The environment scope rules of CI/CD variables: which environments a scope matches, and their order. */
import { describe, expect, it } from 'vitest';
import { scopeMatches, scopeOrder } from '../../src/ci_variables/ci-variable-rules.js';

describe('scopeMatches', () => {
  const cases: Array<[string, string | null, boolean]> = [
    ['*', null, true],
    ['production', null, false],
    ['*', 'anything/at-all', true],
    ['production', 'production', true],
    ['production', 'Production', false],
    ['review/*', 'review/feature-1', true],
    ['review/*', 'review/', true],
    ['review/*', 'staging', false],
    ['*-eu', 'prod-eu', true],
    ['*-eu', 'prod-us', false],
    // `.`, `_` and `$` are themselves, not patterns (GitLab escapes LIKE's `_` and `%`).
    ['prod.eu', 'prodxeu', false],
    ['prod_eu', 'prodxeu', false],
    ['${ENV}', '${ENV}', true],
  ];
  it.each(cases)('%s against %s: %s', (scope, environment, expected) => {
    expect(scopeMatches(scope, environment)).toBe(expected);
  });
});

describe('scopeOrder', () => {
  it('puts wider scopes first, as the C collation orders their LIKE patterns', () => {
    expect(['production', 'prod*', '*', 'review/*'].sort(scopeOrder)).toEqual([
      '*',
      'prod*',
      'production',
      'review/*',
    ]);
  });
});

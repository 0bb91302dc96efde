/** The `rules:if` expression language, table-driven from GitLab's documented examples. */
import { describe, expect, it } from 'vitest';
import { evaluateExpression, expandVariables, isValidExpression } from '../../../src/ci_config/index.js';

const VARS = {
  CI_COMMIT_BRANCH: 'main',
  CI_DEFAULT_BRANCH: 'main',
  CI_COMMIT_REF_NAME: 'feature/login',
  CI_PIPELINE_SOURCE: 'merge_request_event',
  CI_MERGE_REQUEST_LABELS: 'backend,pipeline:run-in-ruby3',
  CI_COMMIT_MESSAGE: 'Fix the build\n\n[skip tests]',
  EMPTY: '',
  PATTERN: '/^feature\\/.*$/',
  NOT_A_PATTERN: 'feature',
  NUMBER: '10',
};

describe('rules:if expressions', () => {
  it.each([
    ['$CI_COMMIT_BRANCH == "main"', true],
    ["$CI_COMMIT_BRANCH == 'main'", true],
    ['$CI_COMMIT_BRANCH != "main"', false],
    ['$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH', true],
    ['"main" == $CI_COMMIT_BRANCH', true],
    ['$CI_PIPELINE_SOURCE == "merge_request_event"', true],
    ['$UNDEFINED == null', true],
    ['$EMPTY == null', false],
    ['$EMPTY == ""', true],
    ['$UNDEFINED == ""', false],
    ['$UNDEFINED != null', false],
    ['$CI_COMMIT_BRANCH', true],
    ['$EMPTY', false],
    ['$UNDEFINED', false],
    ['$CI_COMMIT_REF_NAME =~ /^feature/', true],
    ['$CI_COMMIT_REF_NAME =~ /^FEATURE/', false],
    ['$CI_COMMIT_REF_NAME =~ /^FEATURE/i', true],
    ['$CI_COMMIT_REF_NAME !~ /^feature/', false],
    ['$UNDEFINED =~ /.*/', true],
    ['$UNDEFINED =~ /.+/', false],
    ['$UNDEFINED !~ /.+/', true],
    ['$CI_COMMIT_BRANCH =~ $UNDEFINED', false],
    ['$CI_COMMIT_BRANCH !~ $UNDEFINED', true],
    ['"feat" =~ $NOT_A_PATTERN', true],
    ['$1ABC == null', true],
    ['$CI_COMMIT_REF_NAME =~ $PATTERN', true],
    ['$CI_COMMIT_REF_NAME =~ $NOT_A_PATTERN', false],
    ['$CI_MERGE_REQUEST_LABELS =~ /pipeline:run-in-ruby3/', true],
    ['$CI_COMMIT_MESSAGE =~ /\\[skip tests\\]/', true],
    ['$CI_COMMIT_MESSAGE =~ /build.\\[skip/', false],
    ['$CI_COMMIT_MESSAGE =~ /build.+\\[skip/m', true],
    ['$CI_COMMIT_BRANCH == "main" && $CI_PIPELINE_SOURCE == "push"', false],
    ['$CI_COMMIT_BRANCH == "main" || $CI_PIPELINE_SOURCE == "push"', true],
    ['$CI_COMMIT_BRANCH == "develop" || $CI_COMMIT_BRANCH == "main" && $UNDEFINED', false],
    ['($CI_COMMIT_BRANCH == "develop" || $CI_COMMIT_BRANCH == "main") && $NUMBER', true],
    ['$CI_COMMIT_BRANCH == "develop" || ($CI_COMMIT_BRANCH == "main" && $NUMBER)', true],
    ['(($CI_COMMIT_BRANCH))', true],
    ['$NUMBER == "10"', true],
    ['$UNDEFINED || $EMPTY', false],
    ['$UNDEFINED || $NUMBER', true],
  ])('%s → %s', (expr, want) => {
    expect(isValidExpression(expr)).toBe(true);
    expect(evaluateExpression(expr, VARS)).toBe(want);
  });

  it.each([
    '',
    '$VAR = "x"',
    '$VAR === "x"',
    '$VAR == "unterminated',
    '$VAR ==',
    '== "x"',
    '($VAR == "x"',
    '$VAR == "x")',
    '$VAR && || $OTHER',
    'VAR == "x"',
    '$VAR =~ /[unclosed/',
    '$VAR == "a" "b"',
    '$ == "x"',
    '$VAR =~ //',
    '$VAR =~ /a/x',
    Array.from({ length: 70 }, (_, i) => `$V${i} == "x"`).join(' && '),
  ])('%j is invalid expression syntax', (expr) => {
    expect(isValidExpression(expr)).toBe(false);
    expect(() => evaluateExpression(expr, VARS)).toThrow('invalid expression syntax');
  });
});

describe('expandVariables', () => {
  it.each([
    ['$A-${B}', 'a-b'],
    ['%A%', 'a'],
    ['pre $UNKNOWN post', 'pre  post'],
    ['$A$B', 'ab'],
    ['${ A }', 'a'],
    ['no variables', 'no variables'],
    ['$$A', '$a'],
  ])('%s → %s', (text, want) => {
    expect(expandVariables(text, { A: 'a', B: 'b' })).toBe(want);
  });

  it('keeps unknown variables when asked', () => {
    expect(expandVariables('$A $UNKNOWN', { A: 'a' }, { keepUnknown: true })).toBe('a $UNKNOWN');
  });
});

import { describe, expect, it } from 'vitest';
import { globToRegExp } from '../../src/pipelines/include-sources.js';
import type { CiStatus } from '../../src/pipelines/pipeline.entity.js';
import { durationSeconds, matchesNeed } from '../../src/pipelines/pipeline-processing.js';
import { refSlug, skipsCi } from '../../src/pipelines/predefined-variables.js';
import { composite } from '../../src/pipelines/statuses.js';

/** `status` or `status!` (allowed to fail). */
const jobs = (...entries: string[]) =>
  entries.map((entry) => ({ status: entry.replace('!', '') as CiStatus, allowFailure: entry.endsWith('!') }));

describe('composite status (GitLab lib/gitlab/ci/status/composite.rb)', () => {
  it.each<[string[], boolean, CiStatus | null, boolean]>([
    [[], false, null, false],
    [['success', 'success'], false, 'success', false],
    [['success', 'failed'], false, 'failed', false],
    [['success', 'failed!'], false, 'success', true],
    [['success', 'canceled!'], false, 'success', true],
    [['skipped'], false, 'skipped', false],
    [['success', 'skipped'], false, 'success', false],
    [['created'], false, 'created', false],
    [['pending', 'created'], false, 'pending', false],
    [['running', 'created'], false, 'running', false],
    [['success', 'created'], false, 'running', false],
    [['canceled', 'success'], false, 'canceled', false],
    [['manual'], false, 'manual', false],
    [['manual!'], false, 'skipped', false],
    [['success', 'manual!'], false, 'success', false],
    [['success', 'manual'], false, 'manual', false],
    [['scheduled', 'success'], false, 'scheduled', false],
    [['waiting_for_resource', 'success'], false, 'waiting_for_resource', false],
    [['failed', 'running'], false, 'running', false],
    [['skipped', 'success'], true, 'skipped', false],
    [['manual!'], true, 'skipped', false],
    [['success', 'running'], true, 'pending', false],
    [['success', 'failed'], true, 'failed', false],
  ])('%j (dag %s) is %s', (statuses, dag, status, warnings) => {
    expect(composite(jobs(...statuses), dag)).toEqual({ status, warnings });
  });
});

describe('helpers', () => {
  it.each([
    ['30 seconds', 30],
    ['1 minute', 60],
    ['2 hours 30 min', 9000],
    ['1 day', 86400],
    ['10', 10],
  ])('start_in %s is %i s', (text, seconds) => expect(durationSeconds(text)).toBe(seconds));

  it.each([
    ['build', 'build', true],
    ['build 1/3', 'build', true],
    ['test: [3.2]', 'test', true],
    ['builder', 'build', false],
    ['build 1', 'build', false],
  ])('%s is a job of needs %s: %s', (job, need, matches) => expect(matchesNeed(job, need)).toBe(matches));

  it.each([
    ['ci/*.yml', 'ci/child.yml', true],
    ['ci/*.yml', 'ci/sub/child.yml', false],
    ['ci/**/*.yml', 'ci/sub/child.yml', true],
    ['**/*.md', 'README.md', true],
    ['*.{js,ts}', 'a.ts', true],
    ['Dockerfile', 'Dockerfile', true],
    ['Dockerfile', 'x/Dockerfile', false],
  ])('glob %s matches %s: %s', (glob, path, matches) => expect(globToRegExp(glob).test(path)).toBe(matches));

  it('slugs refs and reads skip markers as GitLab does', () => {
    expect(refSlug('Feature/Login_Page')).toBe('feature-login-page');
    expect(refSlug(`-${'a'.repeat(70)}`)).toHaveLength(62);
    expect(['Fix [ci skip]', 'x [skip ci]', 'X [CI SKIP]', 'no skip'].map(skipsCi)).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });
});

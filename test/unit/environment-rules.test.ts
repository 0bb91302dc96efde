/** GitLab's environment rules: slugs, tiers guessed from names, a job's `environment:` and deployment statuses. */
import { describe, expect, it } from 'vitest';
import {
  deploymentStatusFor,
  environmentSlug,
  guessTier,
  jobEnvironment,
  validEnvironmentName,
} from '../../src/environments/rules.js';
import type { Job } from '../../src/pipelines/pipeline.entity.js';

const job = (environment: unknown, extra: Partial<Job> = {}) =>
  ({
    id: 7,
    projectId: 3,
    pipelineId: 5,
    name: 'deploy',
    stage: 'deploy',
    ref: 'feature/Login',
    tag: false,
    sha: 'abcdef0123456789',
    yamlVariables: { APP: 'web' },
    options: environment === undefined ? {} : { environment },
    ...extra,
  }) as Job;

describe('environment slugs', () => {
  it('keeps a name that is already a slug, and suffixes one it had to change', () => {
    expect(environmentSlug('production')).toBe('production');
    expect(environmentSlug('review/fix-foo')).toMatch(/^review-fix-foo-[a-z0-9]{6}$/);
    expect(environmentSlug('1st')).toMatch(/^env-1st-[a-z0-9]{6}$/);
    const long = environmentSlug('review/a-very-long-branch-name-indeed');
    expect(long).toMatch(/^review-a-very-lon-[a-z0-9]{6}$/);
    expect(long.length).toBeLessThanOrEqual(24);
  });
});

describe('tiers guessed from names', () => {
  it.each([
    ['review/x', 'development'],
    ['dev', 'development'],
    ['trunk', 'development'],
    ['qa', 'testing'],
    ['acceptance', 'testing'],
    ['staging', 'staging'],
    ['pre-prod', 'staging'],
    ['demo', 'staging'],
    ['production', 'production'],
    ['live', 'production'],
    ['canary', 'other'],
  ])('%s is %s', (name, tier) => {
    expect(guessTier(name)).toBe(tier);
  });
});

describe("a job's environment", () => {
  it('expands the name and url with the job variables, unknown ones as nothing', () => {
    expect(
      jobEnvironment(
        job({ name: 'review/$CI_COMMIT_REF_SLUG-${APP}$NOPE', url: 'https://$APP.example.com' }),
      ),
    ).toEqual({ name: 'review/feature-login-web', url: 'https://web.example.com', action: 'start' });
  });

  it('reads action, on_stop, auto_stop_in and deployment_tier; ignores what GitLab would refuse', () => {
    expect(
      jobEnvironment(
        job({
          name: 'prod',
          action: 'stop',
          on_stop: 'x',
          auto_stop_in: '1 day',
          deployment_tier: 'production',
        }),
      ),
    ).toEqual({ name: 'prod', action: 'stop', onStop: 'x', autoStopIn: '1 day', tier: 'production' });
    expect(jobEnvironment(job({ name: 'prod', action: 'bogus', deployment_tier: 'mars' }))).toEqual({
      name: 'prod',
      action: 'start',
    });
    expect(jobEnvironment(job(undefined))).toBeNull();
    expect(jobEnvironment(job({ name: '$NOPE' }))).toBeNull();
    expect(validEnvironmentName('review/')).toBe(false);
    expect(validEnvironmentName('a b_c.d/{e}$')).toBe(true);
  });

  it('moves deployments with finished and running jobs only', () => {
    expect(
      ['created', 'pending', 'manual', 'running', 'success', 'failed', 'canceled', 'skipped'].map(
        deploymentStatusFor,
      ),
    ).toEqual([null, null, null, 'running', 'success', 'failed', 'canceled', 'skipped']);
  });
});

/** What GitLab reads out of merge request text, and its time tracking durations. */
import { describe, expect, it } from 'vitest';
import { humanDuration, parseDuration } from '../../src/merge_requests/durations.js';
import { isDraftTitle, taskCompletion } from '../../src/merge_requests/merge-request-text.js';

const H = 3600;

describe('parseDuration', () => {
  it.each([
    ['1w2d3h4m', 5 * 8 * H + 2 * 8 * H + 3 * H + 4 * 60],
    ['1mo 2w', 4 * 5 * 8 * H + 2 * 5 * 8 * H],
    ['3h30m', 3.5 * H],
    ['2 hours 30 minutes', 2.5 * H],
    ['1 day, 2 hours and 5 mins', 10 * H + 300],
    ['90m', 90 * 60],
    ['45s', 45],
    ['1.5h', 1.5 * H],
    ['2', 2 * H],
    ['-1h', -H],
    [' 1H 5M ', H + 300],
  ])('%s is %d seconds', (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  it.each(['', 'soon', '1x', 'h', '1h soon', '-', '99999999999999h'])('refuses %j', (text) => {
    expect(parseDuration(text)).toBeNull();
  });
});

describe('humanDuration', () => {
  it.each([
    [0, null],
    [90 * 60, '1h 30m'],
    [5 * 8 * H + 2 * 8 * H + 3 * H + 240, '1w 2d 3h 4m'],
    [4 * 5 * 8 * H + 1, '1mo 1s'],
    [-H, '-1h'],
  ])('%d seconds is %j', (seconds, text) => {
    expect(humanDuration(seconds)).toBe(text);
  });
});

describe('isDraftTitle', () => {
  it.each([
    ['Draft: Fix', true],
    ['draft:fix', true],
    ['[Draft] Fix', true],
    ['(draft) Fix', true],
    ['Draft - Fix', true],
    ['Draft -Fix', false],
    ['  [DRAFT]Fix', true],
    ['Drafting the fix', false],
    ['Fix: Draft', false],
    ['WIP: Fix', false],
  ])('%j is a draft: %s', (title, draft) => {
    expect(isDraftTitle(title)).toBe(draft);
  });
});

describe('taskCompletion', () => {
  it.each([
    [null, 0, 0],
    ['no tasks', 0, 0],
    ['- [ ] a\n- [x] b\n* [X] c\n+ [ ] d\n1. [x] e', 5, 3],
    ['  - [x] nested\n-[x] not a task\n- [y] not a task\ntext - [x] not at start', 1, 1],
  ])('%j has %d tasks, %d done', (description, count, completed) => {
    expect(taskCompletion(description)).toEqual({ count, completed_count: completed });
  });
});

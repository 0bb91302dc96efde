/**
 * A pipeline's test report as GitLab builds it (`Gitlab::Ci::Reports::TestReport`/`TestSuite`), from the
 * stored results of its latest (not retried) jobs: one suite per test suite name (jobs of one
 * `parallel: N` group share theirs), a case kept once per status and key (the later job's wins); a
 * suite with a parsing error has no cases and counts nothing. And the comparison of two reports
 * (`TestReportsComparer`), for a merge request's head and base pipelines.
 */
import type { TestStatus } from './junit-parser.js';

export interface StoredSuiteResult {
  jobId: number;
  suiteName: string;
  counts: Record<TestStatus, number>;
  totalTime: number;
  suiteError: string | null;
}

export interface StoredTestCase {
  jobId: number;
  status: TestStatus;
  key: string;
  name: string | null;
  classname: string | null;
  file: string | null;
  executionTime: number;
  systemOutput: string | null;
  attachment: string | null;
}

export interface TestSuite {
  name: string;
  totalTime: number;
  suiteError: string | null;
  cases: Record<TestStatus, Map<string, StoredTestCase>>;
}

/** GitLab's order of statuses in a suite's case list. */
export const STATUS_ORDER: readonly TestStatus[] = ['error', 'failed', 'success', 'skipped'];

const emptyCases = (): TestSuite['cases'] => ({
  error: new Map(),
  failed: new Map(),
  success: new Map(),
  skipped: new Map(),
});

/** The suites of a report, in the order their first job came. */
export function buildSuites(results: StoredSuiteResult[], cases: StoredTestCase[]): Map<string, TestSuite> {
  const suites = new Map<string, TestSuite>();
  const byJob = new Map<number, TestSuite>();
  for (const result of results) {
    let suite = suites.get(result.suiteName);
    if (!suite) {
      suite = { name: result.suiteName, totalTime: 0, suiteError: null, cases: emptyCases() };
      suites.set(result.suiteName, suite);
    }
    suite.totalTime += result.totalTime;
    if (result.suiteError) suite.suiteError = result.suiteError;
    byJob.set(result.jobId, suite);
  }
  for (const testCase of cases) {
    const suite = byJob.get(testCase.jobId);
    const bucket = suite?.cases[testCase.status];
    if (!bucket) continue;
    bucket.delete(testCase.key);
    bucket.set(testCase.key, testCase);
  }
  return suites;
}

export const suiteCount = (suite: TestSuite, status: TestStatus) =>
  suite.suiteError ? 0 : suite.cases[status].size;

export const suiteTotal = (suite: TestSuite) =>
  STATUS_ORDER.reduce((sum, status) => sum + suiteCount(suite, status), 0);

/** The suite's cases: errors, failures, successes, skips, each slowest first. */
export function sortedCases(suite: TestSuite): StoredTestCase[] {
  if (suite.suiteError) return [];
  return STATUS_ORDER.flatMap((status) =>
    [...suite.cases[status].values()].sort((a, b) => b.executionTime - a.executionTime),
  );
}

/** `error` (a parsing error), `failed` (failures or errors) or `success`. */
export function suiteStatus(suite: TestSuite): 'error' | 'failed' | 'success' {
  if (suite.suiteError) return 'error';
  return suiteCount(suite, 'failed') + suiteCount(suite, 'error') > 0 ? 'failed' : 'success';
}

/** The merge request widget's limits: 100 cases per kind of change, at least 10 per list. */
const MAX_TESTS = 100;
const MIN_TESTS = 10;

export interface SuiteComparison {
  name: string;
  status: 'error' | 'failed' | 'success';
  head: TestSuite;
  base: TestSuite | null;
  newFailures: StoredTestCase[];
  existingFailures: StoredTestCase[];
  resolvedFailures: StoredTestCase[];
  newErrors: StoredTestCase[];
  existingErrors: StoredTestCase[];
  resolvedErrors: StoredTestCase[];
  summary: { total: number; resolved: number; errored: number; failed: number };
}

const values = (suite: TestSuite | null, status: TestStatus) =>
  suite && !suite.suiteError ? [...suite.cases[status].values()] : [];
const keys = (suite: TestSuite | null, status: TestStatus) =>
  new Set(values(suite, status).map((c) => c.key));

function compareKind(head: TestSuite, base: TestSuite | null, status: 'failed' | 'error') {
  const before = keys(base, status);
  const now = values(head, status);
  const fresh = now.filter((c) => !before.has(c.key));
  const existing = now.filter((c) => before.has(c.key));
  const resolved = values(head, 'success').filter((c) => before.has(c.key));
  const limit = (used: number) => Math.max(MAX_TESTS - used, MIN_TESTS);
  return {
    all: { fresh, existing, resolved },
    shown: {
      fresh: fresh.slice(0, limit(0)),
      existing: existing.slice(0, limit(fresh.length)),
      resolved: resolved.slice(0, limit(fresh.length + existing.length)),
    },
  };
}

/** Each head suite against the base suite of the same name (GitLab's `TestSuiteComparer`). */
export function compareSuites(head: Map<string, TestSuite>, base: Map<string, TestSuite>): SuiteComparison[] {
  return [...head.values()].map((suite) => {
    const other = base.get(suite.name) ?? null;
    const failures = compareKind(suite, other, 'failed');
    const errors = compareKind(suite, other, 'error');
    return {
      name: suite.name,
      status: suiteStatus(suite),
      head: suite,
      base: other,
      newFailures: failures.shown.fresh,
      existingFailures: failures.shown.existing,
      resolvedFailures: failures.shown.resolved,
      newErrors: errors.shown.fresh,
      existingErrors: errors.shown.existing,
      resolvedErrors: errors.shown.resolved,
      summary: {
        total: suiteTotal(suite),
        resolved: failures.all.resolved.length + errors.all.resolved.length,
        errored: errors.all.fresh.length + errors.all.existing.length,
        failed: failures.all.fresh.length + failures.all.existing.length,
      },
    };
  });
}

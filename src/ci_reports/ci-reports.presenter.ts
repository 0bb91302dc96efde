/**
 * GitLab's entities for test reports: `TestReportEntity`, `TestSuiteEntity` (with details),
 * `TestCaseEntity`, `TestReportSummaryEntity`/`TestSuiteSummaryEntity`, and the merge request widget's
 * `TestReportsComparerEntity`/`TestSuiteComparerEntity`.
 */
import type { components } from '../../generated/openapi.js';
import type { PipelineTestReport, MergeRequestTestComparison } from './ci-reports.service.js';
import type { TestStatus } from './junit-parser.js';
import {
  STATUS_ORDER,
  sortedCases,
  suiteCount,
  suiteTotal,
  type StoredSuiteResult,
  type StoredTestCase,
  type TestSuite,
} from './test-reports.js';

type Schemas = components['schemas'];

export interface CaseLinks {
  externalUrl: string;
  fullPath: string;
}

export function presentTestCase(testCase: StoredTestCase, links: CaseLinks): Schemas['TestCase'] {
  return {
    status: testCase.status,
    name: testCase.name,
    classname: testCase.classname,
    file: testCase.file,
    execution_time: testCase.executionTime,
    system_output: testCase.systemOutput,
    stack_trace: null,
    recent_failures: null,
    ...(testCase.attachment
      ? {
          attachment_url: `${links.externalUrl}/${links.fullPath}/-/jobs/${testCase.jobId}/artifacts/file/${testCase.attachment}`,
        }
      : {}),
  };
}

const counts = (suite: TestSuite) => ({
  total_count: suiteTotal(suite),
  success_count: suiteCount(suite, 'success'),
  failed_count: suiteCount(suite, 'failed'),
  skipped_count: suiteCount(suite, 'skipped'),
  error_count: suiteCount(suite, 'error'),
});

export function presentTestReport(report: PipelineTestReport, links: CaseLinks): Schemas['TestReport'] {
  const suites = [...report.suites.values()];
  const sum = (pick: (suite: TestSuite) => number) => suites.reduce((total, s) => total + pick(s), 0);
  return {
    total_time: sum((s) => s.totalTime),
    total_count: sum(suiteTotal),
    success_count: sum((s) => suiteCount(s, 'success')),
    failed_count: sum((s) => suiteCount(s, 'failed')),
    skipped_count: sum((s) => suiteCount(s, 'skipped')),
    error_count: sum((s) => suiteCount(s, 'error')),
    test_suites: suites.map((suite) => ({
      name: suite.name,
      total_time: suite.totalTime,
      ...counts(suite),
      suite_error: suite.suiteError,
      test_cases: sortedCases(suite).map((c) => presentTestCase(c, links)),
    })),
  };
}

const resultTotal = (r: StoredSuiteResult) =>
  STATUS_ORDER.reduce((sum, status: TestStatus) => sum + r.counts[status], 0);

function summaryOf(results: StoredSuiteResult[]) {
  const sum = (pick: (r: StoredSuiteResult) => number) => results.reduce((t, r) => t + pick(r), 0);
  return {
    time: sum((r) => r.totalTime),
    count: sum(resultTotal),
    success: sum((r) => r.counts.success),
    failed: sum((r) => r.counts.failed),
    skipped: sum((r) => r.counts.skipped),
    error: sum((r) => r.counts.error),
    suite_error: results.find((r) => r.suiteError)?.suiteError ?? null,
  };
}

/** The summary, from each job's stored counts (GitLab's build report results). */
export function presentTestReportSummary(results: StoredSuiteResult[]): Schemas['TestReportSummary'] {
  const bySuite = new Map<string, StoredSuiteResult[]>();
  for (const result of results)
    bySuite.set(result.suiteName, [...(bySuite.get(result.suiteName) ?? []), result]);
  return {
    total: summaryOf(results),
    test_suites: [...bySuite].map(([name, group]) => {
      const s = summaryOf(group);
      return {
        name,
        total_time: s.time,
        total_count: s.count,
        success_count: s.success,
        failed_count: s.failed,
        skipped_count: s.skipped,
        error_count: s.error,
        build_ids: group.map((r) => r.jobId),
        suite_error: s.suite_error,
      };
    }),
  };
}

export function presentComparison(
  comparison: MergeRequestTestComparison,
  links: CaseLinks,
): Schemas['TestReportsComparison'] {
  const cases = (list: StoredTestCase[]) => list.map((c) => presentTestCase(c, links));
  const suites = comparison.suites.map((s) => ({
    name: s.name,
    status: s.status,
    summary: s.summary,
    suite_errors: { head: s.head.suiteError, base: s.base?.suiteError ?? null },
    new_failures: cases(s.newFailures),
    resolved_failures: cases(s.resolvedFailures),
    existing_failures: cases(s.existingFailures),
    new_errors: cases(s.newErrors),
    resolved_errors: cases(s.resolvedErrors),
    existing_errors: cases(s.existingErrors),
  }));
  const sum = (key: 'total' | 'resolved' | 'errored' | 'failed') =>
    suites.reduce((total, s) => total + s.summary[key], 0);
  return {
    status: suites.some((s) => s.status === 'failed') ? 'failed' : 'success',
    summary: {
      total: sum('total'),
      resolved: sum('resolved'),
      errored: sum('errored'),
      failed: sum('failed'),
    },
    suites,
  };
}

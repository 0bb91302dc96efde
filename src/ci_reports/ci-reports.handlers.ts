import { defineHandlers } from '../core/handler.js';
import { projectFullPath } from '../pipelines/predefined-variables.js';
import { presentComparison, presentTestReport, presentTestReportSummary } from './ci-reports.presenter.js';

export const ciReportsHandlers = defineHandlers(['ciReports'], {
  async getPipelineTestReport({ params, subject, services, request }) {
    const report = await services.ciReports.testReport(subject, params.pipeline_id);
    const links = { externalUrl: request.externalUrl, fullPath: projectFullPath(subject.project) };
    return { status: 200, body: presentTestReport(report, links) };
  },

  async getPipelineTestReportSummary({ params, subject, services }) {
    const results = await services.ciReports.testReportSummary(subject, params.pipeline_id);
    return { status: 200, body: presentTestReportSummary(results) };
  },

  async getMergeRequestTestReports({ params, subject, services, request }) {
    const comparison = await services.ciReports.mergeRequestComparison(subject, params.merge_request_iid);
    const links = { externalUrl: request.externalUrl, fullPath: projectFullPath(subject.project) };
    return { status: 200, body: presentComparison(comparison, links) };
  },
});

import { defineFamily, defineService } from '../core/family.js';
import { ciReportsHandlers } from './ci-reports.handlers.js';
import { CiReportsService } from './ci-reports.service.js';
import { CiReports1768300250000 } from './migrations/1768300250000-ci-reports.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    /** What report artifacts feed: test reports, dotenv variables, coverage and security reports. */
    ciReports: CiReportsService;
  }
}

export const ciReportsManifest = defineFamily({
  name: 'ci_reports',
  migrations: [CiReports1768300250000],
  services: [
    defineService(
      'ciReports',
      ['planLimits', 'pipelines', 'mergeRequests'],
      (core, deps) => new CiReportsService(core, deps),
    ),
  ],
  contributes: {
    // Each uploaded report is read in the upload's transaction; an invalid dotenv refuses the upload.
    artifactReports: ({ ciReports }) => ciReports.reader,
    // Later jobs receive the dotenv variables of the jobs they depend on.
    runnerJobPayload: ({ ciReports }) => ciReports.payload,
  },
  handlers: ciReportsHandlers,
});

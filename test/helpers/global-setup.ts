/** vitest global setup: migrates one database for the whole run, which each test file then copies. */
import type { TestProject } from 'vitest/node';
import { createPGliteDump, createPostgresTemplate } from './template-database.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const url = process.env.FORGE_TEST_DATABASE_URL;
  if (url) {
    const { template, drop } = await createPostgresTemplate(url);
    project.provide('forgeTestTemplate', template);
    return drop;
  }
  const dump = await createPGliteDump();
  project.provide('forgeTestTemplate', { pgliteDump: dump.file, pgliteServerDump: dump.serverFile });
  return dump.drop;
}

import os from 'node:os';
import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/helpers/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Migrates one database for the run; each test file copies it (test/helpers/database.ts).
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    // Test files wait on PostgreSQL, git and python more than they compute: at least two at a time.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // A worker imports the server's modules once for all its files instead of once per file; each
    // file still gets its own server, database and directories (test/helpers/server.ts).
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    // The longest files first, so that the workers finish together (test/helpers/sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
  },
});

/**
 * Makes a migrated PGlite data directory at `workerData.dir`, in a worker thread of its own: initdb's
 * WebAssembly memory (hundreds of MB) goes with the thread instead of staying with the server.
 */
import { workerData } from 'node:worker_threads';
import { createDataSource, migrate } from './data-source.js';

const dataSource = await createDataSource({ pgliteDir: (workerData as { dir: string }).dir });
try {
  await migrate(dataSource);
} finally {
  await dataSource.destroy();
}

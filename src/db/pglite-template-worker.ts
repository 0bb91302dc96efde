/**
 * Makes a migrated PGlite data directory at `workerData.dir`, in a worker thread of its own: initdb's
 * WebAssembly memory (hundreds of MB) goes with the thread instead of staying with the server.
 * The thread's entry point, so a composition root: classes do not cross into a thread, the list of
 * families does.
 */
import 'reflect-metadata';
import { workerData } from 'node:worker_threads';
import { databaseModel } from '../families.js';
import { createDataSource, migrate } from './data-source.js';

const dataSource = await createDataSource({ pgliteDir: (workerData as { dir: string }).dir }, databaseModel);
try {
  await migrate(dataSource);
} finally {
  await dataSource.destroy();
}

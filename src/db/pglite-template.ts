import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { migrationNames, type DatabaseModel } from './data-source.js';

/**
 * A fresh embedded database starts as a copy of a migrated data directory: PGlite's initdb and the
 * migrations take 10 s and more of WebAssembly, a copy a fraction of a second. The template is made on
 * the first fresh start and kept per PGlite version and set of migrations, under
 * node_modules/.cache/forge-api. Starting from it is no promise about the schema: the start migrates
 * as always, which finds nothing to do.
 */
export async function startFromTemplate(pgliteDir: string, model: DatabaseModel): Promise<void> {
  if (!isEmptyDir(pgliteDir)) return;
  const cache = cacheDir();
  if (!cache) return;
  const template = path.join(cache, `pglite-${templateKey(model)}`);
  if (!fs.existsSync(path.join(template, 'PG_VERSION'))) await makeTemplate(cache, template);
  // Copied beside the target and renamed into place: a start cut short leaves no half a database.
  fs.mkdirSync(path.dirname(pgliteDir), { recursive: true });
  const partial = `${pgliteDir}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  fs.cpSync(template, partial, { recursive: true });
  fs.rmSync(pgliteDir, { recursive: true, force: true });
  fs.renameSync(partial, pgliteDir);
}

const isEmptyDir = (dir: string) => !fs.existsSync(dir) || fs.readdirSync(dir).length === 0;

/** node_modules/.cache/forge-api of the checkout, from src/db/ (tsx) and dist/src/db/ (the build); undefined if not writable. */
function cacheDir(): string | undefined {
  const root = ['../../', '../../../']
    .map((up) => fileURLToPath(new URL(up, import.meta.url)))
    .find((dir) => fs.existsSync(path.join(dir, 'package.json')));
  if (!root) return undefined;
  const dir = path.join(root, 'node_modules', '.cache', 'forge-api');
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.accessSync(dir, fs.constants.W_OK);
    return dir;
  } catch {
    return undefined;
  }
}

function templateKey(model: DatabaseModel): string {
  const require = createRequire(import.meta.url);
  const pglite = path.join(path.dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json');
  const { version } = JSON.parse(fs.readFileSync(pglite, 'utf8')) as { version: string };
  const migrations = crypto.createHash('sha256').update(migrationNames(model).join('\n')).digest('hex');
  return `${version}-${migrations.slice(0, 12)}`;
}

/** initdb and every migration once, in a directory of its own, renamed into place when complete. */
async function makeTemplate(cache: string, template: string): Promise<void> {
  const building = fs.mkdtempSync(path.join(cache, 'building-'));
  try {
    // The worker is this module's sibling: .ts under tsx, .js in the build.
    const extension = path.extname(fileURLToPath(import.meta.url));
    const worker = new Worker(new URL(`./pglite-template-worker${extension}`, import.meta.url), {
      workerData: { dir: building },
    });
    await new Promise<void>((resolve, reject) => {
      worker.once('error', reject);
      worker.once('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`making the PGlite template failed (exit ${code})`)),
      );
    });
    try {
      fs.renameSync(building, template);
    } catch (err) {
      // Another start made it first.
      if (!fs.existsSync(path.join(template, 'PG_VERSION'))) throw err;
    }
  } finally {
    fs.rmSync(building, { recursive: true, force: true });
  }
}

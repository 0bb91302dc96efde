/**
 * `cache:` kept locally, as GitLab Runner's local cache: one zip per cache key under the cache directory,
 * pulled before the job (policy pull or pull-push) and pushed after it (push or pull-push) when `when`
 * matches the job's result. Keys are expanded and made safe as file names.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { extractZip, selectFiles, writeZip } from './files.js';
import type { JobContext } from './context.js';
import type { JobCacheSpec } from './payload.js';
import { notice, warning } from './shell.js';
import { expandValue } from './variables.js';
import { untrackedFiles } from './untracked.js';

function cacheFile(context: JobContext, cacheDir: string, spec: JobCacheSpec): { key: string; file: string } {
  const key = expandValue(spec.key || 'default', context.lookup);
  // The key is the project's and the user's text: it names a file only through a safe encoding.
  const safe = encodeURIComponent(key).replace(/\./g, '%2E');
  const project = String(context.job.job_info?.project_id ?? 'project');
  return { key, file: path.join(cacheDir, project, safe, 'cache.zip') };
}

const pulls = (spec: JobCacheSpec) => !spec.policy || spec.policy === 'pull-push' || spec.policy === 'pull';
const pushes = (spec: JobCacheSpec) => !spec.policy || spec.policy === 'pull-push' || spec.policy === 'push';

export async function restoreCaches(context: JobContext, cacheDir: string): Promise<void> {
  for (const spec of context.job.cache ?? []) {
    if (!pulls(spec)) {
      context.trace.write(notice(`Not downloading cache ${spec.key || 'default'} due to policy`));
      continue;
    }
    const { key, file } = cacheFile(context, cacheDir, spec);
    context.trace.write(notice(`Checking cache for ${key}...`));
    if (!fs.existsSync(file)) {
      context.trace.write(warning(`file does not exist`));
      context.trace.write(warning(`Failed to extract cache`));
      continue;
    }
    try {
      await extractZip(file, context.projectDir, context.user);
      context.trace.write(notice(`Successfully extracted cache`));
    } catch (err) {
      context.trace.write(warning(`Failed to extract cache: ${(err as Error).message}`));
    }
  }
}

export async function saveCaches(context: JobContext, cacheDir: string, succeeded: boolean): Promise<void> {
  for (const spec of context.job.cache ?? []) {
    const when = spec.when ?? 'on_success';
    const wanted = succeeded
      ? when === 'on_success' || when === 'always'
      : when === 'on_failure' || when === 'always';
    if (!pushes(spec) || !wanted) {
      context.trace.write(notice(`Not uploading cache ${spec.key || 'default'} due to policy`));
      continue;
    }
    const { key, file } = cacheFile(context, cacheDir, spec);
    context.trace.write(notice(`Creating cache ${key}...`));
    const untracked = spec.untracked ? await untrackedFiles(context) : [];
    const { files, warnings } = await selectFiles(context.projectDir, { paths: spec.paths, untracked });
    for (const w of warnings) context.trace.write(warning(w));
    if (!files.length) {
      context.trace.write(warning('No files to cache'));
      continue;
    }
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    // Written aside and renamed: a job reading the cache meanwhile sees the old zip or the new one.
    const partial = `${file}.${crypto.randomBytes(6).toString('hex')}.tmp`;
    try {
      await writeZip(context.projectDir, files, partial);
      await fs.promises.rename(partial, file);
      context.trace.write(notice(`Created cache`));
    } catch (err) {
      await fs.promises.rm(partial, { force: true });
      context.trace.write(warning(`Failed to create cache: ${(err as Error).message}`));
    }
  }
}

/**
 * Artifacts through the runner API as GitLab Runner's artifacts helpers move them: the dependencies'
 * archives are downloaded with each dependency's token (GET /jobs/:id/artifacts) and extracted into the
 * project directory before the script; afterwards each `artifacts` entry of the payload (the archive and
 * every report, with the type and format the server gives) is packed and uploaded with POST
 * /jobs/:id/artifacts. Archives are zip; junit, dotenv and cobertura go as gzip, security reports raw.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { contentPath, extractZip, selectFiles, writeGzip, writeZip } from './files.js';
import type { JobContext } from './context.js';
import type { JobArtifactSpec } from './payload.js';
import { error, notice, warning } from './shell.js';
import { expandValue } from './variables.js';
import { untrackedFiles } from './untracked.js';

const tmpName = (context: JobContext, base: string) =>
  path.join(context.tmpDir, `${base}-${crypto.randomBytes(4).toString('hex')}`);

export async function downloadDependencies(context: JobContext): Promise<boolean> {
  for (const dep of context.job.dependencies ?? []) {
    if (!dep.artifacts_file) continue;
    context.trace.write(notice(`Downloading artifacts for ${dep.name} (${dep.id})...`));
    const file = tmpName(context, `artifacts-${dep.id}.zip`);
    try {
      const status = await context.client.downloadArtifacts(dep.id, dep.token, file);
      if (status !== 200) {
        const why =
          status === 404
            ? 'not found'
            : status === 403
              ? 'forbidden'
              : status === 401
                ? 'unauthorized'
                : `status ${status}`;
        context.trace.write(error(`Downloading artifacts from coordinator... ${why}  id=${dep.id}`));
        return false;
      }
      context.trace.write(
        `Downloading artifacts from coordinator... ok  id=${dep.id} responseStatus=200 OK\n`,
      );
      await extractZip(file, context.projectDir, context.user);
    } catch (err) {
      context.trace.write(error(`Downloading artifacts for ${dep.name} failed: ${(err as Error).message}`));
      return false;
    } finally {
      await fs.promises.rm(file, { force: true });
    }
  }
  return true;
}

/** GitLab Runner's upload file name: the base name of `name` (else "default") plus the format's suffix. */
export function uploadFilename(name: string | undefined, format: string): string {
  let base = path.posix.basename(name ?? '');
  if (!base || base === '.') base = 'default';
  if (format === 'zip') return `${base}.zip`;
  if (format === 'gzip') return `${base}.gz`;
  return base;
}

const STATUS_TEXT: Record<number, string> = {
  201: 'Created',
  403: 'Forbidden',
  413: 'Request Entity Too Large',
};

async function uploadOne(context: JobContext, spec: JobArtifactSpec, untracked: string[]): Promise<boolean> {
  const type = spec.artifact_type || 'archive';
  const format = spec.artifact_format || 'zip';
  const paths = (spec.paths ?? []).map((p) => expandValue(p, context.lookup));
  const exclude = (spec.exclude ?? []).map((p) => expandValue(p, context.lookup));
  const { files, warnings } = await selectFiles(context.projectDir, {
    paths,
    exclude,
    untracked: spec.untracked ? untracked : [],
  });
  for (const w of warnings) context.trace.write(warning(w));
  if (!files.length) {
    context.trace.write(error('No files to upload'));
    return true;
  }
  context.trace.write(`${files.length} ${files.length === 1 ? 'file' : 'files'} found for ${type}\n`);
  const packed = tmpName(context, `upload-${type}`);
  try {
    if (format === 'zip') await writeZip(context.projectDir, files, packed);
    else if (format === 'gzip') await writeGzip(context.projectDir, files, packed);
    else if (files.length === 1)
      await fs.promises.copyFile(await contentPath(context.projectDir, files[0]), packed);
    else {
      context.trace.write(error(`only one file can be sent as raw artifact: ${files.join(', ')}`));
      return false;
    }
    const name = expandValue(spec.name || (type === 'archive' ? 'artifacts' : type), context.lookup);
    for (let attempt = 1; ; attempt++) {
      const answer = await context.client.uploadArtifact(context.job.id, context.job.token, packed, {
        filename: uploadFilename(name, format),
        type,
        format,
        expireIn: spec.expire_in,
      });
      const line = `Uploading artifacts as "${type}" to coordinator... ${answer.status} ${STATUS_TEXT[answer.status] ?? ''}  id=${context.job.id} responseStatus=${answer.status}\n`;
      if (answer.status === 201) {
        context.trace.write(line);
        return true;
      }
      const message = answer.body.toString().slice(0, 500);
      // 403 and 413 are final, as for GitLab Runner; others are tried three times.
      if (answer.status === 403 || answer.status === 413 || answer.status === 400 || attempt >= 3) {
        context.trace.write(error(`${line.trimEnd()} ${message}`));
        return false;
      }
      context.trace.write(warning(`${line.trimEnd()} ${message}`));
      await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
    }
  } finally {
    await fs.promises.rm(packed, { force: true });
  }
}

export async function uploadArtifacts(context: JobContext, specs: JobArtifactSpec[]): Promise<boolean> {
  const untracked = specs.some((s) => s.untracked) ? await untrackedFiles(context) : [];
  let ok = true;
  for (const spec of specs) {
    try {
      if (!(await uploadOne(context, spec, untracked))) ok = false;
    } catch (err) {
      context.trace.write(error(`Uploading artifacts failed: ${(err as Error).message}`));
      ok = false;
    }
  }
  return ok;
}

/** Job artifacts through a real client: @gitbeaker/rest downloads by job, by ref, and one file. */
import { Gitlab } from '@gitbeaker/rest';
import { describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { artifactHelpers } from '../helpers/job-artifacts.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });
const { builtProject } = artifactHelpers(server);

/** The names of a zip's files. */
async function namesIn(zip: Buffer): Promise<string[]> {
  const file = await yauzl.fromBufferPromise(zip, { lazyEntries: true });
  const names: string[] = [];
  await new Promise<void>((resolve, reject) => {
    file.on('entry', (entry: yauzl.Entry) => {
      names.push(entry.fileName);
      file.readEntry();
    });
    file.on('end', resolve);
    file.on('error', reject);
    file.readEntry();
  });
  return names.sort();
}

/** gitbeaker answers text files as strings, and anything else as a Blob. */
const textOf = async (body: unknown) => (typeof body === 'string' ? body : (body as Blob).text());

describe('@gitbeaker/rest', () => {
  it('downloads the archive by job and by ref, and one file out of it', async () => {
    const { owner, project, build } = await builtProject({
      'dist/app.js': 'console.log(1)',
      'notes.txt': 'release notes',
    });
    const api = new Gitlab({ host: server.url, token: owner.token });

    const byJob = await api.JobArtifacts.downloadArchive(project.id, { jobId: build.id });
    expect(await namesIn(Buffer.from(await byJob.arrayBuffer()))).toEqual(['dist/app.js', 'notes.txt']);

    const byRef = await api.JobArtifacts.downloadArchive(project.id, { ref: 'main', job: 'build' });
    expect(await namesIn(Buffer.from(await byRef.arrayBuffer()))).toEqual(['dist/app.js', 'notes.txt']);

    const one = await api.JobArtifacts.downloadArchive(project.id, {
      jobId: build.id,
      artifactPath: 'notes.txt',
    });
    expect(await textOf(one)).toBe('release notes');

    // gitbeaker sends a nested path by job with its slashes as they are: GitLab's `*artifact_path`.
    const nestedByJob = await api.JobArtifacts.downloadArchive(project.id, {
      jobId: build.id,
      artifactPath: 'dist/app.js',
    });
    expect(await textOf(nestedByJob)).toBe('console.log(1)');

    const nested = await api.JobArtifacts.downloadArchive(project.id, {
      ref: 'main',
      job: 'build',
      artifactPath: 'dist/app.js',
    });
    expect(await textOf(nested)).toBe('console.log(1)');

    const kept = await api.JobArtifacts.keep(project.id, build.id);
    expect(kept.id).toBe(build.id);
    await api.JobArtifacts.remove(project.id, { jobId: build.id });
    await expect(api.JobArtifacts.downloadArchive(project.id, { jobId: build.id })).rejects.toThrow();
  }, 90_000);
});

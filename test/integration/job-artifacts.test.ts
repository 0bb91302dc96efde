import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { queueSchema } from '../../src/core/queue.js';
import type { Caller } from '../../src/core/auth.js';
import { parseExpireIn } from '../../src/job_artifacts/expire-in.js';
import {
  artifactHelpers,
  CONFIG,
  jobCaller,
  projectRunner,
  runnerUpload,
  spooled,
  zipOf,
} from '../helpers/job-artifacts.js';
import { pipelineHelpers } from '../helpers/pipelines.js';
import { useTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

type Json = Record<string, unknown>;
const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });
const { commit, pipelineFor, settle, run, byName } = pipelineHelpers(server);
const { builtProject } = artifactHelpers(server);

describe('expire_in', () => {
  it.each([
    ['30 days', 30 * 86400],
    ['1 week', 7 * 86400],
    ['2h 20min', 2 * 3600 + 20 * 60],
    ['3 mins 4 sec', 184],
    ['1 day and 6 hours', 86400 + 6 * 3600],
    ['3600', 3600],
    ['never', null],
    ['soon', undefined],
    ['3 fortnights', undefined],
    ['', undefined],
  ])('%s is %s seconds', (text, seconds) => {
    expect(parseExpireIn(text)).toBe(seconds);
  });
});

describe('job artifacts', () => {
  it('downloads a job archive, and 404s for a job with only reports or none', async () => {
    const { owner, project, build, test, archive } = await builtProject();
    const res = await server.request('GET', `/projects/${project.id}/jobs/${build.id}/artifacts`, {
      token: owner.token,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="artifacts.zip"; filename*=UTF-8''artifacts.zip`,
    );
    expect(Number(res.headers.get('content-length'))).toBe(archive.size);
    for (const jobId of [test.id, 999999]) {
      const missing = await server.request('GET', `/projects/${project.id}/jobs/${jobId}/artifacts`, {
        token: owner.token,
      });
      expect(missing.status).toBe(404);
    }
  });

  it('serves one file out of the archive, by job and by ref', async () => {
    const { owner, project, build } = await builtProject({
      'dist/app.js': 'console.log(1)',
      'dist/deep/notes.txt': 'hello notes',
      'README.md': '# readme',
    });
    const cases: Array<[string, number, string?]> = [
      [`jobs/${build.id}/artifacts/dist%2Fdeep%2Fnotes.txt`, 200, 'hello notes'],
      [`jobs/${build.id}/artifacts/README.md`, 200, '# readme'],
      [`jobs/artifacts/main/raw/dist%2Fapp.js?job=build`, 200, 'console.log(1)'],
      [`jobs/${build.id}/artifacts/missing.txt`, 404],
      [`jobs/${build.id}/artifacts/dist`, 404],
      [`jobs/${build.id}/artifacts/..%2Fetc%2Fpasswd`, 400],
      [`jobs/artifacts/main/raw/nothing?job=build`, 404],
      [`jobs/artifacts/main/raw/README.md?job=nope`, 404],
      [`jobs/artifacts/other/raw/README.md?job=build`, 404],
    ];
    for (const [route, status, content] of cases) {
      const res = await server.request('GET', `/projects/${project.id}/${route}`, { token: owner.token });
      expect(res.status, `${route}: ${res.text}`).toBe(status);
      if (content !== undefined) expect(res.text).toBe(content);
    }
    const txt = await server.request(
      'GET',
      `/projects/${project.id}/jobs/${build.id}/artifacts/dist%2Fdeep%2Fnotes.txt`,
      {
        token: owner.token,
      },
    );
    expect(txt.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(txt.headers.get('content-disposition')).toContain('filename="notes.txt"');
  });

  it('downloads by ref from the latest successful pipeline', async () => {
    const { owner, project } = await builtProject({ 'v.txt': 'first' });
    // A second pipeline on main with a newer archive.
    const sha = await commit(owner.token, project, { 'x.txt': 'x' }, { message: 'second' });
    const second = await pipelineFor(owner.token, project, sha);
    const build = byName(await settle(owner.token, project, second.id, { build: 'pending' }), 'build');
    await run(build.id, 'running');
    await server.services.jobArtifacts.upload(
      jobCaller(project, build, owner.user.id),
      build.id,
      spooled(await zipOf({ 'v.txt': 'second' })),
      {},
    );
    await run(build.id, 'success');
    // Not yet successful: the first pipeline's archive is still the one.
    let res = await server.request('GET', `/projects/${project.id}/jobs/artifacts/main/raw/v.txt?job=build`, {
      token: owner.token,
    });
    expect(res.text).toBe('first');
    const test = byName(await settle(owner.token, project, second.id, { test: 'pending' }), 'test');
    await run(test.id, 'running', 'success');
    await settle(owner.token, project, second.id, { test: 'success' });
    res = await server.request('GET', `/projects/${project.id}/jobs/artifacts/main/raw/v.txt?job=build`, {
      token: owner.token,
    });
    expect(res.text).toBe('second');
    const zip = await server.request(
      'GET',
      `/projects/${project.id}/jobs/artifacts/main/download?job=build`,
      {
        token: owner.token,
      },
    );
    expect(zip.status).toBe(200);
    expect(zip.headers.get('content-type')).toBe('application/zip');
    const noJob = await server.request('GET', `/projects/${project.id}/jobs/artifacts/main/download`, {
      token: owner.token,
    });
    expect(noJob.status).toBe(400);
  });

  it('refuses uploads that break the rules', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const sha = await commit(owner.token, project, { '.gitlab-ci.yml': CONFIG });
    const pipeline = await pipelineFor(owner.token, project, sha);
    const build = byName(await settle(owner.token, project, pipeline.id, { build: 'pending' }), 'build');
    const caller = jobCaller(project, build, owner.user.id);
    const zip = await zipOf({ 'a.txt': 'a' });
    const upload = (params: Json, content: Buffer = zip, jobCallerFor = caller) =>
      server.services.jobArtifacts
        .upload(jobCallerFor, build.id, spooled(content), params)
        .then(() => 201)
        .catch((err: { status?: number }) => err.status ?? 500);
    // Not running yet.
    expect(await upload({})).toBe(403);
    await run(build.id, 'running');
    const other = jobCaller(project, { id: build.id + 1000 }, owner.user.id);
    const cases: Array<[string, Json, Buffer, Caller, number]> = [
      ['another job token', {}, zip, other, 403],
      ['an unknown type', { artifact_type: 'poem' }, zip, caller, 400],
      ['an unknown format', { artifact_format: 'rar' }, zip, caller, 400],
      ['an archive that is not zip', { artifact_format: 'gzip' }, zip, caller, 400],
      ['a broken zip', {}, Buffer.from('not a zip'), caller, 400],
      ['a bad expire_in', { expire_in: 'soon' }, zip, caller, 400],
      ['the archive', {}, zip, caller, 201],
      ['the archive again', {}, zip, caller, 400],
      ['metadata', { artifact_type: 'metadata', artifact_format: 'gzip' }, Buffer.from('x'), caller, 201],
    ];
    for (const [name, params, content, who, status] of cases)
      expect(await upload(params, content, who), name).toBe(status);
    const limit = server.services.jobArtifacts.settings.maxArtifactsSize;
    server.services.jobArtifacts.settings.maxArtifactsSize = 10;
    try {
      expect(await upload({ artifact_type: 'dotenv', artifact_format: 'gzip' }, Buffer.alloc(11))).toBe(413);
    } finally {
      server.services.jobArtifacts.settings.maxArtifactsSize = limit;
    }
    // A refused upload leaves no object behind: one object per kept row.
    const keys: string[] = [];
    for await (const object of server.services.jobArtifacts.store.list(
      `artifacts/${project.id}/${build.id}/`,
    ))
      keys.push(object.key);
    const rows: Array<{ object_key: string }> = await server.dataSource.query(
      'SELECT object_key FROM ci_job_artifacts WHERE job_id = $1',
      [build.id],
    );
    expect(keys.sort()).toEqual(rows.map((row) => row.object_key).sort());
    expect(keys).toHaveLength(2);
  });

  it('keeps, deletes one job, and deletes a project’s artifacts but the latest pipeline’s', async () => {
    const { owner, project, build } = await builtProject();
    const developer = await server.factories.memberOf(project, AccessLevel.Developer);
    const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
    const keep = await server.request('POST', `/projects/${project.id}/jobs/${build.id}/artifacts/keep`, {
      token: developer.token,
    });
    expect(keep.status, keep.text).toBe(200);
    expect((keep.body as Json).id).toBe(build.id);
    const kept = await server.services.jobArtifacts.archiveOf(build.id);
    expect(kept?.expireAt).toBeNull();

    const statistics = async () => {
      const res = await server.request('GET', `/projects/${project.id}?statistics=true`, {
        token: owner.token,
      });
      return ((res.body as Json).statistics as Json).job_artifacts_size as number;
    };
    const before = await statistics();
    expect(before).toBe(kept!.size + 13);

    // The latest pipeline of main is locked: deleting all leaves it.
    let res = await server.request('DELETE', `/projects/${project.id}/artifacts`, {
      token: maintainer.token,
    });
    expect(res.status).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await server.services.jobArtifacts.archiveOf(build.id)).not.toBeNull();

    res = await server.request('DELETE', `/projects/${project.id}/jobs/${build.id}/artifacts`, {
      token: developer.token,
    });
    expect(res.status).toBe(403);
    res = await server.request('DELETE', `/projects/${project.id}/jobs/${build.id}/artifacts`, {
      token: maintainer.token,
    });
    expect(res.status).toBe(204);
    // The test job's report is all that is left.
    expect(await statistics()).toBe(13);
    res = await server.request('GET', `/projects/${project.id}/jobs/${build.id}/artifacts`, {
      token: owner.token,
    });
    expect(res.status).toBe(404);
    res = await server.request('POST', `/projects/${project.id}/jobs/${build.id}/artifacts/keep`, {
      token: developer.token,
    });
    expect(res.status).toBe(404);
  });

  it('removes expired artifacts of older pipelines on the queue', async () => {
    const { owner, project, build } = await builtProject();
    // A newer successful pipeline unlocks the first.
    const sha = await commit(owner.token, project, { 'y.txt': 'y' }, { message: 'newer' });
    const second = await pipelineFor(owner.token, project, sha);
    for (const name of ['build', 'test']) {
      const job = byName(await settle(owner.token, project, second.id, { [name]: 'pending' }), name);
      await run(job.id, 'running', 'success');
    }
    await settle(owner.token, project, second.id, { build: 'success', test: 'success' });
    const maintainer = await server.factories.memberOf(project, AccessLevel.Maintainer);
    const res = await server.request('DELETE', `/projects/${project.id}/artifacts`, {
      token: maintainer.token,
    });
    expect(res.status).toBe(202);
    const gone = await waitFor(
      () => server.services.jobArtifacts.archiveOf(build.id),
      (row) => row === null,
    );
    expect(gone).toBeNull();
    const objectsOf = async () => {
      const objects = [];
      for await (const object of server.services.jobArtifacts.store.list(
        `artifacts/${project.id}/${build.id}/`,
      ))
        objects.push(object.key);
      return objects;
    };
    expect(await waitFor(objectsOf, (keys) => keys.length === 0)).toEqual([]);
  });
});

describe('a crash between an upload and its row', () => {
  it('queues a check before the object is written, which removes an object no row names and keeps the others', async () => {
    const { project, build, archive } = await builtProject();
    const store = server.services.jobArtifacts.store;
    // The upload queued its check before writing: the check names the object its row names.
    const schema = await queueSchema(server.dataSource);
    const queued: Array<{ data: { key: string } }> = await server.dataSource.query(
      `SELECT data FROM ${schema}.job WHERE name = 'job_artifacts.settle_upload'`,
    );
    expect(queued.map((job) => job.data.key)).toContain(archive.objectKey);
    // What a process killed after the write and before the commit leaves: an object and no row.
    const orphan = `artifacts/${project.id}/${build.id}/crashed/artifacts.zip`;
    await store.putStream(orphan, Readable.from([Buffer.from('left behind')]));
    await server.services.jobArtifacts.settleUpload(orphan);
    expect(await store.head(orphan)).toBeNull();
    // A committed upload's object stays, and is still served.
    await server.services.jobArtifacts.settleUpload(archive.objectKey);
    expect(await store.head(archive.objectKey)).not.toBeNull();
  });
});

describe('the runner API', () => {
  it('authorizes and takes uploads from the running job, and hands its archive to the jobs that depend on it', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const runner = await projectRunner(server, project);
    const sha = await commit(owner.token, project, { '.gitlab-ci.yml': CONFIG });
    const pipeline = await pipelineFor(owner.token, project, sha);
    await settle(owner.token, project, pipeline.id, { build: 'pending' });
    const build = await runner.request();
    expect(build.job_info.name).toBe('build');
    const zip = await zipOf({ 'dist/app.js': 'console.log(1)' });

    const authorize = (jobId: number, headers: Record<string, string>, query = '') =>
      server.request('POST', `/jobs/${jobId}/artifacts/authorize${query}`, { headers });
    const own = { 'JOB-TOKEN': build.token };
    const authorizations: Array<[string, number, Record<string, string>, string, number]> = [
      ['its own token', build.id, own, '', 200],
      ['a size within the limit', build.id, own, '?filesize=1024', 200],
      ['a size over the limit', build.id, own, `?filesize=${200 * 1024 * 1024}`, 413],
      ['an unknown type', build.id, own, '?artifact_type=poem', 400],
      ['no token', build.id, {}, '', 403],
      ['an unknown token', build.id, { 'JOB-TOKEN': 'glcbt-nope' }, '', 403],
      ['another job', build.id + 1, own, '', 403],
    ];
    for (const [name, jobId, headers, query, status] of authorizations) {
      const res = await authorize(jobId, headers, query);
      expect(res.status, `${name}: ${res.text}`).toBe(status);
    }
    expect((await authorize(build.id, own)).body).toEqual({ TempPath: '', MaximumSize: 100 * 1024 * 1024 });

    const limit = server.services.jobArtifacts.settings.maxArtifactsSize;
    server.services.jobArtifacts.settings.maxArtifactsSize = 10;
    try {
      expect((await runnerUpload(server, build, zip)).status).toBe(413);
    } finally {
      server.services.jobArtifacts.settings.maxArtifactsSize = limit;
    }
    expect((await runnerUpload(server, build, zip, { expire_in: 'soon' })).status).toBe(400);
    expect(await runnerUpload(server, build, zip, { artifact_type: 'archive', expire_in: '1 week' })).toEqual(
      {
        status: 201,
        text: '"201"',
      },
    );
    const own200 = await server.request('GET', `/jobs/${build.id}/artifacts`, { headers: own });
    expect(own200.status).toBe(200);
    await run(build.id, 'success');
    // The token ends with its job.
    expect((await runnerUpload(server, build, zip, { artifact_type: 'metadata' })).status).toBe(403);

    const test = await runner.request();
    expect(test.job_info.name).toBe('test');
    expect(test.dependencies).toEqual([
      {
        id: build.id,
        name: 'build',
        token: test.token,
        artifacts_file: { filename: 'artifacts.zip', size: zip.length },
      },
    ]);
    const downloaded = await fetch(`${server.api}/jobs/${build.id}/artifacts?direct_download=true`, {
      headers: { 'JOB-TOKEN': test.token },
    });
    expect(downloaded.status).toBe(200);
    expect(Buffer.from(await downloaded.arrayBuffer()).equals(zip)).toBe(true);
    const asUser = await server.request(
      'GET',
      `/projects/${project.id}/jobs/${build.id}/artifacts?job_token=${test.token}`,
    );
    expect(asUser.status).toBe(200);
    const report = await runnerUpload(
      server,
      test,
      Buffer.from('<testsuites/>'),
      { artifact_type: 'junit', artifact_format: 'raw' },
      'junit.xml',
    );
    expect(report.status, report.text).toBe(201);
    const reportOnly = await server.request('GET', `/projects/${project.id}/jobs/${test.id}/artifacts`, {
      token: owner.token,
    });
    expect(reportOnly.status).toBe(404);
  });

  it("lets another project's running job download the artifacts once the project allows it, and not after it ends", async () => {
    const { owner, project } = await builtProject({ 'lib.txt': 'shared library' });
    const other = await server.factories.projectWithReadme({ owner });
    const runner = await projectRunner(server, other);
    const sha = await commit(owner.token, other, { '.gitlab-ci.yml': 'fetch:\n  script: curl\n' });
    const pipeline = await pipelineFor(owner.token, other, sha);
    await settle(owner.token, other, pipeline.id, { fetch: 'pending' });
    const job = await runner.request();
    const download = () =>
      server.request(
        'GET',
        `/projects/${project.id}/jobs/artifacts/main/raw/lib.txt?job=build&job_token=${job.token}`,
      );
    const refused = await download();
    expect(refused.status, refused.text).toBe(403);
    const allow = await server.request('POST', `/projects/${project.id}/job_token_scope/allowlist`, {
      token: owner.token,
      json: { target_project_id: other.id },
    });
    expect(allow.status, allow.text).toBe(201);
    const allowed = await download();
    expect(allowed.status, allowed.text).toBe(200);
    expect(allowed.text).toBe('shared library');
    await run(job.id, 'success');
    expect((await download()).status).toBe(401);
  });
});

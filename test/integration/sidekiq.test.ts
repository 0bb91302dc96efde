/** GitLab's Sidekiq metrics API over forge-api's queue: administrators see what is pending and what failed. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { queueSchema } from '../../src/core/queue.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });

type Json = Record<string, unknown>;
const PATHS = [
  '/sidekiq/queue_metrics',
  '/sidekiq/process_metrics',
  '/sidekiq/job_stats',
  '/sidekiq/compound_metrics',
];

async function until(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('who may read the metrics', () => {
  it.each(PATHS)('%s: 401 without a token, 403 for a user who is not an administrator', async (path) => {
    expect((await server.request('GET', path)).status).toBe(401);
    const user = await server.factories.user();
    const refused = await server.request('GET', path, { token: user.token });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ message: '403 Forbidden' });
  });
});

describe('what administrators see', () => {
  it('the queues, this process and the job counts, following a project deletion through the queue', async () => {
    const admin = await server.factories.user({ admin: true });
    const stats = async () =>
      ((await server.request('GET', '/sidekiq/job_stats', { token: admin.token })).body as Json).jobs as Json;
    const before = await stats();

    const project = await server.factories.project({ owner: admin, initialize_with_readme: true });
    const dir = server.services.storage.diskPath('default', project.id);
    const aside = () =>
      fs.readdirSync(path.dirname(dir)).filter((name) => name.startsWith(`${path.basename(dir)}.deleting-`));
    expect((await server.request('DELETE', `/projects/${project.id}`, { token: admin.token })).status).toBe(
      202,
    );
    expect(fs.existsSync(dir)).toBe(false);

    // The repository_remove subscriber removes what the deletion moved aside, uploads_remove the
    // project's uploads, project_snippet_repositories_remove its snippets' repositories,
    // job_artifacts.remove_project its artifacts' objects; all are counted.
    await until(
      async () => aside().length === 0 && (await stats()).processed === Number(before.processed) + 4,
    );

    const queues = await server.request('GET', '/sidekiq/queue_metrics', { token: admin.token });
    expect(queues.status).toBe(200);
    expect((queues.body as Json).queues).toMatchObject({
      repository_remove: { backlog: 0, latency: 0 },
      uploads_remove: { backlog: 0, latency: 0 },
    });

    const processes = await server.request('GET', '/sidekiq/process_metrics', { token: admin.token });
    expect(processes.status).toBe(200);
    expect((processes.body as Json).processes).toEqual([
      expect.objectContaining({
        pid: process.pid,
        queues: expect.arrayContaining([
          'repository_remove',
          'git.housekeeping_after_push',
          'git.housekeeping',
        ]),
        busy: 0,
        tag: 'forge-api',
      }),
    ]);

    const compound = await server.request('GET', '/sidekiq/compound_metrics', { token: admin.token });
    expect(compound.status).toBe(200);
    expect(compound.body).toEqual({
      queues: (queues.body as Json).queues,
      processes: [expect.objectContaining({ pid: process.pid })],
      jobs: await stats(),
    });
  });

  it('counts a job that waits, from the queue tables', async () => {
    const admin = await server.factories.user({ admin: true });
    const schema = await queueSchema(server.dataSource);
    const before = ((await server.request('GET', '/sidekiq/job_stats', { token: admin.token })).body as Json)
      .jobs as Json;
    // A job due in an hour, as a retry's delay leaves one.
    await server.dataSource.transaction((tx) =>
      tx.query(
        `INSERT INTO ${schema}.job (name, data, state, start_after) VALUES ('repository_remove', '{}', 'retry', now() + interval '1 hour')`,
      ),
    );
    const after = ((await server.request('GET', '/sidekiq/job_stats', { token: admin.token })).body as Json)
      .jobs as Json;
    expect(after).toEqual({
      ...before,
      enqueued: Number(before.enqueued) + 1,
      failed: Number(before.failed) + 1,
    });
    const queues = await server.request('GET', '/sidekiq/queue_metrics', { token: admin.token });
    // Not due yet: not in the backlog.
    expect((queues.body as Json).queues).toMatchObject({ repository_remove: { backlog: 0 } });
  });
});

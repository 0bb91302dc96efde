/**
 * The floor of the project endpoints (pipelines and jobs too) and GET /user: bare Koa and one SQL query. The project queries
 * carry the same visibility SQL as the server (the text that src/core/abilities.ts builds, taken from
 * the built code so the two never drift); no authentication, no validation, no presenter: the caller is
 * fixed by BENCH_CALLER_ID. GET /user is the token's user, found by the token's digest.
 *
 * Env: PORT (0 = any), DATABASE_URL (PostgreSQL) or PGLITE_DIR (embedded), BENCH_CALLER_ID.
 * Prints `listening <port>` when ready.
 */
import 'reflect-metadata';
import crypto from 'node:crypto';
import Koa from 'koa';
import pg from 'pg';
import {
  projectMembershipSql,
  whereMergeRequestsReadable,
  whereProjectVisible,
} from '../../dist/src/core/abilities.js';

const callerId = Number(process.env.BENCH_CALLER_ID);
const caller = { user: { id: callerId, admin: false, external: false } };

/**
 * A condition as one of the abilities' functions adds it (`whereProjectVisible`, ...), its clauses
 * joined with AND and its named parameters made positional.
 */
function visibilitySql(add = whereProjectVisible) {
  const clauses = [];
  const parameters = {};
  const recorder = {
    andWhere(sql, params) {
      clauses.push(`(${sql})`);
      Object.assign(parameters, params ?? {});
      return recorder;
    },
  };
  add(recorder, caller, 'p', 'n');
  const names = Object.keys(parameters).sort((a, b) => b.length - a.length);
  let sql = clauses.join(' AND ');
  const values = [];
  for (const name of names) {
    values.push(parameters[name]);
    sql = sql.replaceAll(`:${name}`, `$${values.length}`);
  }
  return { sql, values };
}

const visible = visibilitySql();
const member = projectMembershipSql('p', 'n').replaceAll(':callerId', `$${visible.values.length + 1}`);
const select = `SELECT p.*, to_jsonb(n.*) AS namespace FROM projects p JOIN namespaces n ON n.id = p.namespace_id`;
const live = 'p.marked_for_deletion_at IS NULL';
const page = 'ORDER BY p.created_at DESC, p.id DESC LIMIT 20';
const readable = visibilitySql(whereMergeRequestsReadable);
const mrPage = 'ORDER BY mr.created_at DESC, mr.id DESC LIMIT 20';
const mrInProject = `SELECT mr.* FROM merge_requests mr WHERE mr.target_project_id = $1`;
const queries = {
  mergeRequests: { sql: `${mrInProject} ${mrPage}` },
  mergeRequestsFiltered: { sql: `${mrInProject} AND mr.state = $2 AND mr.author_id = $3 ${mrPage}` },
  mergeRequestsAll: {
    sql: `SELECT mr.* FROM merge_requests mr JOIN projects p ON p.id = mr.target_project_id
      JOIN namespaces n ON n.id = p.namespace_id WHERE ${readable.sql} ${mrPage}`,
    values: readable.values,
  },
  list: { sql: `${select} WHERE ${visible.sql} AND ${live} ${page}`, values: visible.values },
  membership: {
    sql: `${select} WHERE ${visible.sql} AND ${member} AND ${live} ${page}`,
    values: [...visible.values, callerId],
  },
  // The pipelines list as the API answers it: no child pipelines, newest first; jobs with their pipeline.
  pipelines: {
    sql: `SELECT * FROM ci_pipelines WHERE project_id = $1 AND source <> 'parent_pipeline' ORDER BY id DESC LIMIT 20`,
  },
  pipelinesFiltered: {
    sql: `SELECT * FROM ci_pipelines WHERE project_id = $1 AND source <> 'parent_pipeline' AND status = $2 AND ref = $3
      ORDER BY id DESC LIMIT 20`,
  },
  jobs: {
    sql: `SELECT b.*, to_jsonb(p.*) AS pipeline FROM ci_builds b JOIN ci_pipelines p ON p.id = b.pipeline_id
      WHERE b.project_id = $1 AND b.type = 'build' ORDER BY b.id DESC LIMIT 20`,
  },
  user: {
    sql: `SELECT u.* FROM personal_access_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_digest = $1`,
  },
  one: {
    sql: `${select} WHERE p.id = $${visible.values.length + 1} AND ${visible.sql} AND ${live}`,
    values: visible.values,
  },
};

async function database() {
  if (process.env.DATABASE_URL) {
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
    return { query: async (sql, values) => (await pool.query(sql, values)).rows };
  }
  const { openPGlite } = await import('../../dist/src/db/pglite-driver.js');
  const db = await openPGlite(process.env.PGLITE_DIR);
  return { query: async (sql, values) => (await db.query(sql, values)).rows };
}

const db = await database();
const app = new Koa();
app.use(async (ctx) => {
  const one = /^\/projects\/(\d+)$/.exec(ctx.path);
  if (one) {
    const rows = await db.query(queries.one.sql, [...queries.one.values, Number(one[1])]);
    if (rows.length === 0) ctx.status = 404;
    else ctx.body = rows[0];
  } else if (ctx.path === '/user') {
    const digest = crypto
      .createHash('sha256')
      .update(String(ctx.get('private-token')))
      .digest('hex');
    const rows = await db.query(queries.user.sql, [digest]);
    if (rows.length === 0) ctx.status = 401;
    else ctx.body = rows[0];
  } else if (/^\/projects\/\d+\/merge_requests$/.test(ctx.path)) {
    const projectId = Number(ctx.path.split('/')[2]);
    ctx.body = ctx.query.author_id
      ? await db.query(queries.mergeRequestsFiltered.sql, [
          projectId,
          ctx.query.state,
          Number(ctx.query.author_id),
        ])
      : await db.query(queries.mergeRequests.sql, [projectId]);
  } else if (/^\/projects\/\d+\/pipelines$/.test(ctx.path)) {
    const projectId = Number(ctx.path.split('/')[2]);
    ctx.body = ctx.query.status
      ? await db.query(queries.pipelinesFiltered.sql, [projectId, ctx.query.status, ctx.query.ref])
      : await db.query(queries.pipelines.sql, [projectId]);
  } else if (/^\/projects\/\d+\/jobs$/.test(ctx.path)) {
    ctx.body = await db.query(queries.jobs.sql, [Number(ctx.path.split('/')[2])]);
  } else if (ctx.path === '/merge_requests') {
    ctx.body = await db.query(queries.mergeRequestsAll.sql, queries.mergeRequestsAll.values);
  } else if (ctx.path === '/projects') {
    const query = ctx.query.membership === 'true' ? queries.membership : queries.list;
    ctx.body = await db.query(query.sql, query.values);
  } else ctx.status = 404;
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.on('SIGTERM', () => process.exit(0));

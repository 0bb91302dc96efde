/**
 * The credential matrix: every operation whose `security` names a non-user scheme (a cluster agent
 * token, an Unleash instance id) is called with a valid credential, none, a malformed one, a revoked
 * one, a user's token, and one of another agent or project, each answered as GitLab answers. The operations come from
 * the contract; a scheme without a fixture below fails, so a new kind of credential brings its cases.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { USER_SCHEMES } from '../../src/core/credentials.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer, type RequestOptions, type TestResponse } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;
const spec = JSON.parse(
  fs.readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'),
) as {
  paths: Record<string, Record<string, Json>>;
  components: { securitySchemes: Record<string, { type: string; in?: string; name?: string }> };
};

interface CredentialOperation {
  operationId: string;
  method: string;
  path: string;
  scheme: string;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/**
 * CI job tokens act for their job's user within the job token scope (caller schemes, not principals of
 * their own): test/integration/runner-jobs.test.ts and job-artifacts.test.ts check their cases (a running
 * job's token, a finished job's, another project's before and after the allowlist, none).
 */
const CALLER_SCHEMES = new Set(['JobToken', 'JobTokenQuery']);
const OPERATIONS: CredentialOperation[] = Object.entries(spec.paths).flatMap(([path, item]) =>
  METHODS.filter((method) => item[method]).flatMap((method) => {
    const op = item[method];
    const schemes = ((op.security ?? []) as Json[]).flatMap((requirement) => Object.keys(requirement));
    return schemes
      .filter((scheme) => !USER_SCHEMES.has(scheme) && !CALLER_SCHEMES.has(scheme))
      .map((scheme) => ({
        operationId: op.operationId as string,
        method: method.toUpperCase(),
        path,
        scheme,
      }));
  }),
);

/** The credentials a scheme's cases use, for one operation. */
interface Credentials {
  valid: string;
  /** Undefined when the scheme has no revocation (an Unleash instance id is the project's for good). */
  revoked?: string;
  /** A credential of another agent or project. */
  other: string;
  /** The path parameters the operation is called with. */
  path: Record<string, string>;
  /** What the valid credential's answer names (the agent or project it stands for). */
  names?: Json;
  /** What the other credential's answer is: 401, or the other principal's answer naming it. */
  otherNames?: Json;
}

interface SchemeFixture {
  setup(): Promise<Credentials>;
}

async function maintainedProject(): Promise<{ id: number; maintainer: TestUser }> {
  const { project } = await server.factories.ownedProjectWithReadme({ visibility: 'private' });
  return { id: project.id, maintainer: await server.factories.memberOf(project, AccessLevel.Maintainer) };
}

async function call(user: TestUser, method: string, path: string, json?: unknown): Promise<Json> {
  const res = await server.request(method, path, { token: user.token, json });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body as Json;
}

/** An agent of a new project with two tokens, the second revoked. */
async function agentWithTokens(): Promise<{ agentId: number; valid: string; revoked: string }> {
  const { id, maintainer } = await maintainedProject();
  const agents = `/projects/${id}/cluster_agents`;
  const agent = await call(maintainer, 'POST', agents, { name: 'production' });
  const tokens = `${agents}/${agent.id as number}/tokens`;
  const valid = await call(maintainer, 'POST', tokens, { name: 'kas' });
  const revoked = await call(maintainer, 'POST', tokens, { name: 'old' });
  await server.request('DELETE', `${tokens}/${revoked.id as number}`, { token: maintainer.token });
  return { agentId: agent.id as number, valid: valid.token as string, revoked: revoked.token as string };
}

async function unleashInstanceId(): Promise<{ projectId: number; instanceId: string }> {
  const { id, maintainer } = await maintainedProject();
  const client = await call(maintainer, 'GET', `/projects/${id}/feature_flags_client`);
  return { projectId: id, instanceId: client.instance_id as string };
}

const unleash: SchemeFixture = {
  async setup() {
    const mine = await unleashInstanceId();
    const theirs = await unleashInstanceId();
    // Another project's instance id does not hold for this project: GitLab answers 401.
    return { valid: mine.instanceId, other: theirs.instanceId, path: { project_id: String(mine.projectId) } };
  },
};

const FIXTURES: Record<string, SchemeFixture> = {
  KubernetesAgentToken: {
    async setup() {
      const mine = await agentWithTokens();
      const theirs = await agentWithTokens();
      // The token is the agent: another agent's token reads that agent's information.
      return {
        valid: mine.valid,
        revoked: mine.revoked,
        other: theirs.valid,
        path: {},
        names: { agent_id: mine.agentId },
        otherNames: { agent_id: theirs.agentId },
      };
    },
  },
  UnleashInstanceId: unleash,
  UnleashInstanceIdQuery: unleash,
};

/** The request presenting `credential` where the scheme says. */
function presented(
  scheme: string,
  credential: string | undefined,
): { query: string; options: RequestOptions } {
  const definition = spec.components.securitySchemes[scheme];
  if (credential === undefined) return { query: '', options: {} };
  if (definition.type === 'http')
    return { query: '', options: { headers: { Authorization: `Bearer ${credential}` } } };
  if (definition.in === 'header')
    return { query: '', options: { headers: { [definition.name!]: credential } } };
  return { query: `?${definition.name}=${encodeURIComponent(credential)}`, options: {} };
}

function send(
  op: CredentialOperation,
  credentials: Credentials,
  credential: string | undefined,
): Promise<TestResponse> {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => credentials.path[name]);
  const { query, options } = presented(op.scheme, credential);
  return server.request(op.method, path + query, {
    ...options,
    ...(op.method === 'GET' ? {} : { json: {} }),
  });
}

const expectUnauthorized = (res: TestResponse, what: string) => {
  expect(res.status, `${what}: ${res.text}`).toBe(401);
  expect(res.body).toEqual({ message: '401 Unauthorized' });
};

describe('the credential matrix', () => {
  it('covers every non-user scheme the contract names, each with a fixture', () => {
    expect(OPERATIONS.length).toBeGreaterThan(0);
    for (const op of OPERATIONS)
      expect(FIXTURES, `${op.operationId}: ${op.scheme}`).toHaveProperty(op.scheme);
  });

  it.each(OPERATIONS.map((op) => [op.operationId, op.scheme, op] as const))(
    '%s with %s: valid, none, malformed, revoked, another’s',
    async (_id, _scheme, op) => {
      const credentials = await FIXTURES[op.scheme].setup();
      const valid = await send(op, credentials, credentials.valid);
      expect(valid.status, `valid: ${valid.text}`).toBeLessThan(300);
      if (credentials.names) expect(valid.body).toMatchObject(credentials.names);

      expectUnauthorized(await send(op, credentials, undefined), 'none');
      expectUnauthorized(await send(op, credentials, 'not-a-credential'), 'malformed');
      expectUnauthorized(await send(op, credentials, `${credentials.valid}x`), 'unknown');
      // A personal access token authenticates users, not agents or Unleash clients.
      const user = await server.factories.user();
      expectUnauthorized(await send(op, credentials, user.token), 'a user’s token');
      if (credentials.revoked !== undefined)
        expectUnauthorized(await send(op, credentials, credentials.revoked), 'revoked');

      const other = await send(op, credentials, credentials.other);
      if (credentials.otherNames) {
        expect(other.status, `another’s: ${other.text}`).toBe(200);
        expect(other.body).toMatchObject(credentials.otherNames);
      } else expectUnauthorized(other, 'another’s');
    },
  );
});

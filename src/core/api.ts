import type { IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Context, Middleware } from 'koa';
import { TIERS, type Config, type Tier } from '../config.js';
import type { ServiceRegistry } from './family.js';
import {
  anonymous,
  presentedToken,
  requireScope,
  sudoIdentifier,
  type Authenticator,
  type Caller,
} from './auth.js';
import { Router, validateRequest, type Backend, type Operation, type RouteMatch } from './contract.js';
import {
  ApiError,
  badParameter,
  methodNotAllowed,
  notFound,
  recordNotFound,
  routeNotFound,
  unauthorized,
} from './errors.js';
import { rateLimitSubject, type RateLimiter } from './rate-limit.js';
import { ABILITY_NAMES, authorizeInstance, pipelineAbility, RULE_NAMES } from './abilities.js';
import {
  USER_SCHEMES,
  type CallerCredentialResolvers,
  type CallerScheme,
  type CredentialResolver,
  type CredentialResolvers,
  type CredentialScheme,
} from './credentials.js';
import type { HandlerContext, HandlerMap, OperationId } from './handler.js';
import type { SubjectResolvers, SubjectTypes } from './subjects.js';
import { discardUploads, readBodyParams, writeJson, type UploadSpool, type UploadedFile } from './http.js';
import { MAX_ID } from './ids.js';
import {
  coerce,
  mergeParams,
  parseBracketPairs,
  propertySchema,
  queryPairs,
  type ParamObject,
} from './params.js';

export const API_PREFIX = '/api/v4';
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/** Credentials travel as parameters but are not parameters of any operation. */
const CREDENTIAL_PARAMS = ['private_token', 'job_token', 'sudo'];

type Schema = Record<string, unknown>;
type ParameterObject = { name: string; in: string; schema?: Schema; 'x-tier'?: string };

export interface ApiOptions {
  backend: Backend;
  handlers: HandlerMap;
  services: ServiceRegistry;
  authenticator: Authenticator;
  subjects: SubjectResolvers;
  /** The resolvers of the non-user security schemes, by scheme name. */
  credentials: CredentialResolvers;
  /** The resolvers of the schemes that act for a user within a narrower reach (CI job tokens). */
  callerCredentials: CallerCredentialResolvers;
  rateLimiter: RateLimiter;
  config: Config;
}

/** The operation for the request; 405 when the path exists for another method, else 404. */
function matchOperation(router: Router, method: string, path: string): RouteMatch {
  const lookupMethod = method === 'head' ? 'get' : method;
  const match = router.match(lookupMethod, path);
  if (match) return match;
  const other = METHODS.some((m) => m !== lookupMethod && router.match(m, path));
  throw other ? methodNotAllowed() : routeNotFound();
}

/** `x-tier` on an operation, a parameter or a property: above the instance's tier, it is not there. */
const aboveTier = (declared: { 'x-tier'?: string } | undefined, tier: Tier) =>
  declared?.['x-tier'] !== undefined && TIERS.indexOf(declared['x-tier'] as Tier) > TIERS.indexOf(tier);

/**
 * Puts each merged parameter where the contract declares it, coerced to its declared type. Parameters of
 * a higher tier than the instance's are ignored, as a lower tier of GitLab ignores them.
 */
function placeParams(
  operation: Operation,
  merged: ParamObject,
  path: ParamObject,
  tier: Tier,
  headers: IncomingHttpHeaders,
) {
  const parameters = (operation.parameters ?? []) as ParameterObject[];
  // Declared header parameters (Unleash's `UNLEASH-APPNAME`) are read as they are named.
  const header: ParamObject = {};
  for (const p of parameters.filter((p) => p.in === 'header')) {
    const value = headers[p.name.toLowerCase()];
    if (typeof value === 'string' && value.trim()) header[p.name] = value.trim();
  }
  const bodySchema = (operation.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined)
    ?.content?.['application/json']?.schema;
  const query: ParamObject = {};
  const body: ParamObject = {};
  for (const [name, value] of Object.entries(merged)) {
    if (name in path || CREDENTIAL_PARAMS.includes(name)) continue;
    const declared = parameters.find((p) => p.in === 'query' && p.name === name);
    if (declared) {
      if (!aboveTier(declared, tier)) query[name] = coerce(value, declared.schema);
    } else if (bodySchema) {
      const property = propertySchema(bodySchema, name);
      if (!aboveTier(property, tier)) body[name] = coerce(value, property);
    }
  }
  const typedPath: ParamObject = {};
  for (const [name, value] of Object.entries(path)) {
    const schema = parameters.find((p) => p.in === 'path' && p.name === name)?.schema;
    typedPath[name] = coerce(value, schema);
    // An integer id beyond its column's range names no record: Rails finds nothing, GitLab answers 404.
    const id = typedPath[name];
    if (typeof id === 'number' && schema?.type === 'integer') {
      const max = typeof schema.maximum === 'number' ? schema.maximum : MAX_ID;
      if (id > max || id < -MAX_ID - 1) throw recordNotFound();
    }
  }
  return { query, header, body: bodySchema ? body : undefined, path: typedPath };
}

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
}

/** `{"error": "name is missing, visibility does not have a valid value"}`, as Grape words it. */
export function validationMessage(errors: AjvError[]): string {
  const messages: string[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    if (['anyOf', 'oneOf', 'allOf', 'if'].includes(error.keyword)) continue;
    const segments = error.instancePath.split('/').filter(Boolean);
    if (['query', 'path', 'header', 'headers', 'requestBody', 'cookies'].includes(segments[0] ?? ''))
      segments.shift();
    if (error.keyword === 'required') segments.push(String(error.params.missingProperty));
    // Grape names the parameter, not the array item: `scopes does not have a valid value`.
    while (segments.length > 1 && /^\d+$/.test(segments[segments.length - 1])) segments.pop();
    if (segments.length === 0) continue;
    const name =
      segments[0] +
      segments
        .slice(1)
        .map((s) => `[${s}]`)
        .join('');
    if (seen.has(name)) continue;
    seen.add(name);
    if (error.keyword === 'required') messages.push(`${name} is missing`);
    else if (error.keyword === 'enum' || error.keyword === 'const')
      messages.push(`${name} does not have a valid value`);
    else if (error.keyword === 'format' && error.params.format === 'file-path')
      messages.push(`${name} should be a valid file path`);
    else messages.push(`${name} is invalid`);
  }
  return messages.join(', ') || 'parameters are invalid';
}

/**
 * The token scopes an operation accepts: its `x-token-scopes`, or by default `api` and `read_api` for
 * reads and `api` alone for writes.
 */
export function operationScopes(operation: Operation, method: string): readonly string[] {
  const declared = (operation as { 'x-token-scopes'?: string[] })['x-token-scopes'];
  if (declared) return declared;
  return method === 'get' || method === 'head' ? ['api', 'read_api'] : ['api'];
}

/** `x-rate-limit`: the endpoint class an operation counts against, besides the API-wide classes. */
const operationRateLimit = (operation: Operation) =>
  (operation as { 'x-rate-limit'?: string })['x-rate-limit'];

interface Declaration {
  subject: 'project' | 'group' | 'instance' | 'none';
  ability?: string;
  /**
   * `unauthorized`: GitLab answers 401 rather than 403 when the ability is missing; `not_found`: a
   * bare `404 Not Found` (GitLab's `not_found!`, as forking refuses); `bad_request`: GitLab's 400 with
   * its own message after the parameters are checked, so the service refuses.
   */
  refusal?: 'unauthorized' | 'not_found' | 'bad_request';
  /** `x-forge-rule`: a finer rule of the service, declared by its family (`rules` of its abilities). */
  rule?: string;
}

/** What the operation acts on and what it needs there (`x-subject`, `x-ability`); lint requires both. */
const declarationOf = (operation: Operation): Declaration => {
  const declared = operation as {
    'x-subject'?: Declaration['subject'];
    'x-ability'?: string;
    'x-ability-refusal'?: Declaration['refusal'];
    'x-forge-rule'?: string;
  };
  return {
    subject: declared['x-subject'] ?? 'none',
    ability: declared['x-ability'],
    refusal: declared['x-ability-refusal'],
    rule: declared['x-forge-rule'],
  };
};

// --- Operations with their own credential (non-user security schemes; see credentials.ts) ---
type SchemeObject = { type: string; scheme?: string; in?: string; name?: string };

/** The non-user schemes an operation's `security` names, with their definitions, in the contract's order. */
type OwnSchemes = Array<{ name: CredentialScheme; scheme: SchemeObject }>;

/**
 * The schemes of an operation whose `security` names only schemes of its own: such an operation
 * authenticates no user, but the principal the credential stands for.
 */
const ownSchemesOf = new WeakMap<Operation, OwnSchemes | null>();
function ownSchemes(backend: Backend, operation: Operation): OwnSchemes | undefined {
  let schemes = ownSchemesOf.get(operation);
  if (schemes === undefined) {
    schemes = readOwnSchemes(backend, operation) ?? null;
    ownSchemesOf.set(operation, schemes);
  }
  return schemes ?? undefined;
}

function readOwnSchemes(backend: Backend, operation: Operation): OwnSchemes | undefined {
  const names = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
  if (names.length === 0 || names.some((name) => USER_SCHEMES.has(name) || CALLER_SCHEMES.has(name)))
    return undefined;
  const defined = (backend.definition.components?.securitySchemes ?? {}) as Record<string, SchemeObject>;
  return names.map((name) => ({ name: name as CredentialScheme, scheme: defined[name] }));
}

/** The schemes whose credential stands for a caller (a user within a narrower reach), by name. */
const CALLER_SCHEMES = new Set<string>();

/** The caller schemes an operation's `security` names, with their definitions. */
const callerSchemesOf = new WeakMap<Operation, OwnSchemes>();
function callerSchemes(backend: Backend, operation: Operation): OwnSchemes {
  let schemes = callerSchemesOf.get(operation);
  if (!schemes) {
    const defined = (backend.definition.components?.securitySchemes ?? {}) as Record<string, SchemeObject>;
    schemes = (operation.security ?? [])
      .flatMap((requirement) => Object.keys(requirement))
      .filter((name) => CALLER_SCHEMES.has(name))
      .map((name) => ({ name: name as CredentialScheme, scheme: defined[name] }));
    callerSchemesOf.set(operation, schemes);
  }
  return schemes;
}

/** Whether every scheme the operation's `security` names is a caller scheme (no personal token). */
function onlyCallerSchemes(backend: Backend, operation: Operation): boolean {
  const names = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
  return names.length > 0 && callerSchemes(backend, operation).length === names.length;
}

/** A refused credential: 401, or what the operation declares (`x-credential-refusal: forbidden`). */
const credentialRefused = (operation: Operation) =>
  (operation as { 'x-credential-refusal'?: string })['x-credential-refusal'] === 'forbidden'
    ? new ApiError(403, { message: '403 Forbidden' })
    : unauthorized();

/** The first credential presented as one of the schemes says, and the scheme it came by. */
function presentedCredential(
  schemes: OwnSchemes,
  headers: IncomingHttpHeaders,
  query: Array<[string, string]>,
): { scheme: CredentialScheme; credential: string } | undefined {
  for (const { name, scheme } of schemes) {
    let credential: string | undefined;
    if (scheme.type === 'http' && scheme.scheme === 'bearer') {
      credential = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '')?.[1];
    } else if (scheme.type === 'apiKey' && scheme.in === 'header') {
      const value = headers[scheme.name!.toLowerCase()];
      if (typeof value === 'string' && value.trim()) credential = value.trim();
    } else if (scheme.type === 'apiKey' && scheme.in === 'query') {
      credential = query.find(([key]) => key === scheme.name)?.[1] || undefined;
    }
    if (credential) return { scheme: name, credential };
  }
  return undefined;
}

/** The principal of an operation with its own credential: 401 when none is presented or none is known. */
async function resolvePrincipal(
  credentials: CredentialResolvers,
  operation: Operation,
  schemes: OwnSchemes,
  request: { headers: IncomingHttpHeaders; query: Array<[string, string]>; path: ParamObject },
): Promise<unknown> {
  const presented = presentedCredential(schemes, request.headers, request.query);
  if (!presented) throw credentialRefused(operation);
  const resolve = credentials[presented.scheme] as CredentialResolver<unknown>;
  const principal = await resolve(presented.credential, { path: request.path as Record<string, string> });
  if (principal === null) throw credentialRefused(operation);
  return principal;
}

/** The caller a presented caller credential (a CI job token) stands for; undefined when none is presented. */
async function resolveCaller(
  callerCredentials: CallerCredentialResolvers,
  operation: Operation,
  schemes: OwnSchemes,
  request: { headers: IncomingHttpHeaders; query: Array<[string, string]> },
): Promise<Caller | undefined> {
  if (schemes.length === 0) return undefined;
  const presented = presentedCredential(schemes, request.headers, request.query);
  if (!presented) return undefined;
  const resolve = callerCredentials[presented.scheme as CallerScheme] as
    CallerCredentialResolvers[CallerScheme] | undefined;
  const caller = resolve ? await resolve(presented.credential) : null;
  if (!caller) throw credentialRefused(operation);
  return caller;
}

/**
 * Stops the start when the contract names an ability or a rule no family declares, or a non-user scheme
 * no family resolves.
 */
function checkDeclarations(
  backend: Backend,
  credentials: CredentialResolvers,
  callerCredentials: CallerCredentialResolvers,
) {
  for (const name of Object.keys(callerCredentials)) CALLER_SCHEMES.add(name);
  for (const item of Object.values(backend.definition.paths ?? {}))
    for (const operation of Object.values(item ?? {}) as Operation[]) {
      if (!operation || typeof operation !== 'object' || !operation.operationId) continue;
      const { subject, ability, rule } = declarationOf(operation);
      if (subject !== 'none' && !ABILITY_NAMES[subject].includes(ability ?? ''))
        throw new Error(
          `${operation.operationId}: x-ability ${ability} is not a declared ${subject} ability`,
        );
      if (rule !== undefined && !RULE_NAMES.includes(rule))
        throw new Error(`${operation.operationId}: x-forge-rule ${rule} is not a declared rule`);
      for (const { name } of ownSchemes(backend, operation) ?? [])
        if (!(name in credentials))
          throw new Error(`${operation.operationId}: no family resolves the security scheme ${name}`);
      for (const { name, scheme } of callerSchemes(backend, operation))
        if (!scheme) throw new Error(`${operation.operationId}: the security scheme ${name} is not defined`);
    }
}
// --- end of own credentials ---

const allowsAnonymous = (operation: Operation) =>
  Array.isArray(operation.security) &&
  operation.security.some((requirement) => Object.keys(requirement).length === 0);

/** Routes /api/v4/* by operationId to the typed handlers, applying GitLab's wire conventions once. */
export function apiMiddleware(options: ApiOptions): Middleware {
  const { backend, handlers, services, authenticator, subjects, credentials, callerCredentials } = options;
  const { rateLimiter, config } = options;
  checkDeclarations(backend, credentials, callerCredentials);

  /** Resolves the declared subject once and enforces the declared ability: 404 unseen, 403 without it. */
  async function authorize(caller: Caller, operation: Operation, path: ParamObject) {
    const declaration = declarationOf(operation);
    const { subject: kind, refusal } = declaration;
    if (kind === 'none') return undefined;
    if (kind === 'instance') {
      authorizeInstance(caller, declaration.ability ?? 'use_api');
      return undefined;
    }
    const resolver = subjects[kind] as SubjectResolvers[keyof SubjectTypes];
    const subject = await resolver.find(caller, String(path.id));
    // A job token reaches its own project and those that allow it, whatever its user may see.
    if (caller.reach) await caller.reach.check(kind, subject);
    const ability = pipelineAbility({ ...declaration, subject: kind });
    try {
      if (ability)
        (resolver.authorize as (c: Caller, a: string, s: unknown) => void)(caller, ability, subject);
    } catch (err) {
      if (err instanceof ApiError && err.status === 403) {
        if (refusal === 'unauthorized') throw unauthorized();
        if (refusal === 'not_found') throw notFound();
      }
      throw err;
    }
    return subject;
  }
  const router = new Router(backend);
  return async (ctx: Context, next) => {
    if (ctx.path !== API_PREFIX && !ctx.path.startsWith(`${API_PREFIX}/`)) return next();
    const apiPath = ctx.path.slice(API_PREFIX.length) || '/';
    const method = ctx.method.toLowerCase();
    // Path parameters are matched on the raw path, then decoded: `group%2Fproject` stays one segment.
    // The raw path was checked for malformed strings before any route saw it.
    const { operation, params: path } = matchOperation(router, method, apiPath);
    // A lower tier of GitLab has no such route.
    if (aboveTier(operation as { 'x-tier'?: string }, config.tier)) throw routeNotFound();
    const operationId = operation.operationId as OperationId;
    ctx.state.operationId = operationId;

    const rawQuery = queryPairs(ctx.querystring);
    const own = ownSchemes(backend, operation);
    const principal =
      own &&
      (await resolvePrincipal(credentials, operation, own, { headers: ctx.headers, query: rawQuery, path }));
    const byCallerScheme = own
      ? undefined
      : await resolveCaller(callerCredentials, operation, callerSchemes(backend, operation), {
          headers: ctx.headers,
          query: rawQuery,
        });
    // An operation that names only caller schemes (a runner's job token) reads no user's token at all.
    const userTokens = !own && !onlyCallerSchemes(backend, operation);
    const authenticated =
      byCallerScheme ??
      (userTokens ? await authenticator.authenticate(presentedToken(ctx.headers, rawQuery)) : anonymous);
    if (!own && !authenticated.user && !allowsAnonymous(operation)) throw credentialRefused(operation);
    requireScope(authenticated, operationScopes(operation, method));
    const caller: Caller = await authenticator.actAs(authenticated, sudoIdentifier(ctx.headers, rawQuery));
    ctx.state.caller = caller;

    const who = rateLimitSubject(authenticated.user, ctx.ip);
    rateLimiter.hit(authenticated.user ? 'api_authenticated' : 'api_unauthenticated', who);
    const endpointClass = operationRateLimit(operation);
    if (endpointClass) rateLimiter.hit(endpointClass, who);

    // `x-raw-body`: the handler reads the body as it arrives (a job's log, a blob), not parsed here.
    const rawBody = (operation as { 'x-raw-body'?: boolean })['x-raw-body'] === true;

    const maxUpload = (operation as { 'x-max-upload-bytes'?: number })['x-max-upload-bytes'];
    const files: Record<string, UploadedFile> = {};
    try {
      await handle(
        maxUpload === undefined ? undefined : { dir: uploadSpoolDir(config), maxBytes: maxUpload },
      );
    } finally {
      if (Object.keys(files).length > 0) await discardUploads(files);
    }

    async function handle(spool: UploadSpool | undefined) {
      const bodyParams = rawBody ? {} : await readBodyParams(ctx, spool, files);
      const placed = placeParams(
        operation,
        mergeParams(parseBracketPairs(rawQuery), bodyParams),
        path,
        config.tier,
        ctx.headers,
      );
      const errors = validateRequest(backend, operation, {
        path: placed.path,
        query: placed.query,
        body: placed.body,
      });
      if (errors.length > 0) throw badParameter(validationMessage(errors));
      const subject = await authorize(caller, operation, path);

      // The map is typed per operation; here one call site serves them all.
      const handler = handlers[operationId] as unknown as (c: HandlerContext<OperationId>) => Promise<{
        status: number;
        body?: unknown;
        stream?: Readable | Buffer;
        headers?: Record<string, string>;
      }>;
      const result = await handler({
        params: { ...placed.query, ...placed.header, ...placed.path } as never,
        subject: subject as never,
        principal: principal as never,
        body: placed.body as never,
        caller,
        services,
        request: {
          apiPath,
          query: rawQuery,
          externalUrl: config.externalUrl,
          ip: ctx.ip,
          method: ctx.method,
          userAgent: ctx.get('User-Agent'),
          headers: ctx.headers,
        },
        files,
        rawBody: rawBody ? ctx.req : undefined,
      });
      // Koa drops the body of a HEAD response itself, keeping its headers.
      if (result.stream !== undefined) {
        ctx.status = result.status;
        ctx.set(result.headers ?? {});
        ctx.body = result.stream;
      } else writeJson(ctx, result.status, result.body, result.headers);
    }
  };
}

/** Where multipart files are written as they arrive: beside the uploads, so that keeping one is a rename. */
export const uploadSpoolDir = (config: Pick<Config, 'dataDir'>) =>
  path.join(config.dataDir, 'tmp', 'uploads');

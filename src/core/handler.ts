import type { Readable } from 'node:stream';
import type { operations } from '../../generated/openapi.js';
import type { OperationCredentials, OperationSubjects } from '../../generated/operation-subjects.js';
import type { Caller } from './auth.js';
import type { PrincipalTypes } from './credentials.js';
import type { SerializedJson, UploadedFile } from './http.js';
import type { RequestInfo } from './pagination.js';
import type { ServiceKey, ServiceRegistry } from './service-registry.js';
import type { SubjectTypes } from './subjects.js';

/** Every operation in the contract. The handler map must have one handler for each. */
export type OperationId = keyof operations;
type Op<O extends OperationId> = operations[O];

type ParamsIn<O extends OperationId, In extends 'path' | 'query' | 'header'> = Op<O>['parameters'] extends {
  [K in In]?: infer P;
}
  ? [P] extends [undefined]
    ? unknown
    : NonNullable<P>
  : unknown;

/** Path, query and declared header parameters, after coercion and validation. */
export type Params<O extends OperationId> = ParamsIn<O, 'path'> &
  ParamsIn<O, 'query'> &
  ParamsIn<O, 'header'>;

/** The validated request body, whichever media type it came in. */
export type Body<O extends OperationId> =
  Op<O> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : undefined;

type Responses<O extends OperationId> = Op<O>['responses'];
type SuccessStatus<O extends OperationId> = Extract<keyof Responses<O>, 200 | 201 | 202 | 204 | 302 | 304>;
type JsonBody<R> = R extends { content: { 'application/json': infer B } } ? B : null;

/** A success status whose content is not JSON (raw files, archives) is answered with bytes or a stream. */
type StatusResult<S, R> = R extends { content: { 'application/json': unknown } }
  ? { status: S; body: JsonBody<R> | SerializedJson<JsonBody<R>>; headers?: Record<string, string> }
  : R extends { content: object }
    ? { status: S; stream: Readable | Buffer; headers: Record<string, string> & { 'Content-Type': string } }
    : { status: S; body: null; headers?: Record<string, string> };

/** What a handler returns: one of its operation's success statuses with that status's body. */
export type HandlerResult<O extends OperationId> = {
  [S in SuccessStatus<O>]: StatusResult<S, Responses<O>[S]>;
}[SuccessStatus<O>];

/** The subject the operation declares (`x-subject`), resolved and authorized by the pipeline. */
export type SubjectOf<O extends OperationId> = OperationSubjects[O] extends keyof SubjectTypes
  ? SubjectTypes[OperationSubjects[O]]
  : undefined;

/**
 * What the operation's own credential stands for (a non-user scheme in its `security`), resolved by the
 * pipeline; undefined for operations called by users.
 */
export type PrincipalOf<O extends OperationId> = O extends keyof OperationCredentials
  ? PrincipalTypes[OperationCredentials[O] & keyof PrincipalTypes]
  : undefined;

type PrincipalField<O extends OperationId> = O extends keyof OperationCredentials
  ? { principal: PrincipalOf<O> }
  : { principal?: undefined };

/** What a handler is called with; `services` holds only the services its file names (`S`). */
export type HandlerContext<O extends OperationId, S extends ServiceKey = ServiceKey> = PrincipalField<O> & {
  params: Params<O>;
  subject: SubjectOf<O>;
  body: Body<O>;
  caller: Caller;
  services: Pick<ServiceRegistry, S>;
  request: RequestInfo;
  /** Files of a multipart body, by field name, for operations that take them (`x-max-upload-bytes`). */
  files?: Record<string, UploadedFile>;
  /** The request body as it arrives, for operations marked `x-raw-body` (nothing parsed it). */
  rawBody?: Readable;
};

export type Handler<O extends OperationId, S extends ServiceKey = ServiceKey> = (
  context: HandlerContext<O, S>,
) => Promise<HandlerResult<O>>;

export type HandlerMap = { [O in OperationId]: Handler<O> };

/**
 * Lets a family file declare a part of the map with full typing. The file names the services its
 * handlers use: they see those alone, so a use of another one does not compile, and at run time the
 * context holds only them.
 */
export function defineHandlers<S extends ServiceKey, K extends OperationId>(
  services: readonly S[],
  handlers: { [O in K]: Handler<O, S> },
): { [O in K]: Handler<O> } {
  // One object per registry (the server has one; tests may build others).
  const picked = new WeakMap<ServiceRegistry, Pick<ServiceRegistry, S>>();
  const only = (registry: ServiceRegistry) => {
    let named = picked.get(registry);
    if (!named) {
      named = Object.fromEntries(services.map((key) => [key, registry[key]])) as Pick<ServiceRegistry, S>;
      picked.set(registry, named);
    }
    return named;
  };
  const narrowed = Object.entries(handlers).map(([operationId, handler]) => [
    operationId,
    (context: HandlerContext<K>) =>
      (handler as Handler<K, S>)({ ...context, services: only(context.services) }),
  ]);
  // Each handler keeps its operation's type; only its context's services differ.
  return Object.fromEntries(narrowed) as unknown as { [O in K]: Handler<O> };
}

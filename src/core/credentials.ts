import type { Caller } from './auth.js';

/**
 * Non-user credentials: security schemes of the contract that authenticate something other than a user
 * (a cluster agent, an Unleash client; job, runner and deploy tokens, registry JWTs and alert keys
 * next). The family that owns a scheme adds its principal's type here by declaration merging
 * (`interface PrincipalTypes { KubernetesAgentToken: AgentInfo }`) and its resolver through its
 * manifest (`credentials`). The pipeline reads the credential where the scheme says, resolves it once
 * (401 when none is presented or the resolver does not know it) and hands the handler the principal,
 * typed per operation from its `security` (generated/operation-subjects.d.ts).
 */

/** The principal of each non-user security scheme, by the scheme's name in the contract. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface PrincipalTypes {}

export type CredentialScheme = keyof PrincipalTypes;

/** What a resolver may read of the request besides the credential. */
export interface CredentialRequest {
  /** The operation's path parameters as matched (a credential may hold for one project only). */
  path: Readonly<Record<string, string>>;
}

/** The principal a presented credential stands for, or null: the pipeline answers 401. */
export type CredentialResolver<P> = (credential: string, request: CredentialRequest) => Promise<P | null>;

export type CredentialResolvers = { [K in CredentialScheme]: CredentialResolver<PrincipalTypes[K]> };

/** The schemes that authenticate a user (the users family's tokens), not a principal of their own. */
export const USER_SCHEMES: ReadonlySet<string> = new Set(['PrivateToken']);

/**
 * Schemes that authenticate a caller acting for a user within a narrower reach (a CI job token: its
 * job's user, its project and the projects that allow it). An operation names them in its `security`
 * beside `PrivateToken`; the family that issues them resolves them through its manifest
 * (`callerCredentials`). Null: the pipeline answers 401.
 */
export type CallerScheme = string;
export type CallerCredentialResolver = (credential: string) => Promise<Caller | null>;
export type CallerCredentialResolvers = Record<CallerScheme, CallerCredentialResolver>;

/**
 * A family is a folder with one manifest: its entities, migrations, services, handlers, event
 * subscribers and contributions to other families' extension points. `src/families.ts` lists the
 * manifests; everything else is built from that list.
 *
 * Core names no family: each family adds its services to `ServiceRegistry` by declaration merging
 * (`declare module '../core/family.js'`), and the registry is assembled here in dependency order.
 */
import type { DataSource } from 'typeorm';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { registerAbilities, type AbilityDeclarations } from './abilities.js';
import type {
  CallerCredentialResolver,
  CallerCredentialResolvers,
  CallerScheme,
  CredentialResolver,
  CredentialResolvers,
  PrincipalTypes,
} from './credentials.js';
import type { AnySubscriber, Events } from './events.js';
import { createObjectStore, type ObjectStore } from './object-store.js';
import type { HandlerMap, OperationId, Handler } from './handler.js';
import type { ServiceKey, ServiceRegistry } from './service-registry.js';
import type { SubjectResolver, SubjectResolvers, SubjectTypes } from './subjects.js';

/** What every service may use without naming it: the database, the configuration, events and the log. */
export interface CoreDeps {
  dataSource: DataSource;
  config: Config;
  /** Where services publish what follows their changes, in the change's transaction. */
  events: Events;
  /** For work that runs off the request path, whose failures have no response to go to. */
  logger: Logger;
  /** What other families add to this family's extension points (read once the services are built). */
  contributions: Contributions;
  /** Where uploaded objects (artifacts, traces, blobs, packages) are kept: files or an S3 bucket. */
  objectStore: ObjectStore;
}

/** What the application gives `buildServices`; the contributions are built with the services. */
export type CoreInput = Omit<CoreDeps, 'contributions' | 'objectStore'> & { objectStore?: ObjectStore };

/**
 * Extension points, by name: a family that lets others extend what it does declares one by declaration
 * merging (`interface ContributionPoints { projectAttributes: ... }`), and other families contribute
 * through their manifest's `contributes`, so that neither calls into the other by hand.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ContributionPoints {}

export type ContributionKey = keyof ContributionPoints;

/** A family's contributions to extension points, each built from the services. */
export type ContributionDefinitions = {
  [K in ContributionKey]?: (services: ServiceRegistry) => ContributionPoints[K];
};

/** Every family's contributions to each point; filled once every service is built. */
export class Contributions {
  private readonly byPoint = new Map<ContributionKey, unknown[]>();
  private complete = false;

  of<K extends ContributionKey>(point: K): ReadonlyArray<ContributionPoints[K]> {
    if (!this.complete)
      throw new Error(`contributions to ${String(point)} are read before the services are built`);
    return (this.byPoint.get(point) ?? []) as Array<ContributionPoints[K]>;
  }

  /** Builds the families' contributions from the services; done once, by `buildServices`. */
  collect(services: ServiceRegistry, families: readonly AnyFamily[]): void {
    for (const family of families)
      for (const [point, define] of Object.entries(family.contributes ?? {}) as Array<
        [ContributionKey, (services: ServiceRegistry) => unknown]
      >)
        this.byPoint.set(point, [...(this.byPoint.get(point) ?? []), define(services)]);
    this.complete = true;
  }
}

/** A family's subscribers to events, built from the services they use. */
export type SubscriberDefinitions = (services: ServiceRegistry) => readonly AnySubscriber[];

/** Every service of every family, by key; families add theirs by declaration merging on this module. */
export type { ServiceKey, ServiceRegistry };

/** One service: its key, the services it names, and how it is built from them. */
export interface ServiceDefinition<K extends ServiceKey = ServiceKey, D extends ServiceKey = ServiceKey> {
  key: K;
  needs: readonly D[];
  create: (core: CoreDeps, deps: Pick<ServiceRegistry, D>) => ServiceRegistry[K];
}

export const defineService = <K extends ServiceKey, D extends ServiceKey = never>(
  key: K,
  needs: readonly D[],
  create: (core: CoreDeps, deps: Pick<ServiceRegistry, D>) => ServiceRegistry[K],
): ServiceDefinition<K, D> => ({ key, needs, create });

type HandlersFor<K extends OperationId> = { [O in K]: Handler<O> };

/** How a family resolves the subject kinds it owns, from the built services. */
export type SubjectDefinitions = {
  [K in keyof SubjectTypes]?: (services: ServiceRegistry) => SubjectResolver<SubjectTypes[K]>;
};

/** How a family resolves the non-user credentials (security schemes) it owns, from the built services. */
export type CredentialDefinitions = {
  [K in keyof PrincipalTypes]?: (services: ServiceRegistry) => CredentialResolver<PrincipalTypes[K]>;
};

/** How a family resolves the schemes that act for a user within a narrower reach (CI job tokens). */
export type CallerCredentialDefinitions = Record<
  CallerScheme,
  (services: ServiceRegistry) => CallerCredentialResolver
>;

/** Any family, whatever its operations: what the lists of families are made of. */
export interface AnyFamily {
  /** Named like the family's folder and spec file. */
  name: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities?: readonly Function[];
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations?: readonly Function[];
  services?: readonly ServiceDefinition<ServiceKey, ServiceKey>[];
  subjects?: SubjectDefinitions;
  /** The non-user security schemes the family resolves to its principals. */
  credentials?: CredentialDefinitions;
  /** The schemes the family resolves to a caller acting for a user (see credentials.ts). */
  callerCredentials?: CallerCredentialDefinitions;
  /** The family's abilities (`defineAbilities`), merged into the one catalogue. */
  abilities?: AbilityDeclarations;
  subscribers?: SubscriberDefinitions;
  /** What the family adds to other families' extension points. */
  contributes?: ContributionDefinitions;
  handlers?: object;
}

/** A family with the handlers of its operations `K`, each typed by its operation. */
export interface FamilyManifest<K extends OperationId = never> extends AnyFamily {
  handlers?: HandlersFor<K>;
}

export const defineFamily = <K extends OperationId = never>(manifest: FamilyManifest<K>) => manifest;

type UnionToIntersection<U> = (U extends unknown ? (arg: U) => void : never) extends (arg: infer I) => void
  ? I
  : never;

/** The handlers of all the families, as one map; assigning it to HandlerMap checks that none is missing. */
export type HandlersOf<F extends readonly AnyFamily[]> = UnionToIntersection<
  NonNullable<F[number]['handlers']>
>;

export function mergeHandlers<F extends readonly AnyFamily[]>(families: F): HandlersOf<F> {
  const merged: Partial<HandlerMap> = {};
  for (const family of families) {
    for (const [operationId, handler] of Object.entries(family.handlers ?? {})) {
      if (operationId in merged) throw new Error(`${family.name}: ${operationId} has a handler already`);
      Object.assign(merged, { [operationId]: handler });
    }
  }
  return merged as HandlersOf<F>;
}

/**
 * Builds every service after the services it names, whatever the order of the list; a cycle or a
 * service that names one nobody provides stops the start with the chain that caused it.
 */
export function buildServices(input: CoreInput, families: readonly AnyFamily[]): ServiceRegistry {
  const core: CoreDeps = {
    ...input,
    contributions: new Contributions(),
    objectStore: input.objectStore ?? createObjectStore(input.config.objectStore),
  };
  const definitions = new Map<ServiceKey, ServiceDefinition>();
  for (const family of families) {
    for (const definition of family.services ?? []) {
      if (definitions.has(definition.key)) throw new Error(`service ${definition.key} is defined twice`);
      definitions.set(definition.key, definition);
    }
  }
  // Filled in dependency order below; complete once every definition is built.
  const registry: Partial<Record<ServiceKey, unknown>> = {};
  const built = new Map<ServiceKey, unknown>();
  const building: ServiceKey[] = [];
  const build = (key: ServiceKey): unknown => {
    if (built.has(key)) return built.get(key);
    const definition = definitions.get(key);
    if (!definition) throw new Error(`no family provides the service ${key} (${building.join(' -> ')})`);
    if (building.includes(key)) throw new Error(`service cycle: ${[...building, key].join(' -> ')}`);
    building.push(key);
    const deps = Object.fromEntries(definition.needs.map((need) => [need, build(need)]));
    building.pop();
    const service = definition.create(core, deps as Pick<ServiceRegistry, ServiceKey>);
    built.set(key, service);
    return service;
  };
  for (const key of definitions.keys()) registry[key] = build(key);
  core.contributions.collect(registry as ServiceRegistry, families);
  return registry as ServiceRegistry;
}

/** Every subject kind's resolver; a kind no family resolves, or two families resolve, stops the start. */
export function buildSubjectResolvers(
  services: ServiceRegistry,
  families: readonly AnyFamily[],
): SubjectResolvers {
  const resolvers: Partial<Record<keyof SubjectTypes, unknown>> = {};
  for (const family of families) {
    for (const [kind, define] of Object.entries(family.subjects ?? {}) as Array<
      [keyof SubjectTypes, (services: ServiceRegistry) => unknown]
    >) {
      if (kind in resolvers) throw new Error(`subject ${kind} is resolved twice`);
      resolvers[kind] = define(services);
    }
  }
  return resolvers as SubjectResolvers;
}

/** Every non-user scheme's resolver; a scheme two families resolve stops the start. */
export function buildCredentialResolvers(
  services: ServiceRegistry,
  families: readonly AnyFamily[],
): CredentialResolvers {
  const resolvers: Partial<Record<keyof PrincipalTypes, unknown>> = {};
  for (const family of families) {
    for (const [scheme, define] of Object.entries(family.credentials ?? {}) as Array<
      [keyof PrincipalTypes, (services: ServiceRegistry) => unknown]
    >) {
      if (scheme in resolvers) throw new Error(`security scheme ${scheme} is resolved twice`);
      resolvers[scheme] = define(services);
    }
  }
  return resolvers as CredentialResolvers;
}

/** Every caller scheme's resolver; a scheme two families resolve stops the start. */
export function buildCallerCredentialResolvers(
  services: ServiceRegistry,
  families: readonly AnyFamily[],
): CallerCredentialResolvers {
  const resolvers: CallerCredentialResolvers = {};
  for (const family of families) {
    for (const [scheme, define] of Object.entries(family.callerCredentials ?? {}) as Array<
      [CallerScheme, (services: ServiceRegistry) => CallerCredentialResolver]
    >) {
      if (scheme in resolvers) throw new Error(`security scheme ${String(scheme)} is resolved twice`);
      resolvers[scheme] = define(services);
    }
  }
  return resolvers;
}

/**
 * Fills the catalogue of abilities from every family's declarations; done once, when the list of
 * families is loaded, so that every ability question (and the permission matrix) reads the same one.
 */
export function installAbilities(families: readonly AnyFamily[]): void {
  registerAbilities(families);
}

/**
 * The pipelines family's reach into services built alongside it, behind one class so that their arrival
 * is a one-line change (their keys in the manifest's `needs`): until `ciVariables` and `planLimits` are
 * registered, a pipeline sees no instance, group or project variables and GitLab's default plan's limits.
 */
import type { EntityManager } from 'typeorm';
import * as ciConfigModule from '../ci_config/index.js';

/** The configuration language (src/ci_config). */
export const ciConfig = () => ciConfigModule;

export interface CiVariable {
  key: string;
  value: string;
  variable_type: 'env_var' | 'file';
  raw: boolean;
  masked: boolean;
  protected: boolean;
  hidden: boolean;
}

/** The plan limits a pipeline is checked against (0: no limit). */
export interface CiPlanLimits {
  ci_pipeline_size: number;
  ci_active_jobs: number;
  ci_needs_size_limit: number;
  pipeline_hierarchy_size: number;
}

/** GitLab's `default` plan (the only plan of the community edition). */
export const DEFAULT_PLAN_LIMITS: CiPlanLimits = {
  ci_pipeline_size: 0,
  ci_active_jobs: 0,
  ci_needs_size_limit: 50,
  pipeline_hierarchy_size: 1000,
};

/** What the variables and limits services will offer; absent until their branch is merged. */
export interface CiSettingsServices {
  ciVariables?: {
    forPipeline(
      scope: { projectId: number; protectedRef: boolean; environment?: string | null },
      manager?: EntityManager,
    ): Promise<CiVariable[]>;
  };
  planLimits?: { current(manager?: EntityManager): Promise<CiPlanLimits> };
}

export class CiSettings {
  constructor(private services: CiSettingsServices = {}) {}

  /** Replaces the services read (tests set plan limits this way until the plan limits family exists). */
  use(services: CiSettingsServices): void {
    this.services = services;
  }

  /** Instance, group (outermost first) and project variables; later wins. */
  variables(projectId: number, protectedRef: boolean, manager?: EntityManager): Promise<CiVariable[]> {
    return (
      this.services.ciVariables?.forPipeline({ projectId, protectedRef }, manager) ?? Promise.resolve([])
    );
  }

  async limits(manager?: EntityManager): Promise<CiPlanLimits> {
    return (await this.services.planLimits?.current(manager)) ?? DEFAULT_PLAN_LIMITS;
  }
}

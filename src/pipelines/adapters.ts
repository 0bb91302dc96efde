/**
 * What the pipelines read of the CI/CD variables and plan limits families, as narrow interfaces: creation,
 * lint's dry run and the processing need only these two questions answered.
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

/** The variables and limits services the pipelines read. */
export interface CiSettingsServices {
  ciVariables: {
    forPipeline(
      scope: { projectId: number; protectedRef: boolean; environment?: string | null },
      manager?: EntityManager,
    ): Promise<CiVariable[]>;
  };
  planLimits: { current(manager?: EntityManager): Promise<CiPlanLimits> };
}

export class CiSettings {
  constructor(private readonly services: CiSettingsServices) {}

  /** Instance, group (outermost first) and project variables; later wins. */
  variables(projectId: number, protectedRef: boolean, manager?: EntityManager): Promise<CiVariable[]> {
    return this.services.ciVariables.forPipeline({ projectId, protectedRef }, manager);
  }

  limits(manager?: EntityManager): Promise<CiPlanLimits> {
    return this.services.planLimits.current(manager);
  }
}

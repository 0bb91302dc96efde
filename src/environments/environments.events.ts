/** Events of the environments family, added to the catalog of src/core/events.ts. */

/** An environment's `auto_stop_at` has come (published with `startAfter` when a deployment set it). */
export interface EnvironmentAutoStopDue {
  environmentId: number;
}

/** A review app scheduled for deletion has reached its `auto_delete_at`. */
export interface EnvironmentAutoDeleteDue {
  environmentId: number;
}

declare module '../core/events.js' {
  interface EventCatalog {
    'environments.auto_stop_due': EnvironmentAutoStopDue;
    'environments.auto_delete_due': EnvironmentAutoDeleteDue;
  }
}

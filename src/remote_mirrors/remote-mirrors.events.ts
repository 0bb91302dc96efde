/** Events of the remote mirrors family, added to the catalog of src/core/events.ts. */

/** A mirror's update was scheduled, after a push or by the force update. */
export interface RemoteMirrorUpdateRequested {
  mirrorId: number;
}

declare module '../core/events.js' {
  interface EventCatalog {
    'remote_mirror.update_requested': RemoteMirrorUpdateRequested;
  }
}

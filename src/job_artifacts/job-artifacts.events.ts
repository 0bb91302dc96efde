/** Events of the job_artifacts family, added to the catalog of src/core/events.ts. */

/** A project's artifacts may have expired (an expiry date passed, or all were set to expire now). */
export interface JobArtifactsExpiryDue {
  projectId: number;
}

/** Rows of artifacts were deleted in a transaction (a job's erase): their objects go once it committed. */
export interface JobArtifactObjectsReleased {
  keys: string[];
}

/** An upload's object was (or is about to be) written: once its row had time to commit, it is checked. */
export interface JobArtifactUploadSettled {
  key: string;
}

declare module '../core/events.js' {
  interface EventCatalog {
    'ci.job_artifacts_expiry_due': JobArtifactsExpiryDue;
    'ci.job_artifact_objects_released': JobArtifactObjectsReleased;
    'ci.job_artifact_upload_settled': JobArtifactUploadSettled;
  }
}

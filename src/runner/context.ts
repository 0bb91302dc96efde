/** What a job's stages share: its payload, directories, environment, trace and the API client. */
import type { RunnerClient } from './client.js';
import type { JobPayload } from './payload.js';
import type { JobUser } from './proc.js';
import type { JobTrace } from './trace.js';

export interface JobContext {
  job: JobPayload;
  projectDir: string;
  tmpDir: string;
  env: NodeJS.ProcessEnv;
  lookup: (key: string) => string | undefined;
  trace: JobTrace;
  user?: JobUser;
  client: RunnerClient;
}

/**
 * The built-in runner's own registration, through the API like any client: with the root token it
 * creates an instance runner (POST /user/runners) and keeps the `glrt-` token in DATA_DIR/runner/token
 * (mode 0600); a later start verifies that token and registers anew only when the server refuses it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { RunnerClient } from './client.js';
import type { RunnerSettings } from './config.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function readRootToken(settings: RunnerSettings): string | undefined {
  if (settings.rootToken) return settings.rootToken;
  try {
    return fs.readFileSync(path.join(settings.dataDir, 'root-token'), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Waits for the server to answer (it may be starting beside the runner). */
export async function waitForServer(
  url: string,
  log: (m: string) => void,
  limitMs = 10 * 60 * 1000,
): Promise<void> {
  const probe = new RunnerClient(url, '', '');
  const until = Date.now() + limitMs;
  for (let said = false; ;) {
    try {
      await probe.send({ method: 'GET', path: '/version', timeoutMs: 5000 });
      return;
    } catch (err) {
      if (Date.now() > until)
        throw new Error(`the server at ${url} does not answer: ${(err as Error).message}`);
      if (!said) log(`waiting for the server at ${url}...`);
      said = true;
      await sleep(1000);
    }
  }
}

async function createInstanceRunner(settings: RunnerSettings, log: (m: string) => void): Promise<string> {
  const probe = new RunnerClient(settings.url, '', settings.systemId);
  for (;;) {
    // The server writes the root token on its first start: the runner may come up first.
    const rootToken = readRootToken(settings);
    if (!rootToken) {
      log('waiting for the root token (FORGE_ROOT_TOKEN or DATA_DIR/root-token)...');
      await sleep(2000);
      continue;
    }
    const answer = await probe.send({
      method: 'POST',
      path: '/user/runners',
      headers: { 'Content-Type': 'application/json', 'PRIVATE-TOKEN': rootToken },
      body: JSON.stringify({
        runner_type: 'instance_type',
        description: settings.description,
        run_untagged: true,
        ...(settings.tagList ? { tag_list: settings.tagList } : {}),
      }),
    });
    if (answer.status === 201) {
      const { id, token } = JSON.parse(answer.body.toString()) as { id: number; token: string };
      fs.mkdirSync(path.dirname(settings.tokenFile), { recursive: true });
      fs.writeFileSync(settings.tokenFile, `${token}\n`, { mode: 0o600 });
      fs.chmodSync(settings.tokenFile, 0o600);
      log(`registered instance runner ${id}; its token is saved in ${settings.tokenFile}`);
      return token;
    }
    throw new Error(
      `creating the instance runner failed: ${answer.status} ${answer.body.toString().slice(0, 300)}`,
    );
  }
}

/** The token the runner polls with: given, saved and still valid, or newly registered. */
export async function runnerToken(settings: RunnerSettings, log: (m: string) => void): Promise<string> {
  await waitForServer(settings.url, log);
  if (settings.token) {
    if (!(await new RunnerClient(settings.url, settings.token, settings.systemId).verify()))
      throw new Error('the server does not know this runner token (POST /runners/verify answered 403)');
    return settings.token;
  }
  if (!settings.register)
    throw new Error('no runner token: set FORGE_RUNNER_TOKEN (a glrt- token) or FORGE_RUNNER_REGISTER=true');
  let saved: string | undefined;
  try {
    saved = fs.readFileSync(settings.tokenFile, 'utf8').trim() || undefined;
  } catch {
    saved = undefined;
  }
  if (saved && (await new RunnerClient(settings.url, saved, settings.systemId).verify())) return saved;
  if (saved) log('the saved runner token is no longer valid: registering again');
  return createInstanceRunner(settings, log);
}

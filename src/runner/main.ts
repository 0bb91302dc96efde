/**
 * `make runner` / `node dist/src/runner/main.js`: the built-in shell runner. It is a client of the
 * runner API only (like GitLab Runner) and imports nothing of the server. Settings: config.ts.
 */
import { loadRunnerSettings, parseArgs } from './config.js';
import { runnerToken } from './register.js';
import { Runner } from './runner.js';

const log = (message: string) => process.stderr.write(`${new Date().toISOString()} runner: ${message}\n`);

async function main(): Promise<void> {
  const settings = loadRunnerSettings(parseArgs(process.argv.slice(2), process.env));
  const token = await runnerToken(settings, log);
  const runner = new Runner(settings, token, log);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log(`${signal}: stopping (running jobs are aborted and reported)`);
    void runner.stop().then(() => process.exit(0));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  await runner.start();
}

main().catch((err: Error) => {
  log(err.message);
  process.exit(1);
});

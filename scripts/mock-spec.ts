/**
 * The spec as `make mock` serves it. Prism ignores the path of the server URL, so it would answer
 * `/projects` where GitLab clients call `/api/v4/projects`: this moves every path under `/api/v4`.
 *
 *   node --import tsx scripts/mock-spec.ts [in=generated/openapi.json] [out=.forge-test/mock-openapi.json]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const API_PREFIX = '/api/v4';

export function mockSpec(spec: { paths: Record<string, unknown>; servers?: unknown }) {
  const paths = Object.fromEntries(
    Object.entries(spec.paths).map(([route, item]) => [`${API_PREFIX}${route}`, item]),
  );
  return {
    ...spec,
    servers: [{ url: '/', description: 'The Prism mock; paths carry /api/v4 as GitLab’s do.' }],
    paths,
  };
}

export function writeMockSpec(input: string, output: string): string {
  const spec = JSON.parse(fs.readFileSync(input, 'utf8'));
  fs.mkdirSync(path.dirname(output), { recursive: true });
  fs.writeFileSync(output, JSON.stringify(mockSpec(spec)));
  return output;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [input = 'generated/openapi.json', output = '.forge-test/mock-openapi.json'] = process.argv.slice(2);
  process.stdout.write(`${writeMockSpec(input, output)}\n`);
}

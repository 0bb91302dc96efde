/**
 * The lint rule `forge-tags/tag-has-operations` (scripts/redocly-tags.js), run by the real CLI on a small
 * contract: a tag, or a tag that `x-tagGroups` lists, without an operation is refused, so the docs page
 * shows no family that is not served.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-tag-lint-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The rule's problems, as `message @ pointer`. */
function lint(spec: object): string[] {
  const specFile = path.join(dir, 'spec.json');
  const configFile = path.join(dir, 'redocly.yaml');
  fs.writeFileSync(specFile, JSON.stringify(spec));
  fs.writeFileSync(
    configFile,
    `plugins:\n  - ${path.join(root, 'scripts/redocly-tags.js')}\nrules:\n  forge-tags/tag-has-operations: error\n`,
  );
  const result = spawnSync(
    path.join(root, 'node_modules/.bin/redocly'),
    ['lint', specFile, '--config', configFile, '--format', 'json'],
    {
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', REDOCLY_TELEMETRY: 'off' },
    },
  );
  const { problems } = JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as {
    problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }>;
  };
  return problems
    .filter((problem) => problem.ruleId === 'forge-tags/tag-has-operations')
    .map((problem) => `${problem.message} @ ${problem.location[0].pointer}`);
}

describe('forge-tags/tag-has-operations', () => {
  const problems = lint({
    openapi: '3.1.0',
    info: { title: 't', version: '1', license: { name: 'MIT', identifier: 'MIT' } },
    servers: [{ url: 'http://localhost' }],
    tags: [
      { name: 'Served', description: 'Has an operation.' },
      { name: 'Planned', description: 'Has none yet.' },
    ],
    'x-tagGroups': [{ name: 'Group', tags: ['Served', 'Planned', 'Undeclared'] }],
    paths: {
      '/served': { get: { tags: ['Served'], responses: { '200': { description: 'ok' } } } },
    },
  });

  it('accepts a tag with an operation', () => {
    expect(problems.filter((problem) => problem.includes('"Served"'))).toEqual([]);
  });

  it('refuses a tag without one, declared or listed in a tag group', () => {
    expect(problems.sort()).toEqual(
      [
        'Tag "Planned" has no operation: remove it until its family has one. @ #/tags/1/name',
        'x-tagGroups "Group" lists "Planned", which has no operation. @ #/x-tagGroups/0/tags/1',
        'x-tagGroups "Group" lists "Undeclared", which has no operation. @ #/x-tagGroups/0/tags/2',
      ].sort(),
    );
  });
});

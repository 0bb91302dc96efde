/**
 * The lint rule `forge/integer-bounds` (scripts/redocly-declarations.js), run by the real CLI on a small
 * contract: every integer declares both bounds, and an integer a request carries stays within
 * PostgreSQL's `integer`.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-integer-lint-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const bounded = (min: number, max: number) => ({ type: 'integer', minimum: min, maximum: max });

type Integers = { param: object; body: object; response: object; header: object };

/** One operation whose integers are given by `integers`. */
const operation = (integers: Integers) => ({
  post: {
    parameters: [{ name: 'id', in: 'path', required: true, schema: integers.param }],
    requestBody: {
      content: { 'application/json': { schema: { type: 'object', properties: { size: integers.body } } } },
    },
    responses: {
      '200': {
        description: 'ok',
        headers: { 'X-Total': { schema: integers.header } },
        content: {
          'application/json': {
            schema: { type: 'object', properties: { counts: { type: 'array', items: integers.response } } },
          },
        },
      },
    },
  },
});

const good: Integers = {
  param: bounded(-2147483648, 2147483647),
  body: bounded(0, 2147483647),
  response: bounded(0, 9007199254740991),
  header: bounded(0, 9007199254740991),
};

/** One run of the CLI (a few seconds) for every case: each is an operation of its own path. */
const CASES: Record<string, Integers> = {
  good,
  missing: {
    param: { type: 'integer', maximum: 2147483647 },
    body: { type: ['integer', 'null'], minimum: 0 },
    response: { type: 'integer' },
    header: { type: 'integer', enum: [1, 2] },
  },
  wrong: { ...good, body: bounded(0, 9007199254740991), response: bounded(5, 1) },
  /** A `bigint` column's value (`format: int64`): JSON's exact integers, not beyond. */
  wide: { ...good, body: { ...bounded(0, 9007199254740991), format: 'int64' } },
  wider: { ...good, body: { ...bounded(0, 9007199254740992), format: 'int64' } },
};

/** The problems the rule reports for each case, as `message @ pointer below the operation`. */
function lint(): Record<string, string[]> {
  const spec = {
    openapi: '3.1.0',
    info: { title: 't', version: '1', license: { name: 'MIT', identifier: 'MIT' } },
    servers: [{ url: 'http://localhost' }],
    paths: Object.fromEntries(
      Object.entries(CASES).map(([name, integers]) => [`/${name}/{id}`, operation(integers)]),
    ),
  };
  const specFile = path.join(dir, 'spec.json');
  const configFile = path.join(dir, 'redocly.yaml');
  fs.writeFileSync(specFile, JSON.stringify(spec));
  fs.writeFileSync(
    configFile,
    `plugins:\n  - ${path.join(root, 'scripts/redocly-declarations.js')}\nrules:\n  forge/integer-bounds: error\n`,
  );
  const result = spawnSync(
    path.join(root, 'node_modules/.bin/redocly'),
    ['lint', specFile, '--config', configFile, '--format', 'json'],
    { encoding: 'utf8', env: { ...process.env, REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
  );
  const { problems } = JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as {
    problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }>;
  };
  const found: Record<string, string[]> = Object.fromEntries(Object.keys(CASES).map((name) => [name, []]));
  for (const problem of problems.filter((p) => p.ruleId === 'forge/integer-bounds')) {
    const [, name, rest] = problem.location[0].pointer.match(/^#\/paths\/~1([a-z]+)~1\{id\}\/post(.*)$/)!;
    found[name].push(`${problem.message} @ ${rest}`);
  }
  return found;
}

describe('forge/integer-bounds', () => {
  const found = lint();

  it('accepts integers with both bounds, a request within PostgreSQL integer', () => {
    expect(found.good).toEqual([]);
  });

  it('refuses an integer missing a bound, wherever it is', () => {
    expect(found.missing.sort()).toEqual(
      [
        'An integer declares its minimum and maximum; missing minimum. @ /parameters/0/schema/type',
        'An integer declares its minimum and maximum; missing maximum. @ /requestBody/content/application~1json/schema/properties/size/type',
        'An integer declares its minimum and maximum; missing minimum and maximum. @ /responses/200/content/application~1json/schema/properties/counts/items/type',
        'An integer declares its minimum and maximum; missing minimum and maximum. @ /responses/200/headers/X-Total/schema/type',
      ].sort(),
    );
  });

  it('accepts an int64 request integer up to 2^53 - 1, and no further', () => {
    expect(found.wide).toEqual([]);
    expect(found.wider).toEqual([
      "application/json body.size: an int64 integer in a request stays within -9007199254740991..9007199254740991 (JSON's exact integers). @ /requestBody/content/application~1json/schema/properties/size/type",
    ]);
  });

  it('refuses a request integer beyond PostgreSQL integer, and bounds the wrong way round', () => {
    expect(found.wrong).toEqual([
      "application/json body.size: an integer in a request stays within -2147483648..2147483647 (PostgreSQL's integer). @ /requestBody/content/application~1json/schema/properties/size/type",
      'minimum is above maximum. @ /responses/200/content/application~1json/schema/properties/counts/items/minimum',
    ]);
  });
});

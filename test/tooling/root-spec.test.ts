import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseYaml } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * openapi/openapi.yaml is written by scripts/root-spec.mjs from openapi/head.yaml and the family spec files:
 * a family's spec file (here a throwaway folder family, in a copy of openapi/) is found, its paths referenced,
 * its tag placed in its group and its security scheme declared, without editing openapi.yaml or head.yaml.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const generate = (dir: string, ...args: string[]) =>
  run('node', [path.join(root, 'scripts/root-spec.mjs'), dir, ...args], { cwd: root });

interface Root {
  tags: { name: string; description: string }[];
  'x-tagGroups': { name: string; tags: string[] }[];
  paths: Record<string, { $ref: string }>;
  components: { securitySchemes: Record<string, unknown> };
}
const readRoot = (dir: string) => parseYaml(fs.readFileSync(path.join(dir, 'openapi.yaml'), 'utf8')) as Root;

/** The throwaway family's files, by path under openapi/: all it needs to be served by the contract. */
const FAMILY: Record<string, string> = {
  'throwaways/paths.yaml': `# Throwaways family: made by test/tooling/root-spec.test.ts.
x-tagGroup: Deployment and administration
tags:
  - name: Throwaways
    description: Things a test makes and forgets.
paths:
  /projects/{id}/throwaways:
    parameters:
      - $ref: '../shared/parameters.yaml#/components/parameters/ProjectId'
    get:
      operationId: listProjectThrowaways
      tags: [Throwaways]
      summary: List a project's throwaways
      description: Lists them.
      security:
        - ThrowawayKey: []
      x-subject: project
      x-ability: read_project
      responses:
        '200':
          description: The throwaways.
          content:
            application/json:
              schema:
                $ref: './schemas.yaml#/components/schemas/Throwaway'
              example: { id: 1 }
components:
  securitySchemes:
    ThrowawayKey:
      type: apiKey
      in: header
      name: THROWAWAY-KEY
      description: A throwaway's key.
`,
  'throwaways/schemas.yaml': `# Throwaways family: the model.
components:
  schemas:
    Throwaway:
      type: object
      properties:
        id: { type: integer, minimum: 1, maximum: 2147483647 }
`,
};

let dir: string;
let spec: string;
let before: Root;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-root-spec-'));
  spec = path.join(dir, 'openapi');
  fs.cpSync(path.join(root, 'openapi'), spec, { recursive: true });
  before = readRoot(spec);
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const addFamily = (files: Record<string, string>) => {
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(spec, file)), { recursive: true });
    fs.writeFileSync(path.join(spec, file), text);
  }
};

describe('the root spec (scripts/root-spec.mjs)', () => {
  it('is fresh as committed', async () => {
    await expect(generate(spec, '--check')).resolves.toBeDefined();
  });

  it("picks up a new family's spec folder without editing openapi.yaml or head.yaml", async () => {
    const head = fs.readFileSync(path.join(spec, 'head.yaml'), 'utf8');
    addFamily(FAMILY);
    await expect(generate(spec, '--check')).rejects.toMatchObject({ stderr: expect.stringMatching(/stale/) });
    await generate(spec);

    const after = readRoot(spec);
    expect(fs.readFileSync(path.join(spec, 'head.yaml'), 'utf8')).toBe(head);
    expect(after.paths).toEqual({
      ...before.paths,
      '/projects/{id}/throwaways': { $ref: './throwaways/paths.yaml#/paths/~1projects~1{id}~1throwaways' },
    });
    expect(after.tags).toContainEqual({
      name: 'Throwaways',
      description: 'Things a test makes and forgets.',
    });
    expect(after.tags).toHaveLength(before.tags.length + 1);
    const group = after['x-tagGroups'].find((g) => g.name === 'Deployment and administration');
    expect(group?.tags).toContain('Throwaways');
    expect(after.components.securitySchemes.ThrowawayKey).toEqual({
      $ref: './throwaways/paths.yaml#/components/securitySchemes/ThrowawayKey',
    });

    // Redocly resolves and bundles it as it does generated/openapi.json.
    const bundled = path.join(dir, 'openapi.json');
    await run(
      path.join(root, 'node_modules/.bin/redocly'),
      ['bundle', path.join(spec, 'openapi.yaml'), '--ext', 'json', '-o', bundled],
      {
        cwd: root,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off' },
      },
    );
    const json = JSON.parse(fs.readFileSync(bundled, 'utf8'));
    expect(json.paths['/projects/{id}/throwaways'].get).toMatchObject({
      operationId: 'listProjectThrowaways',
      tags: ['Throwaways'],
      security: [{ ThrowawayKey: [] }],
    });
    expect(json.components.securitySchemes.ThrowawayKey).toMatchObject({
      type: 'apiKey',
      name: 'THROWAWAY-KEY',
    });
  }, 180_000);

  it('refuses a tag group head.yaml does not name, and an operation tag no file declares', async () => {
    addFamily({
      'throwaways/paths.yaml': FAMILY['throwaways/paths.yaml'].replace(
        'Deployment and administration',
        'Elsewhere',
      ),
    });
    await expect(generate(spec)).rejects.toMatchObject({
      stderr: expect.stringMatching(/throwaways\/paths\.yaml: x-tagGroup must name a group of head\.yaml/),
    });
    addFamily({
      'throwaways/paths.yaml': FAMILY['throwaways/paths.yaml'].replace('tags: [Throwaways]', 'tags: [Other]'),
    });
    await expect(generate(spec)).rejects.toMatchObject({
      stderr: expect.stringMatching(/tag "Other" is not declared by any spec file/),
    });
  });
});

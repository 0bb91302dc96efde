// Proves that a family is one folder, one spec file and one line of src/families.ts: copies the
// repository into a temporary directory, adds the throwaway family `widgets` (a new security scheme and
// its credential resolver, a new ability, a merge check), and runs what `make generate` and `make lint`
// run on it. test/tooling/throwaway-family.test.ts builds and starts it; docs/adding-a-family.md walks
// through it.
// Usage: node scripts/throwaway-family.mjs [--keep] (prints the copy's directory and the files changed).
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** What the copy needs to generate, lint, type-check and build; the tests stay behind (tsc needs none). */
const COPIED = [
  'src',
  // Benches (scripts/bench) start their data and peers with the tests' helpers.
  'test/helpers',
  'openapi',
  'scripts',
  'generated',
  'Makefile',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  '.swcrc',
  'redocly.yaml',
  'README.md',
];

/** The widget service's credential, which the family's resolver knows. */
export const WIDGET_TOKEN = 'widget-secret-1';
/** A merge request whose title has this cannot merge while the widget check fails. */
export const WIDGET_MARK = '[widget]';

const SHARED = './shared/responses.yaml#/components/responses';
const errors = [
  ['400', 'BadRequest'],
  ['401', 'Unauthorized'],
  ['403', 'Forbidden'],
  ['404', 'NotFound'],
  ['413', 'PayloadTooLarge'],
  ['429', 'TooManyRequests'],
  ['500', 'InternalServerError'],
  ['503', 'ServiceUnavailable'],
]
  .map(([status, name]) => `        '${status}':\n          $ref: ${SHARED}/${name}`)
  .join('\n');

/** The family, by path in the repository: its spec file and its folder. */
export const WIDGETS = {
  'openapi/widgets.yaml': `# Widgets family: a throwaway made by scripts/throwaway-family.mjs, never committed.
x-tagGroup: Deployment and administration
tags:
  - name: Widgets
    description: |
      A project's widget checks: read by its Reporters, and by the widget service with its own token.
paths:
  /projects/{id}/widget_checks:
    parameters:
      - $ref: ./shared/parameters.yaml#/components/parameters/ProjectId
    get:
      operationId: listWidgetChecks
      tags:
        - Widgets
      summary: List a project's widget checks
      description: |
        The checks the widget service runs on the project's merge requests.

        - **Who.** Reporter and above (\`read_widget\`); administrators too.
      security:
        - PrivateToken: []
      x-subject: project
      x-ability: read_widget
      responses:
        '200':
          description: The checks.
          content:
            application/json:
              schema:
                type: array
                items:
                  $ref: '#/components/schemas/WidgetCheck'
              examples:
                example:
                  $ref: '#/components/examples/WidgetChecks'
${errors}
  /widget_service/checks:
    get:
      operationId: getWidgetServiceChecks
      tags:
        - Widgets
      summary: Get the checks the widget service runs (widget service API)
      description: |
        What the widget service asks with its own token (\`Widget-Token\` header); a personal access token is
        not accepted, and a missing or unknown token answers 401.
      security:
        - WidgetToken: []
      x-subject: none
      responses:
        '200':
          description: The checks.
          content:
            application/json:
              schema:
                type: array
                items:
                  $ref: '#/components/schemas/WidgetCheck'
              examples:
                example:
                  $ref: '#/components/examples/WidgetChecks'
${errors}
components:
  securitySchemes:
    WidgetToken:
      type: apiKey
      in: header
      name: Widget-Token
      description: The widget service's token.
  schemas:
    WidgetCheck:
      type: object
      additionalProperties: false
      required: [name, precedence]
      properties:
        name:
          type: string
          description: The merge check's name.
          example: widget_check
        precedence:
          type: integer
          minimum: 0
          maximum: 1000
          description: Its place among the merge checks.
          example: 65
  examples:
    WidgetChecks:
      value:
        - name: widget_check
          precedence: 65
`,
  'src/widgets/abilities.ts': `import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

export const widgetsAbilities = defineAbilities({
  project: {
    read_widget: { minimum: AccessLevel.Reporter },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    widgets: typeof widgetsAbilities;
  }
}
`,
  'src/widgets/widgets.service.ts': `import type { MergeCheck } from '../merge_requests/extension-points.js';

/** What the widget service's token stands for. */
export interface WidgetService {
  name: 'widget service';
}

export const WIDGET_TOKEN = '${WIDGET_TOKEN}';

export class WidgetsService {
  /** Holds a merge back while the title is marked; not reported in detailed_merge_status. */
  readonly check: MergeCheck = {
    name: 'widget_check',
    message: 'Widgets must pass',
    precedence: 65,
    reported: false,
    blocksMerge: true,
    status: ({ mr }) => (mr.title.includes('${WIDGET_MARK}') ? 'failed' : 'success'),
  };

  authenticate(token: string): Promise<WidgetService | null> {
    return Promise.resolve(token === WIDGET_TOKEN ? { name: 'widget service' } : null);
  }
}
`,
  'src/widgets/widgets.handlers.ts': `import { defineHandlers } from '../core/handler.js';

export const widgetsHandlers = defineHandlers(['widgets'], {
  async listWidgetChecks({ services }) {
    const { name, precedence } = services.widgets.check;
    return { status: 200, body: [{ name, precedence }] };
  },

  async getWidgetServiceChecks({ principal, services }) {
    const { name, precedence } = services.widgets.check;
    return { status: 200, body: principal.name === 'widget service' ? [{ name, precedence }] : [] };
  },
});
`,
  'src/widgets/manifest.ts': `import { widgetsAbilities } from './abilities.js';
import { defineFamily, defineService } from '../core/family.js';
import { widgetsHandlers } from './widgets.handlers.js';
import { WidgetsService, type WidgetService } from './widgets.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    widgets: WidgetsService;
  }
}

declare module '../core/credentials.js' {
  interface PrincipalTypes {
    WidgetToken: WidgetService;
  }
}

export const widgetsManifest = defineFamily({
  name: 'widgets',
  abilities: widgetsAbilities,
  services: [defineService('widgets', [], () => new WidgetsService())],
  credentials: {
    WidgetToken:
      ({ widgets }) =>
      (token) =>
        widgets.authenticate(token),
  },
  contributes: {
    mergeChecks: ({ widgets }) => [widgets.check],
  },
  handlers: widgetsHandlers,
});
`,
};

/** Adds the family's line (and its import) to families.ts, each in its place by name. */
export function addFamilyLine(source, name, manifest) {
  const lines = source.split('\n');
  const insertSorted = (pattern, line) => {
    const matching = lines.flatMap((text, index) => {
      const family = pattern.exec(text)?.[1];
      return family && family !== 'core' ? [{ index, family }] : [];
    });
    const after = matching.filter(({ family }) => family < name).at(-1) ?? matching[0];
    lines.splice(after.index + (after.family < name ? 1 : 0), 0, line);
  };
  insertSorted(
    /^import \{ \w+ \} from '\.\/(\w+)\/manifest\.js';$/,
    `import { ${manifest} } from './${name}/manifest.js';`,
  );
  const list = lines.indexOf('export const families = [');
  const entry = /^ {2}(\w+)Manifest,$/;
  const entries = lines.flatMap((text, index) => {
    const camel = index > list ? entry.exec(text)?.[1] : undefined;
    return camel ? [{ index, family: camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) }] : [];
  });
  const after = entries.filter(({ family }) => family !== 'core' && family < name).at(-1);
  lines.splice(after.index + 1, 0, `  ${manifest},`);
  return lines.join('\n');
}

/** Every file under dir but node_modules and dist, with a digest of its content. */
function snapshot(dir, sub = '', into = new Map()) {
  for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
    const file = path.posix.join(sub, entry.name);
    if (['node_modules', 'dist'].includes(file)) continue;
    if (entry.isDirectory()) snapshot(dir, file, into);
    else
      into.set(
        file,
        crypto
          .createHash('sha1')
          .update(fs.readFileSync(path.join(dir, file)))
          .digest('hex'),
      );
  }
  return into;
}

/** The files added, changed or removed since `before`, sorted. */
export function changedFiles(dir, before) {
  const after = snapshot(dir);
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((name) => before.get(name) !== after.get(name)).sort();
}

/** A copy of the repository (node_modules linked) and its snapshot before the family. */
export function copyRepository() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-throwaway-'));
  for (const entry of COPIED) fs.cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
  fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(dir, 'node_modules'));
  return { dir, before: snapshot(dir) };
}

/** Writes the family's folder and spec file and its one line. */
export function addWidgets(dir) {
  for (const [file, text] of Object.entries(WIDGETS)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  const families = path.join(dir, 'src/families.ts');
  fs.writeFileSync(families, addFamilyLine(fs.readFileSync(families, 'utf8'), 'widgets', 'widgetsManifest'));
}

const bin = (dir, name) => path.join(dir, 'node_modules/.bin', name);
const inDir = (dir, file, args) =>
  run(file, args, { cwd: dir, env: { ...process.env, REDOCLY_TELEMETRY: 'off' }, maxBuffer: 1 << 26 });

/** `make generate`, without make's install step (node_modules is shared). */
export const generate = (dir) => inDir(dir, 'make', ['-s', '-o', 'node_modules/.installed', 'generate']);

/** What `make lint` runs on the contract and the types: Redocly, tsc, the families' order. */
export const lint = (dir) =>
  Promise.all([
    inDir(dir, bin(dir, 'redocly'), ['lint', 'openapi/openapi.yaml', '--format', 'stylish']),
    inDir(dir, bin(dir, 'tsc'), ['--noEmit', '-p', 'tsconfig.json']),
    inDir(dir, 'node', ['scripts/families-sorted.mjs', 'src/families.ts']),
    inDir(dir, 'node', ['scripts/root-spec.mjs', '--check']),
  ]);

/** `make build`'s swc into the copy's dist/. */
export const build = (dir) =>
  inDir(dir, bin(dir, 'swc'), [
    'src',
    '-d',
    'dist',
    '--quiet',
    '--extensions',
    '.ts',
    '--ignore',
    '**/*.d.ts',
  ]);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { dir, before } = copyRepository();
  try {
    addWidgets(dir);
    await generate(dir);
    await lint(dir);
    process.stdout.write(`${changedFiles(dir, before).join('\n')}\n`);
  } finally {
    if (process.argv.includes('--keep')) process.stdout.write(`kept: ${dir}\n`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `make lint`'s check that src/families.ts lists the families by name, core first
 * (scripts/families-sorted.mjs), run as lint runs it: it passes on the real file and fails on an
 * unsorted copy, naming each misplaced entry and where it belongs.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const families = fs.readFileSync(path.join(root, 'src/families.ts'), 'utf8');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-families-sorted-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function check(source: string): { status: number | null; problems: string[] } {
  const file = path.join(dir, 'families.ts');
  fs.writeFileSync(file, source);
  const result = spawnSync(process.execPath, [path.join(root, 'scripts/families-sorted.mjs'), file], {
    encoding: 'utf8',
  });
  const problems = result.stderr
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(`${file}: `.length));
  return { status: result.status, problems };
}

/** `source` with `line` moved to just after `after` (both whole lines of it). */
function moveLine(source: string, line: string, after: string): string {
  expect(source).toContain(`${line}\n`);
  expect(source).toContain(`${after}\n`);
  return source.replace(`${line}\n`, '').replace(`${after}\n`, `${after}\n${line}\n`);
}

describe('families.ts is sorted', () => {
  it('passes on the real file', () => {
    expect(check(families)).toEqual({ status: 0, problems: [] });
  });

  it('fails on a list entry out of order, naming it and where it belongs', () => {
    const unsorted = moveLine(families, '  draftNotesManifest,', '  filesManifest,');
    expect(check(unsorted)).toEqual({
      status: 1,
      problems: [
        'the families list: draftNotesManifest (draft_notes) is out of order; it belongs after commitsManifest',
        'families go by name (their folder), core first',
      ],
    });
  });

  it('fails on a manifest import out of order', () => {
    const unsorted = moveLine(
      families,
      "import { pushRulesManifest } from './push_rules/manifest.js';",
      "import { usersManifest } from './users/manifest.js';",
    );
    expect(check(unsorted)).toEqual({
      status: 1,
      problems: [
        'the manifest imports: pushRulesManifest (push_rules) is out of order; it belongs after protectedTagsManifest',
        'families go by name (their folder), core first',
      ],
    });
  });

  it('fails when core is not first', () => {
    const unsorted = moveLine(families, '  coreManifest,', '  accessTokensManifest,');
    const { status, problems } = check(unsorted);
    expect(status).toBe(1);
    expect(problems).toContain('the families list: coreManifest (core) comes first');
  });
});

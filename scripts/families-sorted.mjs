// Checks that src/families.ts lists the families by name (their folders), core first, in its manifest
// imports and in its `families` list, so that adding a family is one line in a known place.
// Usage: node scripts/families-sorted.mjs [families.ts]; prints each misplaced entry and fails.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const MANIFEST_IMPORT = /^import \{ (\w+) \} from '\.\/(\w+)\/manifest\.js';$/gm;
const FAMILIES_LIST = /export const families = \[([^\]]*)\]/;
/** Not a family but what they all stand on: first in both places. */
const CORE = 'core';

/**
 * The entries not in order (those outside the longest run already in order), each with where it belongs.
 * `entries` are `{ label, name }`, `name` the family's folder.
 */
function misplaced(entries, where) {
  const problems = [];
  const rest = entries[0]?.name === CORE ? entries.slice(1) : entries;
  const misplacedCore = rest.find((entry) => entry.name === CORE);
  if (misplacedCore) problems.push(`${where}: ${misplacedCore.label} (core) comes first`);
  const families = rest.filter((entry) => entry.name !== CORE);
  const kept = longestOrderedRun(families);
  const sorted = [...families].sort((a, b) => compare(a.name, b.name));
  for (const [index, entry] of families.entries()) {
    if (kept.has(index)) continue;
    const at = sorted.indexOf(entry);
    const place = at === 0 ? `before ${sorted[1].label}` : `after ${sorted[at - 1].label}`;
    problems.push(`${where}: ${entry.label} (${entry.name}) is out of order; it belongs ${place}`);
  }
  return problems;
}

const compare = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** Indexes of the longest subsequence already sorted by name: what need not move. */
function longestOrderedRun(entries) {
  const length = entries.map(() => 1);
  const previous = entries.map(() => -1);
  for (let i = 0; i < entries.length; i++)
    for (let j = 0; j < i; j++)
      if (compare(entries[j].name, entries[i].name) < 0 && length[j] + 1 > length[i]) {
        length[i] = length[j] + 1;
        previous[i] = j;
      }
  const kept = new Set();
  for (let i = length.indexOf(Math.max(0, ...length)); i >= 0; i = previous[i]) kept.add(i);
  return kept;
}

/** The problems of a families.ts's source: none when its imports and list are sorted. */
export function familiesOrderProblems(source) {
  const folderOf = new Map();
  const imports = [];
  for (const [, label, name] of source.matchAll(MANIFEST_IMPORT)) {
    folderOf.set(label, name);
    imports.push({ label, name });
  }
  const list = FAMILIES_LIST.exec(source);
  if (!list) return ['no `export const families = [...]` found'];
  const entries = list[1]
    .split('\n')
    .map((line) =>
      line
        .replace(/\/\/.*$/, '')
        .trim()
        .replace(/,$/, ''),
    )
    .filter(Boolean)
    .map((label) => ({ label, name: folderOf.get(label) ?? label }));
  return [...misplaced(imports, 'the manifest imports'), ...misplaced(entries, 'the families list')];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2] ?? 'src/families.ts';
  const problems = familiesOrderProblems(fs.readFileSync(file, 'utf8'));
  for (const problem of problems) console.error(`${file}: ${problem}`);
  if (problems.length > 0) {
    console.error(`${file}: families go by name (their folder), core first`);
    process.exit(1);
  }
}

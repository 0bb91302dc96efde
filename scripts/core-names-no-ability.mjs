// Core keeps the shared model of abilities; the abilities themselves belong to the families that declare
// them. Fails when a src/core/ file names a family's ability as a string. Custom-role permission flags
// (MEMBER_ROLE_PERMISSIONS and a caller's `memberRolePermissions`) are GitLab's flag names, some of which
// are also ability names, and are not abilities. Usage: node scripts/core-names-no-ability.mjs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { readAbilityDeclarations } from './redocly-declarations.js';

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), '../src');
const CORE = path.join(SRC, 'core');
const FLAG_LISTS = new Set(['MEMBER_ROLE_PERMISSIONS', 'memberRolePermissions']);

const familyAbilities = new Set(
  readAbilityDeclarations(SRC)
    .filter(({ file }) => !file.startsWith(`core${path.sep}`))
    .map(({ name }) => name),
);

/** Inside the initializer of a custom-role flag list? */
function inFlagList(node) {
  for (let parent = node.parent; parent; parent = parent.parent)
    if (
      (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) &&
      FLAG_LISTS.has(parent.name.getText())
    )
      return true;
  return false;
}

const found = [];
for (const entry of fs.readdirSync(CORE, { recursive: true })) {
  const file = path.join(CORE, String(entry));
  if (!file.endsWith('.ts')) continue;
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (
      (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) &&
      familyAbilities.has(node.text) &&
      !inFlagList(node)
    ) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
      found.push(`${path.relative(process.cwd(), file)}:${line + 1}: names the ability ${node.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
if (found.length > 0) {
  console.error(
    `src/core/ names abilities that families declare; move the code to its family:\n${found.join('\n')}`,
  );
  process.exit(1);
}

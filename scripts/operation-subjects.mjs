// Writes, from the bundled contract, each operation's `x-subject` and the non-user security schemes its
// `security` names: the handler types give an operation the resolved subject and the principal it
// declares. Usage: node scripts/operation-subjects.mjs <openapi.json> <out.d.ts>
import fs from 'node:fs';

// The user token (src/core/credentials.ts USER_SCHEMES): its caller is a user, not a principal.
const USER_SCHEMES = new Set(['PrivateToken']);

const [input, output] = process.argv.slice(2);
const spec = JSON.parse(fs.readFileSync(input, 'utf8'));
const subjects = [];
const credentials = [];
for (const item of Object.values(spec.paths)) {
  for (const operation of Object.values(item)) {
    if (!operation || typeof operation !== 'object' || !operation.operationId) continue;
    subjects.push(`  ${operation.operationId}: '${operation['x-subject'] ?? 'none'}';`);
    const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
    const own = schemes.filter((name) => !USER_SCHEMES.has(name));
    if (own.length > 0)
      credentials.push(`  ${operation.operationId}: ${own.map((s) => `'${s}'`).join(' | ')};`);
  }
}
subjects.sort();
credentials.sort();
fs.writeFileSync(
  output,
  `// Generated from the contract by scripts/operation-subjects.mjs: do not edit.\n` +
    `export interface OperationSubjects {\n${subjects.join('\n')}\n}\n\n` +
    `/** Operations whose \`security\` names non-user schemes: the principal they are called with. */\n` +
    `export interface OperationCredentials {\n${credentials.join('\n')}\n}\n`,
);

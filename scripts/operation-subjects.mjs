// Writes, from the bundled contract, each operation's `x-subject`: the handler types give an operation
// the resolved subject it declares. Usage: node scripts/operation-subjects.mjs <openapi.json> <out.d.ts>
import fs from 'node:fs';

const [input, output] = process.argv.slice(2);
const spec = JSON.parse(fs.readFileSync(input, 'utf8'));
const lines = [];
for (const item of Object.values(spec.paths)) {
  for (const operation of Object.values(item)) {
    if (operation && typeof operation === 'object' && operation.operationId)
      lines.push(`  ${operation.operationId}: '${operation['x-subject'] ?? 'none'}';`);
  }
}
lines.sort();
fs.writeFileSync(
  output,
  `// Generated from the contract by scripts/operation-subjects.mjs: do not edit.\n` +
    `export interface OperationSubjects {\n${lines.join('\n')}\n}\n`,
);

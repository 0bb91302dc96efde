/**
 * Redocly plugin: every operation declares its permission (`x-subject`, `x-ability`, optional
 * `x-tier`) and GitLab's shared error responses (400 and 413 too: any operation refuses malformed or
 * oversized input), and every integer declares both its bounds. The ability names are read from the
 * families' `defineAbilities` declarations themselves, so the lint and the server cannot disagree on
 * them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), '../src');
const KINDS = ['project', 'group', 'instance'];
const SUBJECTS = ['project', 'group', 'instance', 'none'];
const TIERS = ['premium', 'ultimate'];
const SHARED_RESPONSES = ['400', '401', '403', '404', '413', '429', '500', '503'];

/**
 * Every ability the families declare: each `defineAbilities({ project: {...}, group: {...},
 * instance: {...} })` call under src/, read from the source, as `{ file, kind, name }`.
 */
export function readAbilityDeclarations(root = SRC, kinds = KINDS) {
  const declarations = [];
  for (const entry of fs.readdirSync(root, { recursive: true })) {
    const file = path.join(root, String(entry));
    if (!file.endsWith('.ts') || file.endsWith('.d.ts')) continue;
    const text = fs.readFileSync(file, 'utf8');
    if (!text.includes('defineAbilities(')) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node) => {
      if (
        ts.isCallExpression(node) &&
        node.expression.getText(source) === 'defineAbilities' &&
        node.arguments[0] &&
        ts.isObjectLiteralExpression(node.arguments[0])
      ) {
        for (const table of node.arguments[0].properties) {
          const kind = table.name?.getText(source);
          if (!kinds.includes(kind) || !ts.isPropertyAssignment(table)) continue;
          if (!ts.isObjectLiteralExpression(table.initializer)) continue;
          for (const p of table.initializer.properties)
            if (p.name)
              declarations.push({ file: path.relative(root, file), kind, name: p.name.getText(source) });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return declarations;
}

/** The ability names of each subject kind, sorted: what `x-ability` may name. */
export function readAbilityNames(root = SRC) {
  const names = { project: [], group: [], instance: [], none: [] };
  for (const { kind, name } of readAbilityDeclarations(root)) names[kind].push(name);
  for (const kind of KINDS) names[kind].sort();
  return names;
}

/** The finer rules' names (`x-forge-rule`), sorted: the `rules` the families' abilities declare. */
export function readRuleNames(root = SRC) {
  return readAbilityDeclarations(root, ['rules'])
    .map(({ name }) => name)
    .sort();
}

/** An `x-forge-rule` names a declared rule, and the description says it, so the docs show it. */
function checkRule(operation, rules, { report, location }) {
  const rule = operation['x-forge-rule'];
  if (rule === undefined) return;
  if (!rules.includes(rule))
    report({
      message: `x-forge-rule ${rule} is not a rule any family declares (${rules.join(', ')}).`,
      location: location.child(['x-forge-rule']),
    });
  else if (!String(operation.description ?? '').includes(`Rule \`${rule}\``))
    report({
      message: `The description names the operation's rule: Rule \`${rule}\`: …`,
      location: location.child(['description']),
    });
}

/** An `x-tier` (on an operation, a property or a parameter) names a known tier. */
function checkTier(node, { report, location }) {
  const tier = node['x-tier'];
  if (tier !== undefined && !TIERS.includes(tier))
    report({ message: `x-tier must be one of ${TIERS.join(', ')}.`, location: location.child(['x-tier']) });
}

function OperationDeclarations() {
  const abilities = readAbilityNames();
  const rules = readRuleNames();
  return {
    Schema: checkTier,
    Parameter: checkTier,
    Operation(operation, { report, location }) {
      const subject = operation['x-subject'];
      const ability = operation['x-ability'];
      if (!SUBJECTS.includes(subject)) {
        report({
          message: `x-subject ${subject === undefined ? 'is required' : 'is unknown'}: one of ${SUBJECTS.join(', ')}.`,
          location: location.child(['x-subject']).key(),
        });
      } else if (subject === 'none') {
        if (ability !== undefined)
          report({ message: 'x-subject none takes no x-ability.', location: location.child(['x-ability']) });
      } else if (ability === undefined) {
        report({ message: `x-ability is required (x-subject: ${subject}).`, location: location.key() });
      } else if (!abilities[subject].includes(ability)) {
        report({
          message: `x-ability ${ability} is not a ${subject} ability the families declare (${abilities[subject].join(', ')}).`,
          location: location.child(['x-ability']),
        });
      }
      const refusal = operation['x-ability-refusal'];
      if (
        refusal !== undefined &&
        (!['unauthorized', 'not_found', 'bad_request'].includes(refusal) || ability === undefined)
      )
        report({
          message:
            "x-ability-refusal is `unauthorized` (401 instead of 403), `not_found` (a bare 404) or `bad_request` (the service's 400), beside an x-ability.",
          location: location.child(['x-ability-refusal']),
        });
      checkRule(operation, rules, { report, location });
      checkTier(operation, { report, location });
      const declared = Object.keys(operation.responses ?? {});
      const missing = SHARED_RESPONSES.filter((code) => !declared.includes(code));
      if (missing.length)
        report({
          message: `Every operation declares the shared responses ${SHARED_RESPONSES.join(', ')}; missing ${missing.join(', ')}.`,
          location: location.child(['responses']).key(),
        });
    },
  };
}

/** PostgreSQL's `integer`, which every id and count column is: the widest integer a request may carry. */
const INT4_MIN = -2147483648;
const INT4_MAX = 2147483647;

/** An integer a `bigint` column keeps (`format: int64`, e.g. a size in bytes): JSON's exact integers. */
const INT8_SAFE = Number.MAX_SAFE_INTEGER;

const isInteger = (schema) => (Array.isArray(schema.type) ? schema.type : [schema.type]).includes('integer');
const requestRange = (schema) => (schema.format === 'int64' ? [-INT8_SAFE, INT8_SAFE] : [INT4_MIN, INT4_MAX]);

/**
 * Every integer of the contract (parameters, bodies, responses, headers) declares both bounds, so clients
 * know the range and validation refuses what lies beyond; an integer a request carries stays within
 * PostgreSQL's `integer`, so an out-of-range value is a 400, never a database error. One declared
 * `format: int64` is kept in a `bigint` column and may reach ±(2^53 - 1).
 */
function IntegerBounds() {
  /** Walks a request schema through its references, combiners, items and properties. */
  const walk = (node, location, where, ctx, seen) => {
    let schema = node;
    if (node && node.$ref) {
      const resolved = ctx.resolve(node, location.source.absoluteRef);
      schema = resolved.node;
      location = resolved.location;
    }
    if (!schema || typeof schema !== 'object' || !location || seen.has(schema)) return;
    seen.add(schema);
    const [min, max] = requestRange(schema);
    if (isInteger(schema) && (schema.minimum < min || schema.maximum > max))
      ctx.report({
        message:
          schema.format === 'int64'
            ? `${where}: an int64 integer in a request stays within ${min}..${max} (JSON's exact integers).`
            : `${where}: an integer in a request stays within ${min}..${max} (PostgreSQL's integer).`,
        location: location.child(['type']),
      });
    for (const key of ['anyOf', 'oneOf', 'allOf'])
      (schema[key] ?? []).forEach((member, i) => walk(member, location.child([key, i]), where, ctx, seen));
    if (schema.items) walk(schema.items, location.child(['items']), `${where}[]`, ctx, seen);
    for (const [name, child] of Object.entries(schema.properties ?? {}))
      walk(child, location.child(['properties', name]), `${where}.${name}`, ctx, seen);
    if (typeof schema.additionalProperties === 'object')
      walk(schema.additionalProperties, location.child(['additionalProperties']), `${where}.*`, ctx, seen);
  };
  return {
    Schema(schema, { report, location }) {
      if (!isInteger(schema)) return;
      const missing = ['minimum', 'maximum'].filter((bound) => typeof schema[bound] !== 'number');
      if (missing.length)
        report({
          message: `An integer declares its minimum and maximum; missing ${missing.join(' and ')}.`,
          location: location.child(['type']),
        });
      else if (schema.minimum > schema.maximum)
        report({ message: 'minimum is above maximum.', location: location.child(['minimum']) });
    },
    Parameter(parameter, ctx) {
      if (parameter.schema)
        walk(
          parameter.schema,
          ctx.location.child(['schema']),
          `${parameter.in} parameter ${parameter.name}`,
          ctx,
          new Set(),
        );
    },
    RequestBody(body, ctx) {
      for (const [type, media] of Object.entries(body.content ?? {}))
        if (media.schema)
          walk(media.schema, ctx.location.child(['content', type, 'schema']), `${type} body`, ctx, new Set());
    },
  };
}

export default function forgePlugin() {
  return {
    id: 'forge',
    rules: { oas3: { 'operation-declarations': OperationDeclarations, 'integer-bounds': IntegerBounds } },
  };
}

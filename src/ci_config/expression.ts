/**
 * The `rules:if` / `only:variables` expression language: a tokenizer and a recursive-descent parser
 * with GitLab's grammar (`||` binds looser than `&&`, comparisons bind tighter), evaluated against the
 * pipeline's variables. Regexes are RE2 (re2js), as GitLab's untrusted regexps are.
 */
import { RE2JS } from 're2js';

export const INVALID_EXPRESSION = 'invalid expression syntax';

export class ExpressionError extends Error {}

type Token =
  | { kind: 'variable'; name: string }
  | { kind: 'string'; value: string }
  | { kind: 'null' }
  | { kind: 'pattern'; source: string; flags: string }
  | { kind: 'op'; op: '==' | '!=' | '=~' | '!~' | '&&' | '||' }
  | { kind: 'open' }
  | { kind: 'close' };

export type Expr =
  | { type: 'variable'; name: string }
  | { type: 'string'; value: string }
  | { type: 'null' }
  | { type: 'pattern'; source: string; flags: string }
  | { type: 'compare'; op: '==' | '!=' | '=~' | '!~'; left: Expr; right: Expr }
  | { type: 'and' | 'or'; left: Expr; right: Expr };

const MAX_TOKENS = 200;

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (tokens.length > MAX_TOKENS) throw new ExpressionError(INVALID_EXPRESSION);
    const two = text.slice(i, i + 2);
    if (two === '==' || two === '!=' || two === '=~' || two === '!~' || two === '&&' || two === '||') {
      tokens.push({ kind: 'op', op: two });
      i += 2;
    } else if (c === '(' || c === ')') {
      tokens.push({ kind: c === '(' ? 'open' : 'close' });
      i++;
    } else if (c === '$') {
      const m = /^\$(\w+)/.exec(text.slice(i));
      if (!m) throw new ExpressionError(INVALID_EXPRESSION);
      tokens.push({ kind: 'variable', name: m[1] as string });
      i += m[0].length;
    } else if (c === '"' || c === "'") {
      const end = text.indexOf(c, i + 1);
      if (end < 0) throw new ExpressionError(INVALID_EXPRESSION);
      tokens.push({ kind: 'string', value: text.slice(i + 1, end) });
      i = end + 1;
    } else if (c === '/') {
      i = readPattern(text, i, tokens);
    } else if (text.startsWith('null', i) && !/[a-zA-Z0-9_]/.test(text[i + 4] ?? '')) {
      tokens.push({ kind: 'null' });
      i += 4;
    } else {
      throw new ExpressionError(INVALID_EXPRESSION);
    }
  }
  return tokens;
}

/** `/re/flags`: the body runs to the first unescaped slash. */
function readPattern(text: string, start: number, tokens: Token[]): number {
  let j = start + 1;
  while (j < text.length && text[j] !== '/') j += text[j] === '\\' ? 2 : 1;
  if (j >= text.length || j === start + 1) throw new ExpressionError(INVALID_EXPRESSION);
  const source = text.slice(start + 1, j);
  const m = /^[ismU]*/.exec(text.slice(j + 1)) as RegExpExecArray;
  tokens.push({ kind: 'pattern', source, flags: m[0] });
  return j + 1 + m[0].length;
}

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): Expr {
    if (this.tokens.length === 0) throw new ExpressionError(INVALID_EXPRESSION);
    const expr = this.or();
    if (this.pos !== this.tokens.length) throw new ExpressionError(INVALID_EXPRESSION);
    return expr;
  }

  private peekOp(op: string): boolean {
    const t = this.tokens[this.pos];
    return t?.kind === 'op' && t.op === op;
  }

  private or(): Expr {
    let left = this.and();
    while (this.peekOp('||')) {
      this.pos++;
      left = { type: 'or', left, right: this.and() };
    }
    return left;
  }

  private and(): Expr {
    let left = this.comparison();
    while (this.peekOp('&&')) {
      this.pos++;
      left = { type: 'and', left, right: this.comparison() };
    }
    return left;
  }

  private comparison(): Expr {
    const left = this.primary();
    const t = this.tokens[this.pos];
    if (t?.kind === 'op' && (t.op === '==' || t.op === '!=' || t.op === '=~' || t.op === '!~')) {
      this.pos++;
      const right = this.primary();
      return { type: 'compare', op: t.op, left, right };
    }
    return left;
  }

  private primary(): Expr {
    const t = this.tokens[this.pos++];
    if (!t) throw new ExpressionError(INVALID_EXPRESSION);
    switch (t.kind) {
      case 'open': {
        const inner = this.or();
        if (this.tokens[this.pos]?.kind !== 'close') throw new ExpressionError(INVALID_EXPRESSION);
        this.pos++;
        return inner;
      }
      case 'variable':
        return { type: 'variable', name: t.name };
      case 'string':
        return { type: 'string', value: t.value };
      case 'null':
        return { type: 'null' };
      case 'pattern':
        compilePattern(t.source, t.flags);
        return { type: 'pattern', source: t.source, flags: t.flags };
      default:
        throw new ExpressionError(INVALID_EXPRESSION);
    }
  }
}

const cache = new Map<string, Expr>();

/** Parses an expression, throwing ExpressionError('invalid expression syntax') when it is not one. */
export function parseExpression(text: string): Expr {
  const hit = cache.get(text);
  if (hit) return hit;
  const expr = new Parser(tokenize(text)).parse();
  if (cache.size > 5000) cache.clear();
  cache.set(text, expr);
  return expr;
}

export function isValidExpression(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  try {
    parseExpression(text);
    return true;
  } catch {
    return false;
  }
}

const patternCache = new Map<string, RE2JS>();

function compilePattern(source: string, flags: string): RE2JS {
  const key = `${flags}/${source}`;
  let re = patternCache.get(key);
  if (re) return re;
  let f = 0;
  for (const flag of flags) {
    if (flag === 'i') f |= RE2JS.CASE_INSENSITIVE;
    else if (flag === 'm')
      f |= RE2JS.DOTALL; // Ruby's /m lets `.` match a newline
    else if (flag === 's') f |= RE2JS.DOTALL;
    else if (flag !== 'U') throw new ExpressionError(INVALID_EXPRESSION);
  }
  try {
    re = RE2JS.compile(source, f);
  } catch {
    throw new ExpressionError(INVALID_EXPRESSION);
  }
  if (patternCache.size > 5000) patternCache.clear();
  patternCache.set(key, re);
  return re;
}

type Value = string | null | boolean | { pattern: RE2JS };

function value(expr: Expr, vars: Record<string, string>): Value {
  switch (expr.type) {
    case 'variable':
      return Object.prototype.hasOwnProperty.call(vars, expr.name) ? (vars[expr.name] ?? null) : null;
    case 'string':
      return expr.value;
    case 'null':
      return null;
    case 'pattern':
      return { pattern: compilePattern(expr.source, expr.flags) };
    case 'compare':
      return compare(expr, vars);
    case 'and': {
      const left = value(expr.left, vars);
      return rubyTruthy(left) ? value(expr.right, vars) : left;
    }
    case 'or': {
      const left = value(expr.left, vars);
      return rubyTruthy(left) ? left : value(expr.right, vars);
    }
  }
}

function rubyTruthy(v: Value): boolean {
  return v !== null && v !== false;
}

/** The right side of `=~` may be a variable that holds `/re/flags`. */
function asPattern(v: Value): RE2JS | null {
  if (v && typeof v === 'object') return v.pattern;
  if (typeof v === 'string') {
    const m = /^\/(.+)\/([a-zA-Z]*)$/s.exec(v);
    if (!m) return null;
    try {
      return compilePattern(m[1] as string, m[2] as string);
    } catch {
      return null;
    }
  }
  return null;
}

function compare(expr: Extract<Expr, { type: 'compare' }>, vars: Record<string, string>): boolean {
  const left = value(expr.left, vars);
  const right = value(expr.right, vars);
  if (expr.op === '==' || expr.op === '!=') {
    const same = plain(left) === plain(right);
    return expr.op === '==' ? same : !same;
  }
  // GitLab: the left side is read as a string (undefined is ""); a right side that is no pattern
  // stays a string and "matches" when the left side occurs in it (Ruby's String#scan).
  const text = typeof left === 'string' ? left : left === null || left === false ? '' : String(plain(left));
  if (right === null || right === false) return expr.op !== '=~';
  const re = asPattern(right);
  let matched: boolean;
  if (re) matched = re.matcher(text).find();
  else matched = typeof right === 'string' && right.includes(text);
  return expr.op === '=~' ? matched : !matched;
}

function plain(v: Value): string | null | boolean {
  return v && typeof v === 'object' ? `/${v.pattern.pattern()}/` : v;
}

/** Whether the expression holds for these variables (a lone `$VAR` holds when it is not empty). */
export function evaluateExpression(text: string, vars: Record<string, string>): boolean {
  const result = value(parseExpression(text), vars);
  return result !== null && result !== false && result !== '';
}

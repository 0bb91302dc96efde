/**
 * The `search` and `regex` filters of the branch list, and GitLab's rules on new branch names. Neither
 * filter runs a backtracking regular expression in the server over user input.
 */
import { spawn } from 'node:child_process';
import { badParameter, ApiError } from '../core/errors.js';
import { git } from '../git/git.js';

type Token = { kind: 'char'; char: string } | { kind: 'any' | 'start' | 'end' };

/**
 * GitLab's `search`: a case-insensitive substring, where the first `^` anchors at the start, the first
 * `$` at the end and every `*` matches any run of characters. Later `^` and `$` are plain characters.
 */
export function searchMatcher(search: string): { test(name: string): boolean; operators: boolean } {
  const term = search.toLowerCase();
  const operators = /[\^$*]/.test(term);
  if (!operators) return { operators, test: (name) => name.toLowerCase().includes(term) };
  const tokens: Token[] = [];
  let caret = false;
  let dollar = false;
  for (const char of term) {
    if (char === '*') tokens.push({ kind: 'any' });
    else if (char === '^' && !caret) {
      caret = true;
      tokens.push({ kind: 'start' });
    } else if (char === '$' && !dollar) {
      dollar = true;
      tokens.push({ kind: 'end' });
    } else tokens.push({ kind: 'char', char });
  }
  return { operators, test: (name) => simulate(tokens, [...name.toLowerCase()]) };
}

/** Runs the pattern as an automaton over the name (unanchored search): linear in both lengths. */
function simulate(tokens: Token[], chars: string[]): boolean {
  const accept = tokens.length;
  let states = new Set<number>();
  const close = (set: Set<number>, at: number) => {
    const stack = [...set];
    while (stack.length > 0) {
      const state = stack.pop()!;
      const token = tokens[state];
      if (!token) continue;
      const passes =
        token.kind === 'any' ||
        (token.kind === 'start' && at === 0) ||
        (token.kind === 'end' && at === chars.length);
      if (passes && !set.has(state + 1)) {
        set.add(state + 1);
        stack.push(state + 1);
      }
    }
    return set;
  };
  for (let at = 0; at <= chars.length; at++) {
    states.add(0);
    states = close(states, at);
    if (states.has(accept)) return true;
    if (at === chars.length) break;
    const next = new Set<number>();
    for (const state of states) {
      const token = tokens[state];
      if (token?.kind === 'any') next.add(state);
      else if (token?.kind === 'char' && token.char === chars[at]) next.add(state + 1);
    }
    states = next;
  }
  return false;
}

/** What RE2 does not have and PCRE would run: backreferences, lookaround, atomic groups. */
const NOT_RE2 = /\\[1-9gk]|\(\?(=|!|<=|<!|>)/;

/**
 * The names that match an RE2-style expression, in their order. grep's PCRE engine runs it in a child
 * process with a backtracking limit, so a pathological expression fails instead of hanging the server.
 */
export async function filterByRegex(names: string[], regex: string): Promise<string[]> {
  if (NOT_RE2.test(regex) || regex.includes('\n')) throw regexInvalid();
  if (names.length === 0) return names;
  const matched = await new Promise<{ code: number; stdout: string }>((resolve, reject) => {
    const child = spawn('grep', ['-a', '-P', '-e', regex], {
      env: { PATH: process.env.PATH, LC_ALL: 'C.UTF-8' },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: Buffer.concat(out).toString('utf8') }));
    child.stdin.on('error', () => {
      // grep stops reading when the expression does not compile; its exit code says so.
    });
    child.stdin.end(`${names.join('\n')}\n`);
  });
  if (matched.code === 1) return [];
  if (matched.code !== 0) throw regexInvalid();
  const keep = new Set(matched.stdout.split('\n'));
  return names.filter((name) => keep.has(name));
}

const regexInvalid = () => new ApiError(400, { message: 'Regex is invalid' });

const RESERVED_PREFIXES = ['-', 'refs/heads/', 'refs/remotes/', 'refs/tags/'];

/** GitLab's check of a new branch name: git's rules for `refs/heads/<name>`, and no reserved forms. */
export async function isValidBranchName(gitDir: string, name: string): Promise<boolean> {
  if (name === '' || name === 'HEAD' || RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix)))
    return false;
  const result = await git(['check-ref-format', `refs/heads/${name}`], { gitDir, okCodes: [1] });
  return result.code === 0;
}

/** Grape's `allow_blank: false`: `{"error": "branch is empty, ref is empty"}`. */
export function requireNonEmpty(values: Record<string, string>): void {
  const empty = Object.entries(values)
    .filter(([, value]) => value.trim() === '')
    .map(([key]) => `${key} is empty`);
  if (empty.length > 0) throw badParameter(empty.join(', '));
}

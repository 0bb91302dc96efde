/**
 * The `search` and `regex` filters of the branch list, and GitLab's rules on new branch names. Neither
 * filter runs a backtracking regular expression over user input.
 */
import { RE2JS } from 're2js';
import { badParameter, ApiError } from '../core/errors.js';

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

/**
 * The names that match an expression, in their order, with RE2's semantics as GitLab's
 * UntrustedRegexp has them: linear time, no backreferences or lookaround (those are invalid).
 */
export function filterByRegex(names: string[], regex: string): string[] {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(regex);
  } catch {
    throw regexInvalid();
  }
  return names.filter((name) => compiled.matcher(name).find());
}

const regexInvalid = () => new ApiError(400, { message: 'Regex is invalid' });

/** Grape's `allow_blank: false`: `{"error": "branch is empty, ref is empty"}`. */
export function requireNonEmpty(values: Record<string, string>): void {
  const empty = Object.entries(values)
    .filter(([, value]) => value.trim() === '')
    .map(([key]) => `${key} is empty`);
  if (empty.length > 0) throw badParameter(empty.join(', '));
}

/**
 * GitLab's CODEOWNERS file: entries `pattern owner…`, sections `[Name]` (optional `^[Name]`, approvals
 * `[Name][N]`, default owners after the header), comments and escaped spaces. Pure, for unit tests.
 */

/** Where GitLab looks, in its order of precedence: the first file found is used. */
export const CODEOWNERS_PATHS = ['CODEOWNERS', 'docs/CODEOWNERS', '.gitlab/CODEOWNERS'] as const;

export const DEFAULT_SECTION = 'codeowners';

export interface CodeOwnersEntry {
  pattern: string;
  owners: string[];
  section: string;
  optional: boolean;
  approvalsRequired: number;
  matcher: RegExp;
}

export interface CodeOwnersSection {
  name: string;
  optional: boolean;
  approvalsRequired: number;
  defaultOwners: string[];
}

export interface CodeOwnersFile {
  /** Sections in file order, the unnamed default section first. */
  sections: CodeOwnersSection[];
  entries: CodeOwnersEntry[];
}

const SECTION = /^(\^)?\[([^\]]+)\](?:\[(\d+)\])?\s*(.*)$/;

/** Splits on unescaped whitespace and drops a trailing comment; `\ ` and `\#` stay literal. */
function tokens(line: string): string[] {
  const out: string[] = [];
  let current = '';
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    if (char === '\\' && i + 1 < line.length) {
      current += line[++i];
      continue;
    }
    if (char === '#') break;
    if (/\s/.test(char)) {
      if (current) out.push(current);
      current = '';
      continue;
    }
    current += char;
  }
  if (current) out.push(current);
  return out;
}

const isOwner = (token: string) => token.startsWith('@') || /^[^@\s]+@[^@\s]+$/.test(token);

export function parseCodeOwners(text: string): CodeOwnersFile {
  const sections = new Map<string, CodeOwnersSection>();
  const order: CodeOwnersSection[] = [];
  const sectionOf = (name: string, optional: boolean, approvals: number, defaults: string[]) => {
    // Section names are case-insensitive: a repeated section continues the first one.
    const key = name.toLowerCase();
    let section = sections.get(key);
    if (!section) {
      section = { name, optional, approvalsRequired: approvals, defaultOwners: defaults };
      sections.set(key, section);
      order.push(section);
    }
    return section;
  };
  let current = sectionOf(DEFAULT_SECTION, false, 1, []);
  const entries: CodeOwnersEntry[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const header = SECTION.exec(line);
    if (header) {
      const approvals = header[3] ? Math.max(Number(header[3]), 1) : 1;
      const defaults = tokens(header[4]).filter(isOwner);
      current = sectionOf(header[2].trim(), header[1] === '^', approvals, defaults);
      continue;
    }
    const [pattern, ...rest] = tokens(line);
    if (!pattern) continue;
    const owners = rest.filter(isOwner);
    entries.push({
      pattern,
      owners: owners.length > 0 ? owners : current.defaultOwners,
      section: current.name,
      optional: current.optional,
      approvalsRequired: current.approvalsRequired,
      matcher: patternMatcher(pattern),
    });
  }
  return { sections: order, entries };
}

/** GitLab's normalization, then `File.fnmatch` with FNM_PATHNAME and FNM_DOTMATCH on `/path`. */
export function patternMatcher(pattern: string): RegExp {
  let glob = pattern;
  if (glob === '*') glob = '/**/*';
  else {
    if (!glob.startsWith('/')) glob = `/**/${glob}`;
    if (glob.endsWith('/')) glob = `${glob}**/*`;
  }
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i];
    if (char === '*' && glob[i + 1] === '*' && glob[i + 2] === '/') {
      source += '(?:[^/]*/)*';
      i += 2;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else if (char === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end === -1) source += '\\[';
      else {
        const body = glob
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\');
        source += `[${body}]`;
        i = end;
      }
    } else source += char.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** For each section, the last entry whose pattern matches the path (GitLab's precedence). */
export function entriesFor(file: CodeOwnersFile, path: string): CodeOwnersEntry[] {
  const target = `/${path}`;
  const bySection = new Map<string, CodeOwnersEntry>();
  for (const entry of file.entries)
    if (entry.matcher.test(target)) bySection.set(entry.section.toLowerCase(), entry);
  return [...bySection.values()];
}

/** Owner references: `@name` is a username or a group path, anything else an e-mail address. */
export function splitOwners(owners: string[]): { names: string[]; emails: string[] } {
  const names: string[] = [];
  const emails: string[] = [];
  for (const owner of owners) {
    if (owner.startsWith('@')) names.push(owner.slice(1));
    else emails.push(owner.toLowerCase());
  }
  return { names, emails };
}

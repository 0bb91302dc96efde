/**
 * What the shell executor writes to the trace and to bash: GitLab Runner's sections and colours, and
 * the script of a step (each command echoed in green before it runs, `set -eo pipefail`).
 */
export const ANSI = {
  boldCyan: '\x1b[36;1m',
  boldGreen: '\x1b[32;1m',
  boldRed: '\x1b[31;1m',
  boldYellow: '\x1b[0;33m',
  reset: '\x1b[0;m',
  clear: '\x1b[0K',
};

const now = () => Math.floor(Date.now() / 1000);

export function sectionStart(name: string, title: string): string {
  return `section_start:${now()}:${name}\r${ANSI.clear}${ANSI.clear}${ANSI.boldCyan}${title}${ANSI.reset}\n`;
}

export function sectionEnd(name: string): string {
  return `section_end:${now()}:${name}\r${ANSI.clear}\n`;
}

export const notice = (text: string) => `${ANSI.boldGreen}${text}${ANSI.reset}\n`;
export const warning = (text: string) => `${ANSI.boldYellow}WARNING: ${text}${ANSI.reset}\n`;
export const error = (text: string) => `${ANSI.boldRed}ERROR: ${text}${ANSI.reset}\n`;

/** A string as bash's $'…' quoting, safe for any bytes of text. */
export function bashQuote(text: string): string {
  const escaped = text.replace(/[\\'\x00-\x1f\x7f]/g, (c) =>
    c === '\\' ? '\\\\' : c === "'" ? "\\'" : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
  return `$'${escaped}'`;
}

/** The bash script of one or more steps' commands. */
export function stepScript(commands: string[]): string {
  const lines = ['set -eo pipefail', 'set +o noclobber', ''];
  for (const command of commands) {
    const first = command.split('\n')[0];
    const shown = command.includes('\n') ? `${first} # collapsed multi-line command` : first;
    lines.push(`printf '%s\\n' ${bashQuote(`${ANSI.boldGreen}$ ${shown}${ANSI.reset}`)}`, command, '');
  }
  return `${lines.join('\n')}\n`;
}

/** A duration as GitLab Runner prints one (Go's time.Duration), e.g. 1h0m0s, 5m30s, 20s. */
export function goDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h) return `${h}h${m}m${s}s`;
  if (m) return `${m}m${s}s`;
  return `${s}s`;
}

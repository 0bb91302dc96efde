/**
 * Plain text in and out of HTML, for names and titles GitLab stores sanitized and descriptions it
 * renders: no tag ever reaches a client as markup.
 */
const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** Elements whose content is dropped with them, not kept as text. */
const DROPPED =
  /<(script|style|iframe|noscript|svg|math|template|xmp|noembed|noframes)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
const TAG = /<\/?[a-zA-Z!?][^>]*>/g;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/**
 * Text with its HTML tags removed and entities decoded, as GitLab stores label names and milestone
 * titles (`Sanitize.clean` then unescaped). A `<` that opens no tag stays text.
 */
export function stripTags(text: string): string {
  return text
    .replace(DROPPED, '')
    .replace(TAG, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, body: string) => {
      if (body[0] !== '#') return ENTITIES[body.toLowerCase()] ?? entity;
      const code =
        body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff)
        ? String.fromCodePoint(code)
        : entity;
    });
}

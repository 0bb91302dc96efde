/**
 * How an upload is served: its Content-Type by extension, inline only for images, video and audio
 * (what Markdown embeds), every other type as an attachment, so no uploaded HTML or SVG runs in the
 * server's origin.
 */
const INLINE: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  bmp: 'image/bmp',
  tiff: 'image/tiff',
  ico: 'image/vnd.microsoft.icon',
  webp: 'image/webp',
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
  ogv: 'video/ogg',
  mp3: 'audio/mpeg',
  oga: 'audio/ogg',
  ogg: 'audio/ogg',
  wav: 'audio/wav',
  flac: 'audio/flac',
};

const ATTACHED: Record<string, string> = {
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  txt: 'text/plain; charset=utf-8',
  md: 'text/plain; charset=utf-8',
  log: 'text/plain; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  json: 'application/json',
  zip: 'application/zip',
  gz: 'application/gzip',
  tar: 'application/x-tar',
};

const extension = (filename: string) => {
  const dot = filename.lastIndexOf('.');
  return dot >= 0 ? filename.slice(dot + 1).toLowerCase() : '';
};

export const isInlineMedia = (filename: string) => extension(filename) in INLINE;

/** The headers an upload is answered with. */
export function uploadHeaders(
  filename: string,
  size?: number,
): Record<string, string> & { 'Content-Type': string } {
  const ext = extension(filename);
  const inline = INLINE[ext];
  const encoded = encodeURIComponent(filename);
  const headers: Record<string, string> & { 'Content-Type': string } = {
    'Content-Type': inline ?? ATTACHED[ext] ?? 'application/octet-stream',
    'Content-Disposition': `${inline ? 'inline' : 'attachment'}; filename="${filename.replace(/[^\x20-\x7e]|"/g, '_')}"; filename*=UTF-8''${encoded}`,
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'private, max-age=0',
  };
  if (size !== undefined) headers['Content-Length'] = String(size);
  return headers;
}

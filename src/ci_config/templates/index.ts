/**
 * The `.gitlab-ci.yml` templates the server ships (the templates API and `include: template`).
 * They are TypeScript string modules rather than .yml files: `make build` compiles src/ with swc,
 * which copies no other files into dist, and a module keeps this folder free of filesystem reads.
 */
import docker from './docker.js';
import nodejs from './nodejs.js';
import pages from './pages.js';
import python from './python.js';
import sast from './sast.js';

const TEMPLATES: Record<string, { name: string; content: string }> = {
  Docker: { name: 'Docker', content: docker },
  Nodejs: { name: 'Nodejs', content: nodejs },
  'Pages-HTML': { name: 'Pages HTML', content: pages },
  Python: { name: 'Python', content: python },
  SAST: { name: 'SAST', content: sast },
};

/** Every template, sorted by key, as the templates API lists them. */
export function listTemplates(): Array<{ key: string; name: string }> {
  return Object.keys(TEMPLATES)
    .sort((a, b) => a.localeCompare(b))
    .map((key) => ({ key, name: (TEMPLATES[key] as { name: string }).name }));
}

/** A template's YAML by key (`Nodejs`), or null. */
export function readTemplate(key: string): string | null {
  return Object.prototype.hasOwnProperty.call(TEMPLATES, key)
    ? (TEMPLATES[key] as { content: string }).content
    : null;
}

/** What `include: template: Nodejs.gitlab-ci.yml` reads: the default `IncludeSources.template`. */
export async function templateSource(fileName: string): Promise<string | null> {
  const m = /^(.+)\.gitlab-ci\.yml$/.exec(fileName);
  return m ? readTemplate(m[1] as string) : null;
}

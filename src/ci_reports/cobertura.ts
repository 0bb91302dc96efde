/**
 * Cobertura coverage reports (`coverage_report` with `coverage_format: cobertura`, GitLab Runner's
 * `cobertura` type): the line hits of each file, as GitLab's `Gitlab::Ci::Parsers::Coverage::Cobertura`
 * gathers them from each `<class filename>`'s `<lines><line number hits>`, and the report's own
 * `line-rate` (or covered / valid lines) as the job's line coverage in percent. Read as a stream,
 * one `<class>` at a time.
 */
import { XMLParser } from 'fast-xml-parser';
import { xmlChunks } from './xml-chunks.js';

export interface CoberturaResult {
  /** Line coverage in percent (0–100, two decimals), or null when the report gives none. */
  lineRate: number | null;
  linesCovered: number;
  linesValid: number;
  /** file name → line number → hits. */
  files: Record<string, Record<string, number>>;
}

const MAX_CLASS_CHARS = 16 * 1024 * 1024;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  parseAttributeValue: false,
  isArray: (name) => name === 'line',
});

type Node = Record<string, unknown>;

const num = (value: unknown): number | null => {
  const parsed = typeof value === 'string' ? Number(value) : Number.NaN;
  return Number.isFinite(parsed) ? parsed : null;
};

const rootAttributes = (xml: string): Node => {
  const parsed = parser.parse(xml.endsWith('/>') ? xml : `${xml.slice(0, -1)}/>`) as Node;
  return (parsed.coverage ?? {}) as Node;
};

/** Reads a Cobertura report; throws on XML that cannot be read. */
export async function parseCobertura(source: AsyncIterable<string>): Promise<CoberturaResult> {
  const files: Record<string, Record<string, number>> = {};
  let root: Node | null = null;
  let covered = 0;
  let valid = 0;
  for await (const chunk of xmlChunks(source, new Set(['class']), MAX_CLASS_CHARS)) {
    if (chunk.kind === 'open' && chunk.name === 'coverage' && !root) root = rootAttributes(chunk.xml);
    if (chunk.kind !== 'item') continue;
    const node = ((parser.parse(chunk.xml) as Node).class ?? {}) as Node;
    const filename = typeof node['@filename'] === 'string' ? node['@filename'] : null;
    const lines = ((node.lines as Node | undefined)?.line ?? []) as Node[];
    if (!filename) continue;
    const hits = (files[filename] ??= {});
    for (const line of lines) {
      const number = num(line['@number']);
      const count = num(line['@hits']);
      if (number === null || count === null) continue;
      const before = hits[String(number)];
      hits[String(number)] = (before ?? 0) + count;
      if (before === undefined) {
        valid += 1;
        if (count > 0) covered += 1;
      } else if (before === 0 && count > 0) covered += 1;
    }
  }
  if (!root) throw new Error('not a Cobertura report (no <coverage> element)');
  const rate = num(root['@line-rate']);
  const rootCovered = num(root['@lines-covered']);
  const rootValid = num(root['@lines-valid']);
  const linesCovered = rootCovered ?? covered;
  const linesValid = rootValid ?? valid;
  const fraction = rate ?? (linesValid > 0 ? linesCovered / linesValid : null);
  return {
    lineRate: fraction === null ? null : Math.round(Math.min(Math.max(fraction, 0), 1) * 10000) / 100,
    linesCovered,
    linesValid,
    files,
  };
}

/**
 * JUnit XML test reports, read as GitLab's `Gitlab::Ci::Parsers::Test::Junit` reads them: test cases
 * count only under a root `<testsuites>` or `<testsuite>` (suites may nest, `<testsuites>` only at the
 * root); a case is `failed` with a `<failure>`, `error` with an `<error>`, `skipped` with a `<skipped>`,
 * otherwise `success`. A failure's or error's output is its text (or `message`), then the case's
 * `System Out:` and `System Err:`; `[[ATTACHMENT|path]]` in its system-out names an attachment. A report
 * that is not XML leaves its suite with the error `JUnit XML parsing failed: …` and no cases.
 * Streaming: the cases are handed out in batches, never all held.
 */
import crypto from 'node:crypto';
import { XMLParser } from 'fast-xml-parser';
import { XmlChunkError, xmlChunks } from './xml-chunks.js';

export type TestStatus = 'success' | 'failed' | 'skipped' | 'error';

export interface ParsedTestCase {
  /** sha256 of `<testsuite name>_<classname>_<name>`, GitLab's key of a case within its status. */
  key: string;
  status: TestStatus;
  name: string | null;
  classname: string | null;
  file: string | null;
  executionTime: number;
  systemOutput: string | null;
  attachment: string | null;
}

export interface JunitResult {
  /** The cases read, by status (a case repeated with the same status and key counts each time). */
  counts: Record<TestStatus, number>;
  totalTime: number;
  suiteError: string | null;
}

const ATTACHMENT = /\[\[ATTACHMENT\|([^[\]|]+?)\]\]/;
/** The largest single `<testcase>` element read (characters). */
export const MAX_TEST_CASE_CHARS = 16 * 1024 * 1024;
const BATCH = 500;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  textNodeName: '#text',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  cdataPropName: false,
  processEntities: true,
  htmlEntities: false,
});

type Node = Record<string, unknown>;

const text = (value: unknown): string | null => {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return text(value[0]);
  if (typeof value === 'object') {
    const node = value as Node;
    const content = typeof node['#text'] === 'string' ? node['#text'] : null;
    if (content !== null && content.trim() !== '') return content;
    const message = node['@message'];
    return typeof message === 'string' ? message : content;
  }
  return String(value);
};

const attr = (node: Node, name: string): string | null => {
  const value = node[`@${name}`];
  return typeof value === 'string' ? value : null;
};

/** Ruby's `String#to_f`: the leading number, or 0. */
export function rubyFloat(value: string | null): number {
  if (!value) return 0;
  const match = /^\s*[-+]?(\d[\d_]*)?(\.\d+)?([eE][-+]?\d+)?/.exec(value);
  const parsed = match ? Number.parseFloat(match[0].replace(/_/g, '')) : Number.NaN;
  return Number.isFinite(parsed) ? parsed : 0;
}

function testCase(xml: string, suiteName: string | null): ParsedTestCase {
  const parsed = parser.parse(xml) as Node;
  const node = (parsed.testcase ?? {}) as Node;
  const out = 'system-out' in node ? `System Out:\n\n${text(node['system-out']) ?? ''}` : null;
  const err = 'system-err' in node ? `System Err:\n\n${text(node['system-err']) ?? ''}` : null;
  let status: TestStatus = 'success';
  let systemOutput: string | null = null;
  let attachment: string | null = null;
  const failure = 'failure' in node ? 'failure' : 'error' in node ? 'error' : null;
  if (failure) {
    status = failure === 'failure' ? 'failed' : 'error';
    systemOutput = [text(node[failure]) ?? '', out, err].filter((part) => part !== null).join('\n\n');
    attachment = ATTACHMENT.exec(text(node['system-out']) ?? '')?.[1] ?? null;
  } else if ('skipped' in node) {
    status = 'skipped';
    systemOutput = text(node.skipped);
  }
  const name = attr(node, 'name');
  const classname = attr(node, 'classname');
  return {
    key: crypto
      .createHash('sha256')
      .update(`${suiteName ?? ''}_${classname ?? ''}_${name ?? ''}`)
      .digest('hex'),
    status,
    name,
    classname,
    file: attr(node, 'file'),
    executionTime: rubyFloat(attr(node, 'time')),
    systemOutput,
    attachment,
  };
}

const suiteName = (xml: string): string | null => {
  const parsed = parser.parse(xml.endsWith('/>') ? xml : `${xml.slice(0, -1)}/>`) as Node;
  const node = Object.values(parsed)[0];
  return node && typeof node === 'object' ? attr(node as Node, 'name') : null;
};

/**
 * Reads a JUnit report, handing its cases to `onCases` in batches, in document order. A later case with
 * the same status and key replaces the earlier one in GitLab: the consumer keeps one (and counts them).
 */
export async function parseJunit(
  source: AsyncIterable<string>,
  onCases: (cases: ParsedTestCase[]) => Promise<void>,
): Promise<JunitResult> {
  const counts: Record<TestStatus, number> = { success: 0, failed: 0, skipped: 0, error: 0 };
  let totalTime = 0;
  let batch: ParsedTestCase[] = [];
  // Errors of the consumer (the database) are not the report's.
  let consumerFailed = false;
  const flush = async () => {
    const cases = batch;
    batch = [];
    try {
      if (cases.length) await onCases(cases);
    } catch (err) {
      consumerFailed = true;
      throw err;
    }
  };
  // The open elements: a case counts when they are testsuites/testsuite only, testsuites at the root.
  const stack: Array<{ name: string; suite: string | null }> = [];
  const inSuite = () =>
    stack.length > 0 && stack.every((e, i) => e.name === 'testsuite' || (i === 0 && e.name === 'testsuites'));
  let root = false;
  try {
    for await (const chunk of xmlChunks(source, new Set(['testcase']), MAX_TEST_CASE_CHARS)) {
      root = true;
      if (chunk.kind === 'open' && !chunk.selfClosing) {
        const suite = ['testsuite', 'testsuites'].includes(chunk.name) ? suiteName(chunk.xml) : null;
        stack.push({ name: chunk.name, suite });
      } else if (chunk.kind === 'close') {
        if (stack.pop()?.name !== chunk.name) throw new XmlChunkError(`unexpected end tag ${chunk.name}`);
      } else if (chunk.kind === 'item' && inSuite()) {
        const parsed = testCase(chunk.xml, stack[stack.length - 1].suite);
        totalTime += parsed.executionTime;
        counts[parsed.status] += 1;
        batch.push(parsed);
        if (batch.length >= BATCH) await flush();
      }
    }
    if (stack.length) throw new XmlChunkError('unexpected end of file');
    if (!root) throw new XmlChunkError('Document is empty');
    await flush();
  } catch (err) {
    if (consumerFailed || !(err instanceof Error)) throw err;
    return {
      counts: { success: 0, failed: 0, skipped: 0, error: 0 },
      totalTime: 0,
      suiteError: `JUnit XML parsing failed: ${err.message}`,
    };
  }
  return { counts, totalTime, suiteError: null };
}

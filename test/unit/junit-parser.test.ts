/** The JUnit reader: GitLab's rules for cases, statuses and outputs, and its bounded streaming. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parseJunit, rubyFloat, type ParsedTestCase } from '../../src/ci_reports/junit-parser.js';
import { testSuiteName } from '../../src/ci_reports/report-ingest.js';
import { readText } from '../../src/ci_reports/xml-chunks.js';

async function* chunks(text: string, size = 7) {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

async function parse(xml: string, size?: number) {
  const cases: ParsedTestCase[] = [];
  const result = await parseJunit(chunks(xml, size), async (batch) => {
    cases.push(...batch);
  });
  return { ...result, cases };
}

const REPORT = `<?xml version="1.0" encoding="UTF-8"?>
<!-- made by a test runner -->
<testsuites name="all">
  <testsuite name="calc" tests="4">
    <properties><property name="seed" value="1"/></properties>
    <testcase classname="calc_spec" name="adds" file="spec/calc_spec.rb" time="1.5"/>
    <testcase classname="calc_spec" name="divides" time="0.25">
      <failure message="divided by 0" type="ZeroDivisionError"><![CDATA[expected 1 </testcase> got <nil>]]></failure>
      <system-out>[[ATTACHMENT|screenshots/divide.png]]</system-out>
      <system-err>warn</system-err>
    </testcase>
    <testcase classname="calc_spec" name="crashes" time="2s"><error message="boom"/></testcase>
    <testcase classname="calc_spec" name="later"><skipped>not today</skipped></testcase>
  </testsuite>
</testsuites>`;

describe('parseJunit', () => {
  it('reads statuses, outputs, attachments and times whatever the chunking', async () => {
    for (const size of [1, 7, 4096]) {
      const { counts, totalTime, suiteError, cases } = await parse(REPORT, size);
      expect(suiteError).toBeNull();
      expect(counts).toEqual({ success: 1, failed: 1, error: 1, skipped: 1 });
      expect(totalTime).toBeCloseTo(3.75);
      expect(cases.map((c) => [c.name, c.status])).toEqual([
        ['adds', 'success'],
        ['divides', 'failed'],
        ['crashes', 'error'],
        ['later', 'skipped'],
      ]);
      const [adds, divides, crashes, later] = cases;
      expect(adds).toMatchObject({ file: 'spec/calc_spec.rb', executionTime: 1.5, systemOutput: null });
      expect(divides.systemOutput).toBe(
        'expected 1 </testcase> got <nil>\n\nSystem Out:\n\n[[ATTACHMENT|screenshots/divide.png]]\n\nSystem Err:\n\nwarn',
      );
      expect(divides.attachment).toBe('screenshots/divide.png');
      expect(crashes).toMatchObject({ systemOutput: 'boom', executionTime: 2 });
      expect(later.systemOutput).toBe('not today');
      expect(adds.key).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  const table: Array<[string, string, Partial<Awaited<ReturnType<typeof parse>>>]> = [
    [
      'a root testsuite',
      '<testsuite name="s"><testcase name="a"/><testcase name="b"><failure/></testcase></testsuite>',
      { counts: { success: 1, failed: 1, skipped: 0, error: 0 } },
    ],
    [
      'nested suites (PHPUnit)',
      '<testsuites><testsuite name="a"><testsuite name="b"><testcase name="x"/></testsuite></testsuite></testsuites>',
      { counts: { success: 1, failed: 0, skipped: 0, error: 0 } },
    ],
    [
      'cases outside any suite',
      '<testcase name="x"/>',
      { counts: { success: 0, failed: 0, skipped: 0, error: 0 }, suiteError: null },
    ],
    [
      'cases under another root',
      '<report><testsuite name="s"><testcase name="x"/></testsuite></report>',
      { counts: { success: 0, failed: 0, skipped: 0, error: 0 } },
    ],
    [
      'testsuites nested in a testsuite',
      '<testsuite name="s"><testsuites><testcase name="x"/></testsuites></testsuite>',
      { counts: { success: 0, failed: 0, skipped: 0, error: 0 } },
    ],
    [
      'the same case twice (both read; the store keeps one)',
      '<testsuite name="s"><testcase name="x" time="1"/><testcase name="x" time="2"/></testsuite>',
      { counts: { success: 2, failed: 0, skipped: 0, error: 0 }, totalTime: 3 },
    ],
    [
      'entities in attributes',
      '<testsuite name="s"><testcase name="a &amp; b &lt;c&gt;"/></testsuite>',
      { counts: { success: 1, failed: 0, skipped: 0, error: 0 } },
    ],
  ];
  it.each(table)('%s', async (_name, xml, expected) => {
    expect(await parse(xml)).toMatchObject(expected);
  });

  it.each([
    ['an empty file', '', 'JUnit XML parsing failed: Document is empty'],
    ['text', 'not xml at all', 'JUnit XML parsing failed: Document is empty'],
    [
      'a truncated file',
      '<testsuite name="s"><testcase name="x">',
      'JUnit XML parsing failed: unexpected end of file',
    ],
    ['mismatched tags', '<testsuite><a></b></testsuite>', 'JUnit XML parsing failed: unexpected end tag b'],
  ])('keeps %s as the suite error, with no counts', async (_name, xml, error) => {
    const result = await parse(xml);
    expect(result.suiteError).toBe(error);
    expect(result.counts).toEqual({ success: 0, failed: 0, skipped: 0, error: 0 });
  });

  it('reads a large report in batches, holding one case at a time', async () => {
    const n = 5000;
    async function* big() {
      yield '<testsuites><testsuite name="big">';
      for (let i = 0; i < n; i++) yield `<testcase classname="c" name="t${i}" time="0.001"/>`;
      yield '</testsuite></testsuites>';
    }
    const sizes: number[] = [];
    const result = await parseJunit(big(), async (batch) => {
      sizes.push(batch.length);
    });
    expect(result.counts.success).toBe(n);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(500);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(n);
  });

  it('reads several files of one upload (concatenated gzip members) one after the other', async () => {
    const one = '<?xml version="1.0"?><testsuite name="a"><testcase name="x"/></testsuite>\n';
    const two =
      '<?xml version="1.0"?><testsuites><testsuite name="b"><testcase name="y"><failure/></testcase></testsuite></testsuites>';
    const file = path.join(os.tmpdir(), `junit-${process.pid}.gz`);
    fs.writeFileSync(file, Buffer.concat([gzipSync(one), gzipSync(two)]));
    try {
      const result = await parseJunit(readText(file, true), async () => undefined);
      expect(result).toMatchObject({ counts: { success: 1, failed: 1 }, suiteError: null });
      fs.writeFileSync(file, 'not gzip');
      expect((await parseJunit(readText(file, true), async () => undefined)).suiteError).toMatch(
        /^JUnit XML parsing failed: /,
      );
    } finally {
      fs.rmSync(file, { force: true });
    }
  });

  it('takes the leading number of a time, as Ruby does', () => {
    expect([rubyFloat('1.5'), rubyFloat('2s'), rubyFloat(''), rubyFloat('x'), rubyFloat(null)]).toEqual([
      1.5, 2, 0, 0, 0,
    ]);
  });
});

describe('testSuiteName', () => {
  it.each([
    ['rspec', undefined, 'rspec'],
    ['rspec 1/3', { total: 3 }, 'rspec'],
    ['rspec 10:12', { total: 12 }, 'rspec'],
    ['test: [ruby, 3]', { total: 2 }, 'test: [ruby, 3]'],
  ])('%s', (name, parallel, expected) => {
    expect(testSuiteName({ name, options: parallel ? { parallel } : {} })).toBe(expected);
  });
});

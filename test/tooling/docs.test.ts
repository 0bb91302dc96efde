import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `make docs` must give a self-contained page that renders the whole contract: a section per tag of
 * generated/openapi.json, and every operation under its tag with its summary.
 *
 * Redoc 3 (what @redocly/cli 2.x renders with) marks each section with `data-section-id`: `/<tag-slug>`
 * for a tag, `/<tag-slug>/<operationid>` for an operation. It renders a tag section even when the tag has no
 * operations yet, but only for tags listed in `x-tagGroups`. Sections fill in lazily as they scroll into
 * view, and a tag's operations only appear once its menu entry is opened.
 *
 * Nothing comes from the network: scripts and styles are inline, and scripts/build-docs.sh replaces the
 * badge logo Redoc would fetch from its CDN with an inline image.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = fs.existsSync(CHROMIUM);
const screenshot = path.join(root, '.forge-test/docs.png');
if (!hasChromium) process.stderr.write(`docs.test.ts: ${CHROMIUM} is missing, skipping the browser checks\n`);

interface Spec {
  tags?: { name: string }[];
  paths: Record<string, Record<string, { operationId?: string; summary?: string; tags?: string[] }>>;
}
const spec = JSON.parse(fs.readFileSync(path.join(root, 'generated/openapi.json'), 'utf8')) as Spec;
const tagNames = (spec.tags ?? []).map((tag) => tag.name);
const operations = Object.values(spec.paths).flatMap((item) =>
  Object.values(item).filter((op) => typeof op === 'object' && op !== null && 'operationId' in op),
);

let dir: string;
let html: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-docs-'));
  // What `make docs` runs, writing to a temporary file instead of docs/api.html.
  await promisify(execFile)('bash', [path.join(root, 'scripts/build-docs.sh'), path.join(dir, 'api.html')], {
    cwd: root,
  });
  html = fs.readFileSync(path.join(dir, 'api.html'), 'utf8');
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('API docs (make docs)', () => {
  it('loads no script or stylesheet from the network', () => {
    const external = [
      ...html.matchAll(/<script\b[^>]*\bsrc\s*=\s*["']?(?:https?:)?\/\/[^>]*>/gi),
      ...html.matchAll(/<link\b[^>]*\bhref\s*=\s*["']?(?:https?:)?\/\/[^>]*>/gi),
      ...html.matchAll(/@import\s+(?:url\()?\s*["']?(?:https?:)?\/\//gi),
    ].map((match) => match[0]);
    expect(external).toEqual([]);
    expect(html).not.toMatch(/cdn\.redoc\.ly/);
    expect(html).toContain('<script');
  });

  it.skipIf(!hasChromium)(
    'renders a section for every tag and every operation summary',
    async () => {
      const userDataDir = path.join(dir, 'chromium');
      const context = await chromium.launchPersistentContext(userDataDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--no-first-run',
          '--disable-quic',
        ],
      });
      try {
        await checkPage(context);
      } finally {
        await context.close();
      }
    },
    // About 0.1 s of rendering per operation here; the budget grows with the contract.
    Math.max(120_000, (tagNames.length + operations.length) * 1_000),
  );
});

async function checkPage(context: BrowserContext): Promise<void> {
  // Nothing may come from the network; record what the page asks for and refuse it.
  const remote: { url: string; type: string }[] = [];
  await context.route(/^https?:/, (route) => {
    remote.push({ url: route.request().url(), type: route.request().resourceType() });
    return route.abort();
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(String(error)));

  await page.goto(`file://${path.join(dir, 'api.html')}`, { waitUntil: 'load' });
  await page.locator('[data-section-id]').first().waitFor();

  // One page load. Each tag's menu entry is chosen once; its section, titled by the tag name, and one section
  // per operation, titled by its summary, must then render, and the menu must list the operations.
  const expected = tagNames.map((name) => ({
    name,
    summaries: operations
      .filter((op) => op.tags?.[0] === name)
      .map((op) => op.summary ?? `(no summary: ${op.operationId})`),
  }));
  const seen = await page.evaluate(renderEveryTag, { tags: expected, timeoutMs: 30_000 });
  fs.mkdirSync(path.dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot });

  const missingTags = seen.filter((tag) => !tag.menu || !tag.section).map((tag) => tag.name);
  const missingOperations = expected.flatMap(({ name, summaries }) => {
    const tag = seen.find((entry) => entry.name === name);
    return summaries
      .filter((summary) => !tag?.menuOperations.includes(summary) || !tag.operationHeadings.includes(summary))
      .map((summary) => `${name}: ${summary}`);
  });
  expect(missingTags, 'tags without a menu entry and section').toEqual([]);
  expect(missingOperations, 'operations without a menu entry and section').toEqual([]);
  const untagged = operations
    .filter((op) => !tagNames.includes(op.tags?.[0] ?? ''))
    .map((op) => op.operationId);
  expect(untagged, 'operations without a declared tag').toEqual([]);

  expect(pageErrors, 'errors thrown in the page').toEqual([]);
  expect(remote, 'requests to the network').toEqual([]);
}

/** The little of the DOM the in-page check uses (the project compiles without the DOM library). */
interface PageElement {
  readonly textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selectors: string): PageElement | null;
  querySelectorAll(selectors: string): ArrayLike<PageElement>;
  click(): void;
  scrollIntoView(): void;
}

interface TagView {
  name: string;
  menu: boolean;
  section: boolean;
  menuOperations: string[];
  operationHeadings: string[];
}

/**
 * Runs in the page. Redoc renders a tag's operation sections only while the tag is the active route, and each
 * section only once it comes near the viewport; so per tag: choose its menu entry, then scroll to each section
 * still unrendered until every summary has its titled section, or the time runs out.
 */
async function renderEveryTag({
  tags,
  timeoutMs,
}: {
  tags: { name: string; summaries: string[] }[];
  timeoutMs: number;
}): Promise<TagView[]> {
  const { document } = globalThis as unknown as { document: PageElement };
  const pause = () => new Promise((resolve) => setTimeout(resolve, 50));
  const all = (selectors: string) => Array.from(document.querySelectorAll(selectors));
  // A deprecated operation's heading ends with Redoc's "Deprecated" badge, which is not part of its summary.
  const title = (section: PageElement) =>
    section.querySelector('h1, h2')?.textContent?.replace(/\s*deprecated$/i, '') ?? null;
  const views: TagView[] = [];
  for (const tag of tags) {
    const view: TagView = {
      name: tag.name,
      menu: false,
      section: false,
      menuOperations: [],
      operationHeadings: [],
    };
    views.push(view);
    const entry = document.querySelector(
      `[data-testid="menu-item-label"] [data-text=${JSON.stringify(tag.name)}]`,
    );
    if (!entry) continue;
    view.menu = true;
    entry.click();
    let scrolledTo: PageElement | undefined;
    let sinceScroll = 0;
    for (const deadline = performance.now() + timeoutMs; performance.now() < deadline;) {
      await pause();
      const tagSection = all('[data-section-id]').find((section) => title(section) === tag.name);
      if (!tagSection) continue;
      view.section = true;
      const prefix = `${tagSection.getAttribute('data-section-id')}/`;
      const sections = all('[data-section-id]').filter((s) =>
        s.getAttribute('data-section-id')?.startsWith(prefix),
      );
      view.operationHeadings = sections.map(title).filter((heading) => heading !== null);
      view.menuOperations = all('[data-testid="menu-item-label"] [data-text]').map(
        (e) => e.getAttribute('data-text') ?? '',
      );
      const pending = sections.find((section) => title(section) === null);
      const complete = tag.summaries.every(
        (summary) => view.operationHeadings.includes(summary) && view.menuOperations.includes(summary),
      );
      if (complete && !pending) break;
      // Redoc may scroll back to the tag as sections above grow; try again after a while.
      if (pending && (pending !== scrolledTo || ++sinceScroll >= 10)) {
        pending.scrollIntoView();
        scrolledTo = pending;
        sinceScroll = 0;
      }
    }
  }
  return views;
}

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
    // About 0.3 s per tag and per operation here; the budget grows with the contract.
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

  // Every tag and operation has a menu entry; choosing it must bring its section, titled by the tag name or
  // the operation summary, into view. Choosing a tag opens its operations in the menu (and closes the others').
  const menu = page.locator('[data-testid="menu-item-label"]');
  const heading = (title: string) =>
    page.locator('[data-section-id] h1, [data-section-id] h2').getByText(title, { exact: true }).first();
  const attempt = async (step: () => Promise<unknown>) => {
    try {
      await step();
      return true;
    } catch {
      return false;
    }
  };
  const choose = (title: string, timeout: number) =>
    attempt(async () => {
      await menu
        .locator(`[data-text=${JSON.stringify(title)}]`)
        .first()
        .click({ timeout });
      await heading(title).waitFor({ state: 'visible', timeout });
    });
  // A loaded CI machine can take longer than the quick try to re-render a large section. The slow try first
  // waits without clicking again, since a second click on a tag would close its operations in the menu.
  const rendered = async (title: string) =>
    (await choose(title, 3_000)) ||
    (await attempt(() => heading(title).waitFor({ state: 'visible', timeout: 15_000 }))) ||
    (await choose(title, 15_000));
  fs.mkdirSync(path.dirname(screenshot), { recursive: true });
  fs.rmSync(screenshot, { force: true });
  const missingTags: string[] = [];
  const missingOperations: string[] = [];
  for (const tag of tagNames) {
    if (!(await rendered(tag))) missingTags.push(tag);
    for (const op of operations.filter((o) => o.tags?.[0] === tag)) {
      const summary = op.summary ?? `(no summary: ${op.operationId})`;
      if (!(await rendered(summary))) missingOperations.push(`${tag}: ${summary}`);
      else if (!fs.existsSync(screenshot)) await page.screenshot({ path: screenshot }); // the first operation
    }
  }
  if (!fs.existsSync(screenshot)) await page.screenshot({ path: screenshot });
  expect(missingTags, 'tags without a menu entry and section').toEqual([]);
  expect(missingOperations, 'operations without a menu entry and section').toEqual([]);
  const untagged = operations
    .filter((op) => !tagNames.includes(op.tags?.[0] ?? ''))
    .map((op) => op.operationId);
  expect(untagged, 'operations without a declared tag').toEqual([]);

  expect(pageErrors, 'errors thrown in the page').toEqual([]);
  expect(remote, 'requests to the network').toEqual([]);
}

// A real headless Chromium for the dashboard tests: Debian's `chromium` (/usr/bin/chromium, or
// CHROMIUM_PATH) driven by playwright-core. Missing, the tests are skipped with the reason — except under
// CI=true, where that is a failure (.ci/run installs it). Every page records console errors, uncaught
// exceptions and failed requests; a test fails on any it did not declare as expected, and saves a
// screenshot of each page it visits.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function chromiumSkipReason(): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined;
  const reason = `Chromium not found at ${CHROMIUM_PATH} (apt-get install -y chromium, or set CHROMIUM_PATH)`;
  if (process.env.CI === 'true') throw new Error(`${reason} (CI=true: the browser tests must run)`);
  return reason;
}

/** Flags for a sandbox without a network: no background connections, no GPU, no first-run UI. */
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
}

export interface WatchedPage {
  readonly page: Page;
  /** Where the screenshots go (one folder per test run). */
  readonly shots: string;
  /** Problems so far: console errors, page errors, failed requests, HTTP errors not declared expected. */
  problems(): string[];
  /** Declares that responses matching `pattern` with this status are expected (a wrong token's 401). */
  expect(status: number, pattern: RegExp): void;
  /** Saves a full-page screenshot as `<name>.png` in `shots`; returns its path. */
  shot(name: string): Promise<string>;
  /** Asserts that nothing unexpected happened on the page. */
  assertClean(): void;
  /** Every request the page made so far: its URL and headers (to prove no secret travels in a URL). */
  requests(): ReadonlyArray<{ url: string; headers: Record<string, string> }>;
  /** Bytes received so far (encoded bodies plus headers), for measuring the page weight. */
  transferred(): Promise<number>;
}

export interface PageOptions {
  /** The window's size; a laptop's 1280×860 unless told. */
  readonly viewport?: { width: number; height: number };
  /** The browser's time zone (IANA name), so a test can predict how times read; the machine's unless told. */
  readonly timezoneId?: string;
}

export async function watchPage(browser: Browser, label: string, options: PageOptions = {}): Promise<WatchedPage> {
  const shots = mkdtempSync(join(tmpdir(), `tollgate-dashboard-${label}-`));
  mkdirSync(shots, { recursive: true });
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 860 },
    locale: 'en-US',
    ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}),
  });
  const page = await context.newPage();
  // A page that does not show what a test waits for fails in seconds, not in Playwright's 30.
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  const expected: Array<{ status: number; pattern: RegExp }> = [];
  const seen: Array<{ url: string; headers: Record<string, string> }> = [];
  const sizes: Array<Promise<number>> = [];
  page.on('request', (request) => {
    seen.push({ url: request.url(), headers: request.headers() });
  });
  page.on('requestfinished', (request) => {
    sizes.push(request.sizes().then((s) => s.responseBodySize + s.responseHeadersSize, () => 0));
  });
  const isExpected = (status: number, url: string) => expected.some((e) => e.status === status && e.pattern.test(url));
  let pendingExpectedConsole = 0;
  page.on('response', (response) => {
    if (response.status() < 400) return;
    if (isExpected(response.status(), response.url())) pendingExpectedConsole += 1;
    else problems.push(`HTTP ${response.status()} ${response.url()}`);
  });
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // Chromium logs every HTTP error response once; the expected ones are accounted for above.
    if (/Failed to load resource: the server responded with a status of/.test(message.text()) && pendingExpectedConsole > 0) {
      pendingExpectedConsole -= 1;
      return;
    }
    problems.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    // A download the test started and a navigation away from a loading page abort on purpose.
    if (request.failure()?.errorText === 'net::ERR_ABORTED' && request.resourceType() !== 'script') return;
    problems.push(`request failed: ${request.url()} (${request.failure()?.errorText})`);
  });
  return {
    page,
    shots,
    problems: () => [...problems],
    expect: (status, pattern) => void expected.push({ status, pattern }),
    async shot(name) {
      const path = join(shots, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    requests: () => [...seen],
    async transferred() {
      return (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
    },
    assertClean() {
      assert.deepEqual(problems, [], `the page had problems (screenshots in ${shots})`);
    },
  };
}

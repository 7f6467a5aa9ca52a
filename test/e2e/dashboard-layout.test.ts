// The dashboard on a laptop and on a phone, in a real headless Chromium against the real gateway: at
// 1280 px the keys table's actions are on screen without sideways scrolling (a key with every limit, a
// long name, an expiry and a model list is the widest row); at 390 px nothing scrolls sideways and the
// charts end at the newest hour, inside the window; and the chart legends read as sentences — the range
// and its total, or, pointing at an hour, that hour's figures — never uPlot's "Time: --".
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { postChat } from '../support/e2e.js';
import { chromiumSkipReason, watchPage } from '../support/browser.js';
import { dashboardRig } from '../support/dashboard-rig.js';
import { type CreatedKey } from '../support/gateway-process.js';
import { usdToNano } from '../support/money.js';

const skip = chromiumSkipReason();
const ADMIN_TOKEN = 'dashboard-layout-admin-token-0123456789abcdef';
const LAPTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

describe('dashboard: fits a laptop and a phone', { skip }, () => {
  const rig = dashboardRig(ADMIN_TOKEN);
  let wide: { id: string };
  let holder: CreatedKey;

  before(async () => {
    // The widest row a keys table shows: a long name, a large balance, every limit, an expiry, three models.
    const res = await fetch(`${rig.gw.origin}/admin/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'acme-production-eu-west-batch',
        balance: 99_999.123456789,
        allowed_models: ['gpt-test', 'gpt-reasoning', 'embed-test'],
        limits: { rpm: 600, tpm: 100_000, max_concurrent: 8, budget: 2500, budget_period: 'month' },
        expires_at: '2031-03-01T12:00:00Z',
      }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    wide = (await res.json()) as { id: string };
    holder = await rig.gw.createKey({ name: 'phone-user', balance: 5 });
    for (let i = 0; i < 3; i++) assert.equal((await postChat(rig.gw, holder.key, { model: 'gpt-test', messages: [{ role: 'user', content: `Hello ${i}` }] })).status, 200);
  });

  const { signIn } = rig;

  /** How far the document scrolls sideways (0: it does not). */
  const sidewaysScroll = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');

  /** The chart's bucket times and first series, as the page drew them. */
  async function chartData(page: Page, chart: string): Promise<{ times: number[]; values: number[] }> {
    const figure = page.locator(`[data-chart=${chart}]`);
    return { times: JSON.parse((await figure.getAttribute('data-times'))!), values: JSON.parse((await figure.getAttribute('data-values'))!)[0] };
  }

  /** Points at the plot's right edge (the newest bucket) and returns the legend; asserts the plot is inside the window. */
  async function legendAtNewest(page: Page, chart: string, width: number): Promise<string> {
    const over = page.locator(`[data-chart=${chart}] .u-over`);
    await over.scrollIntoViewIfNeeded();
    const box = (await over.boundingBox())!;
    assert.ok(box.x >= 0 && box.x + box.width <= width, `the ${chart} chart's plot (x ${box.x}…${box.x + box.width}) lies inside the ${width} px window`);
    await page.mouse.move(box.x + box.width - 1, box.y + box.height / 2);
    return legendText(page, chart);
  }

  const legendText = async (page: Page, chart: string) => (await page.locator(`[data-chart=${chart}] [data-legend]`).textContent())!.trim();

  /** "14:00–15:00" for the UTC hour starting at `at` (the pages run in UTC here). */
  function hourLabel(at: number): string {
    const hh = (h: number) => `${String(h % 24).padStart(2, '0')}:00`;
    const hour = new Date(at * 1000).getUTCHours();
    return `${hh(hour)}–${hh(hour + 1)}`;
  }

  /** "Tue, Nov 25" for the UTC day starting at `at` (day buckets are UTC days). */
  const dayLabel = (at: number) => new Date(at * 1000).toLocaleDateString('en-US', { weekday: 'short', month: 'short', day: 'numeric', timeZone: 'UTC' });

  const requestsText = (n: number) => (n === 1 ? '1 request' : `${n} requests`);

  test('at 1280 px the keys table’s actions are on screen and nothing scrolls sideways', async () => {
    const watched = await watchPage(rig.browser, 'layout-laptop', { viewport: LAPTOP, timezoneId: 'UTC' });
    const { page } = watched;
    await signIn(page);
    await page.click('[data-nav=keys]');
    const row = page.locator(`tr[data-key="${wide.id}"]`);
    await row.waitFor();
    await watched.shot('keys-1280');
    const buttons = await row.locator('[data-action]').all();
    assert.deepEqual(await Promise.all(buttons.map((b) => b.getAttribute('data-action'))), ['topup', 'edit', 'rotate', 'revoke']);
    for (const button of buttons) {
      const box = (await button.boundingBox())!;
      const name = await button.getAttribute('data-action');
      assert.ok(box.x >= 0 && box.x + box.width <= LAPTOP.width, `${name} (x ${box.x}…${box.x + box.width}) is inside the window`);
      assert.ok(box.y >= 0 && box.y + box.height <= LAPTOP.height, `${name} is above the fold`);
    }
    assert.equal(await sidewaysScroll(page), 0, 'the document does not scroll sideways');
    const table = await page.locator('table.keys').evaluate((t) => ({ right: t.getBoundingClientRect().right, scroll: t.parentElement!.scrollWidth - t.parentElement!.clientWidth }));
    assert.ok(table.right <= LAPTOP.width && table.scroll === 0, `the whole table fits (${JSON.stringify(table)})`);
    watched.assertClean();
  });

  test('the chart legends read as sentences: the range and its total, then the hour pointed at', async () => {
    const watched = await watchPage(rig.browser, 'layout-legend', { viewport: LAPTOP, timezoneId: 'UTC' });
    const { page } = watched;
    await signIn(page);
    await page.locator('[data-chart=spend] [data-legend]').waitFor();
    const spend = await chartData(page, 'spend');
    const requests = await chartData(page, 'requests');
    const totalNano = spend.values.reduce((n, v) => n + usdToNano(v), 0);
    assert.equal(requests.values.reduce((a, b) => a + b, 0), 3, 'the three calls are on the chart');

    const idle = {
      spend: await legendText(page, 'spend'),
      requests: await legendText(page, 'requests'),
      tokens: await legendText(page, 'tokens'),
      errors: await legendText(page, 'errors'),
    };
    assert.equal(idle.spend, `Spend per hour over the last 24 hours: ${usdText(totalNano / 1e9)} in all`);
    assert.equal(idle.requests, 'Requests per hour over the last 24 hours: 3 in all, none failed');
    assert.match(idle.tokens, /^Tokens per hour over the last 24 hours: [\d,]+ in all$/);
    assert.equal(idle.errors, 'Share of requests that failed, per hour over the last 24 hours: 0% in all');
    for (const text of Object.values(idle)) assert.doesNotMatch(text, /--|Time:/, 'no uPlot default legend');
    assert.equal(await page.locator('.u-legend').count(), 0, 'uPlot’s own legend is not drawn');

    // Pointing at the newest hour: that hour's figures, in words.
    const last = spend.times.length - 1;
    const at = spend.times[last]!;
    assert.ok(Date.now() / 1000 - at < 3600 + 60, 'the newest bucket is the current hour');
    const n = requests.values[last]!;
    assert.equal(
      await legendAtNewest(page, 'spend', LAPTOP.width),
      n === 0 ? `${hourLabel(at)}: no requests` : `${hourLabel(at)}: ${usdText(spend.values[last]!)} over ${requestsText(n)}`,
    );
    assert.equal(await legendAtNewest(page, 'requests', LAPTOP.width), n === 0 ? `${hourLabel(at)}: no requests` : `${hourLabel(at)}: ${requestsText(n)}, none failed`);
    assert.equal(await legendAtNewest(page, 'errors', LAPTOP.width), n === 0 ? `${hourLabel(at)}: no requests` : `${hourLabel(at)}: none of ${requestsText(n)} failed`);
    await watched.shot('legend-hover');
    // Leaving the chart brings the range's sentence back.
    await page.mouse.move(1, 1);
    assert.equal(await legendText(page, 'spend'), idle.spend);

    // By day: a UTC date, not an hour.
    await page.selectOption('select[aria-label=Range]', 'day');
    await page.locator('[data-chart=spend] [data-legend]').filter({ hasText: 'per day over the last 30 days' }).waitFor();
    const daily = await chartData(page, 'spend');
    const dailyRequests = (await chartData(page, 'requests')).values.at(-1)!;
    const today = dayLabel(daily.times.at(-1)!);
    assert.equal(
      await legendAtNewest(page, 'spend', LAPTOP.width),
      dailyRequests === 0 ? `${today}: no requests` : `${today}: ${usdText(daily.values.at(-1)!)} over ${requestsText(dailyRequests)}`,
    );
    watched.assertClean();
  });

  test('on a 390 px phone nothing scrolls sideways and every chart ends at the newest hour, on screen', async () => {
    const watched = await watchPage(rig.browser, 'layout-phone', { viewport: PHONE, timezoneId: 'UTC' });
    const { page } = watched;
    await signIn(page);
    await page.locator('[data-chart=errors] [data-legend]').waitFor();
    await watched.shot('overview-390');
    assert.equal(await sidewaysScroll(page), 0, 'the overview does not scroll sideways');
    const requests = await chartData(page, 'requests');
    const last = requests.times.length - 1;
    const at = requests.times[last]!;
    for (const chart of ['spend', 'requests', 'tokens', 'errors']) {
      const legend = await legendAtNewest(page, chart, PHONE.width);
      assert.ok(legend.startsWith(`${hourLabel(at)}: `), `pointing at the ${chart} chart's right edge shows the newest hour (${legend})`);
    }
    assert.match(await legendAtNewest(page, 'requests', PHONE.width), requests.values[last] ? /requests?, none failed$/ : /: no requests$/);

    // The other pages fit as well; a wide table scrolls inside its own box, its actions still on screen.
    for (const nav of ['keys', 'usage', 'providers']) {
      await page.click(`[data-nav=${nav}]`);
      await page.locator('main table').first().waitFor();
      await watched.shot(`${nav}-390`);
      assert.equal(await sidewaysScroll(page), 0, `the ${nav} page does not scroll sideways`);
    }
    // A request's page and its key's page, opened from the usage table.
    await page.click('[data-nav=usage]');
    await page.locator('table.usage tbody tr a').first().click();
    await page.locator('[data-request-detail]').waitFor();
    await watched.shot('request-390');
    assert.equal(await sidewaysScroll(page), 0, 'a request’s page does not scroll sideways');
    await page.locator('[data-field=key] a').click();
    await page.locator(`[data-key-page="${holder.id}"] table.ledger`).waitFor();
    await watched.shot('key-390');
    assert.equal(await sidewaysScroll(page), 0, 'a key’s page does not scroll sideways');
    await page.click('[data-nav=keys]');
    const revoke = (await page.locator(`tr[data-key="${wide.id}"] [data-action=revoke]`).boundingBox())!;
    assert.ok(revoke.x >= 0 && revoke.x + revoke.width <= PHONE.width, `revoke (x ${revoke.x}…${revoke.x + revoke.width}) is on screen`);
    watched.assertClean();

    // The key holder's page too.
    const own = await watchPage(rig.browser, 'layout-phone-holder', { viewport: PHONE, timezoneId: 'UTC' });
    await signIn(own.page, holder.key);
    await own.page.locator('[data-chart=spend] [data-legend]').waitFor();
    await own.shot('me-390');
    assert.equal(await sidewaysScroll(own.page), 0, 'the key holder’s page does not scroll sideways');
    assert.match(await legendText(own.page, 'spend'), /^Spend per day over the last 30 days: \$[\d.]+ in all$/);
    const daily = await chartData(own.page, 'spend');
    const newest = await legendAtNewest(own.page, 'spend', PHONE.width);
    assert.ok(newest.startsWith(`${dayLabel(daily.times.at(-1)!)}: `), `pointing at the right edge shows today (${newest})`);
    own.assertClean();
  });
});

/** The dashboard's reading of a USD amount: exact, at least two decimals, thousands separated. */
function usdText(value: number): string {
  const [whole, fraction = ''] = Math.abs(value).toFixed(9).split('.');
  return `${value < 0 ? '−' : ''}$${Number(whole).toLocaleString('en-US')}.${fraction.replace(/0+$/, '').padEnd(2, '0')}`;
}

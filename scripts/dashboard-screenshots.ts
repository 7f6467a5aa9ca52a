// Regenerates the README's dashboard screenshots (docs/dashboard-overview.png, docs/dashboard-keys.png)
// and prints the overview's page weight: a real gateway on a temp database with the mock upstream, a few
// keys and a day's worth of calls (some failing upstream, a few with a key that does not exist; the
// gateway's clock is moved through the last 24 hours so the charts have a shape), photographed in
// headless Chromium.
//   npm run build && node --import tsx scripts/dashboard-screenshots.ts
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { launchChromium, watchPage } from '../test/support/browser.js';
import { fakeClock } from '../test/support/fake-clock.js';
import { mockConfig, startGateway, stopGateway } from '../test/support/gateway-process.js';
import { errorReply, startMockUpstream } from '../test/support/mock-upstream.js';

const ADMIN_TOKEN = 'screenshot-admin-token-0123456789abcdefghij';
const docs = fileURLToPath(new URL('../docs/', import.meta.url));

const HOUR = 3_600_000;
const mock = await startMockUpstream();
const clock = fakeClock();
const gw = await startGateway({ config: mockConfig(mock, `admin:\n  token: ${ADMIN_TOKEN}\n`), env: clock.env });
const browser = await launchChromium();
try {
  const admin = async (path: string, body: unknown) => {
    const res = await fetch(`${gw.origin}/admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: string; key: string };
  };
  const keys = [
    await admin('/keys', { name: 'acme-production', balance: 250, limits: { rpm: 600 } }),
    await admin('/keys', { name: 'research-team', balance: 40, allowed_models: ['gpt-test', 'gpt-reasoning'], limits: { budget: 25, budget_period: 'month' } }),
    await admin('/keys', { name: 'mobile-app', balance: 12.5 }),
    await admin('/keys', { name: 'intern-sandbox', balance: 1 }),
  ];
  const models = ['gpt-test', 'gpt-test', 'gpt-reasoning'];
  const start = Date.now() - 23 * HOUR;
  let i = 0;
  for (let hour = 0; hour < 24; hour++) {
    await clock.set(start + hour * HOUR);
    // A working day's shape: quiet at night, busy in the afternoon.
    const calls = 2 + Math.round(10 * Math.max(0, Math.sin(((hour - 4) / 24) * 2 * Math.PI)));
    for (let c = 0; c < calls; c++, i++) {
      const key = keys[i % 3 === 0 ? 0 : i % 5 === 0 ? 2 : i % 2 ? 1 : 0]!;
      const client = new OpenAI({ apiKey: key.key, baseURL: gw.baseURL, maxRetries: 0 });
      // Now and then the upstream fails, for the error rate.
      mock.handle(i % 11 === 10 ? errorReply(500, 'upstream exploded') : null);
      const call = client.chat.completions.create({ model: models[i % 3]!, messages: [{ role: 'user', content: 'word '.repeat(20 + ((i * 37) % 400)) }], max_tokens: 200 });
      await call.catch(() => undefined);
    }
    // Now and then a client with a key that does not exist: refused, and counted on the overview.
    if (hour % 5 === 0) {
      await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer tg-${'0'.repeat(43)}`, 'content-type': 'application/json' }, body: '{}' });
    }
  }
  await clock.set(Date.now());
  mock.handle(null);
  await admin('/keys/' + keys[3]!.id + '/revoke', {});

  const watched = await watchPage(browser, 'readme');
  const { page } = watched;
  await page.goto(`${gw.origin}/dashboard/`);
  await page.fill('#token', ADMIN_TOKEN);
  await page.click('button[type=submit]');
  await page.locator('[data-chart=spend] canvas').waitFor();
  await page.locator('table.top-keys').waitFor();
  const bytes = await watched.transferred();
  await page.screenshot({ path: join(docs, 'dashboard-overview.png'), fullPage: true });
  await page.click('[data-nav=keys]');
  await page.locator('table.keys tbody tr').first().waitFor();
  // The keys page is short: the picture stops below the pager, not at the bottom of the window.
  const bottom = await page.locator('.pager').evaluate((e) => e.getBoundingClientRect().bottom);
  await page.screenshot({ path: join(docs, 'dashboard-keys.png'), clip: { x: 0, y: 0, width: 1280, height: Math.ceil(bottom) + 24 } });
  const problems = watched.problems();
  if (problems.length > 0) throw new Error(`the pages had problems: ${problems.join('; ')}`);
  console.log(`wrote docs/dashboard-overview.png and docs/dashboard-keys.png; the overview weighed ${bytes} bytes transferred`);
} finally {
  await browser.close();
  await mock.close();
  await stopGateway(gw, 10_000);
  clock.remove();
}

// The dashboard in a real headless Chromium, as an operator uses it, against the real gateway process and
// the mock upstream: sign in with the admin token → create a key (the secret shown once) → top it up →
// five calls with that key through the openai SDK → the overview and usage pages show the five requests
// and their exact cost, the key's balance moved by exactly that → revoke → the key answers 401. Also:
// editing limits and models, rotating, the CSV download, the providers page, a wrong admin token.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { call, sdk, type Json } from '../support/e2e.js';
import { chromiumSkipReason, watchPage, type WatchedPage } from '../support/browser.js';
import { dashboardRig } from '../support/dashboard-rig.js';
import { mockConfig, startGateway, stopGateway } from '../support/gateway-process.js';
import { errorReply } from '../support/mock-upstream.js';
import { usdToNano } from '../support/money.js';

const skip = chromiumSkipReason();
const ADMIN_TOKEN = 'dashboard-test-admin-token-0123456789abcdef';

describe('dashboard: the operator', { skip }, () => {
  const rig = dashboardRig(ADMIN_TOKEN);

  const admin = rig.adminCall;

  const signIn = (watched: WatchedPage): Promise<Page> => rig.signIn(watched.page, undefined, '[data-nav=keys]');

  /** The key's table row, once its `data-<attribute>` reads `value`. */
  async function rowWhen(page: Page, id: string, attribute: string, value: string) {
    const row = page.locator(`tr[data-key="${id}"][data-${attribute}="${value}"]`);
    await row.waitFor();
    return row;
  }

  test('create, top up, spend through the SDK, see it on the overview and usage pages, revoke', async () => {
    const watched = await watchPage(rig.browser, 'operator');
    const page = await signIn(watched);
    await page.locator('[data-figure=spend]').waitFor();
    await watched.shot('overview-before');

    // Create: the secret is shown once, with a copy button.
    await page.click('[data-nav=keys]');
    await page.click('[data-action=create]');
    await page.fill('#key-name', 'journey');
    await page.click('[data-dialog=create] button[type=submit]');
    const secret = (await page.locator('[data-dialog=secret] [data-secret]').textContent())!.trim();
    assert.match(secret, /^tg-[A-Za-z0-9_-]{43}$/, 'the new secret is shown');
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: rig.gw.origin });
    await page.click('[data-dialog=secret] [data-copy]');
    await page.locator('[data-dialog=secret] .toolbar .hint').filter({ hasText: 'Copied.' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret, 'the copy button put the secret on the clipboard');
    await watched.shot('key-created');
    await page.click('[data-dialog=secret] [data-close]');
    assert.equal(await page.locator('[data-secret]').count(), 0, 'the secret is gone once the dialog closes');
    assert.ok(!(await page.content()).includes(secret), 'and appears nowhere on the page');
    const listed: Json[] = (await admin('GET', '/keys?name=journey')).json.data;
    assert.equal(listed.length, 1);
    const id: string = listed[0].id;
    assert.equal(listed[0].key, undefined, 'the API never shows the secret again');
    assert.equal((await admin('GET', `/keys/${id}`)).json.key, undefined);

    // Top up.
    await (await rowWhen(page, id, 'balance', '0')).locator('[data-action=topup]').click();
    await page.fill('#topup-amount', '2.5');
    await page.click('[data-dialog=topup] button[type=submit]');
    await rowWhen(page, id, 'balance', '2.5');
    assert.equal((await admin('GET', `/keys/${id}`)).json.balance, 2.5, 'the API agrees');
    await watched.shot('keys-topped-up');

    // Five calls with the new key, through the gateway, with the openai SDK.
    const client = sdk(rig.gw, secret);
    const costs = new Map<string, number>();
    for (let i = 0; i < 5; i++) {
      const { data, response } = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: `Hello ${i}` }] }).withResponse();
      costs.set(response.headers.get('x-request-id')!, usdToNano((data.usage as unknown as { cost: number }).cost));
    }
    const spentNano = [...costs.values()].reduce((a, b) => a + b, 0);
    assert.ok(spentNano > 0, 'the calls cost something');

    // Overview: five requests, their exact cost, on the figures, the chart and the top keys.
    await page.click('[data-nav=overview]');
    const spend = page.locator('[data-figure=spend]');
    await spend.waitFor();
    assert.equal(usdToNano(Number(await spend.getAttribute('data-usd'))), spentNano, 'the spend is the exact cost of the five calls');
    assert.equal(await page.locator('[data-figure=requests]').getAttribute('data-value'), '5');
    assert.equal(await page.locator('[data-figure=error-rate]').getAttribute('data-value'), '0');
    const chartValues = JSON.parse((await page.locator('[data-chart=spend]').getAttribute('data-values'))!) as number[][];
    assert.equal(chartValues[0]!.reduce((n, v) => n + usdToNano(v), 0), spentNano, 'the spend chart adds up to the same cost');
    const requestsChart = JSON.parse((await page.locator('[data-chart=requests]').getAttribute('data-values'))!) as number[][];
    assert.equal(requestsChart[0]!.reduce((a, b) => a + b, 0), 5);
    const topKey = page.locator('table.top-keys tbody tr').first();
    assert.equal((await topKey.locator('td').first().textContent())!.trim(), 'journey');
    assert.equal(usdToNano(Number(await topKey.getAttribute('data-cost'))), spentNano);
    assert.equal(await topKey.getAttribute('data-requests'), '5');
    assert.equal(await page.locator('table.top-models tbody tr').first().getAttribute('data-requests'), '5');
    await watched.shot('overview');

    // Usage, filtered to the key: the five rows, each with its exact cost.
    await page.click('[data-nav=usage]');
    await page.selectOption('select[name=key_id]', id);
    await Promise.all([page.waitForResponse((r) => r.url().includes(`/admin/v1/usage?key_id=${id}`)), page.click('.filters button[type=submit]')]);
    await page.locator('[data-page-rows="5"]').waitFor();
    const rows = page.locator('table.usage tbody tr');
    assert.equal(await rows.count(), 5);
    for (const row of await rows.all()) {
      const requestId = (await row.getAttribute('data-request'))!;
      assert.ok(costs.has(requestId), `row ${requestId} is one of the five calls`);
      assert.equal(usdToNano(Number(await row.getAttribute('data-cost'))), costs.get(requestId), 'with its exact cost');
    }
    assert.equal(usdToNano(Number(await page.locator('[data-page-cost]').getAttribute('data-page-cost'))), spentNano);
    await page.locator('[data-figure=matching-requests][data-value="5"]').waitFor();
    assert.equal(usdToNano(Number(await page.locator('[data-figure=matching-spend]').getAttribute('data-usd'))), spentNano, 'the totals of all matching rows');
    await watched.shot('usage');

    // The CSV: fetched with the token in a header, handed over as a file; it holds the same five rows.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-action=csv]')]);
    const csv = readFileSync((await download.path())!, 'utf8').trim().split(/\r?\n/);
    assert.equal(csv.length, 6, 'a header and five rows');
    for (const requestId of costs.keys()) assert.ok(csv.some((line) => line.includes(requestId)), `the CSV has ${requestId}`);
    const csvRequest = watched.requests().find((r) => r.url.includes('/admin/v1/usage.csv'))!;
    assert.equal(csvRequest.headers.authorization, `Bearer ${ADMIN_TOKEN}`, 'the CSV request carries the token in its header');

    // Keys: the balance moved by exactly the cost.
    await page.click('[data-nav=keys]');
    const balanceNano = usdToNano(2.5) - spentNano;
    const row = page.locator(`tr[data-key="${id}"]`);
    await row.waitFor();
    assert.equal(usdToNano(Number(await row.getAttribute('data-balance'))), balanceNano, 'the page shows the balance less the cost');
    assert.equal(usdToNano((await admin('GET', `/keys/${id}`)).json.balance), balanceNano, 'as the API does');
    await watched.shot('keys');

    // Revoke: the key stops working.
    await row.locator('[data-action=revoke]').click();
    await page.click('[data-dialog=revoke] [data-confirm]');
    await rowWhen(page, id, 'status', 'revoked');
    await watched.shot('keys-revoked');
    await assert.rejects(
      client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'still there?' }] }),
      (e: unknown) => e instanceof OpenAI.APIError && e.status === 401,
      'a revoked key answers 401',
    );

    // Secrets never in a URL; kept only in this tab's session storage.
    for (const r of watched.requests()) {
      assert.ok(!r.url.includes(ADMIN_TOKEN) && !r.url.includes(secret), `no secret in ${r.url}`);
    }
    assert.equal(await page.evaluate('localStorage.length'), 0, 'nothing in local storage');
    assert.deepEqual(await page.context().cookies(), [], 'no cookies');
    assert.match((await page.evaluate('JSON.stringify(sessionStorage)')) as string, /operator/);
    watched.assertClean();
  });

  test('edits a key’s limits and models, and rotates its secret', async () => {
    const created: Json = (await admin('POST', '/keys', { name: 'editable', balance: 1 })).json;
    const watched = await watchPage(rig.browser, 'operator-edit');
    const page = await signIn(watched);
    await page.click('[data-nav=keys]');
    await (await rowWhen(page, created.id, 'status', 'active')).locator('[data-action=edit]').click();
    await page.fill('#key-rpm', '60');
    await page.fill('#key-budget', '5');
    await page.selectOption('#key-budget_period', 'week');
    await page.uncheck('input[name=allModels]');
    await page.fill('#key-models', 'gpt-test, embed-test');
    await watched.shot('edit');
    await page.click('[data-dialog=edit] button[type=submit]');
    await page.getByRole('status').filter({ hasText: 'Saved editable' }).waitFor();
    const edited: Json = (await admin('GET', `/keys/${created.id}`)).json;
    assert.deepEqual(edited.allowed_models, ['gpt-test', 'embed-test']);
    assert.equal(edited.limits.rpm, 60);
    assert.equal(edited.limits.budget, 5);
    assert.equal(edited.limits.budget_period, 'week');
    assert.equal(edited.limits.tpm, null, 'an empty field is no limit');
    const row = page.locator(`tr[data-key="${created.id}"]`);
    // The list reloads after the save: the row shows the new limits once it has.
    await row.filter({ hasText: '60 rpm' }).waitFor();
    assert.match((await row.textContent())!, /\$5\.00\/week/);
    assert.match((await row.textContent())!, /gpt-test, embed-test/);

    await row.locator('[data-action=rotate]').click();
    await page.click('[data-dialog=rotate] [data-confirm]');
    const rotated = (await page.locator('[data-dialog=secret] [data-secret]').textContent())!.trim();
    assert.match(rotated, /^tg-/);
    assert.notEqual(rotated, created.key);
    await watched.shot('rotated');
    assert.equal((await call(rig.gw, 'GET', '/key', { key: created.key })).status, 401, 'the old secret stops working');
    const info: Json = (await call(rig.gw, 'GET', '/key', { key: rotated })).json.data;
    assert.equal(info.id, created.id, 'the new one is the same key');
    assert.equal(info.balance, 1, 'with its balance');

    // A refused action shows the API's message and changes nothing.
    await page.click('[data-dialog=secret] [data-close]');
    await row.locator('[data-action=topup]').click();
    watched.expect(400, /\/topup$/);
    await page.fill('#topup-amount', '-3');
    await page.click('[data-dialog=topup] button[type=submit]');
    await page.locator('[data-dialog=topup] [role=alert]').waitFor();
    assert.equal((await admin('GET', `/keys/${created.id}`)).json.balance, 1, 'nothing credited');
    watched.assertClean();
  });

  test('a rotation retried after its answer was lost says the secret cannot be shown again, never an empty one', async () => {
    const created: Json = (await admin('POST', '/keys', { name: 'lost-answer', balance: 1 })).json;
    const watched = await watchPage(rig.browser, 'operator-lost-answer');
    const page = await signIn(watched);
    await page.click('[data-nav=keys]');
    // The first rotation reaches the gateway, which rotates the secret and records its answer, but the
    // connection drops before the page receives it.
    let sent = 0;
    await page.route(`**/admin/v1/keys/${created.id}/rotate`, async (route) => {
      if (sent++ > 0) return route.continue();
      await route.fetch();
      await route.abort('aborted');
    });
    await (await rowWhen(page, created.id, 'status', 'active')).locator('[data-action=rotate]').click();
    await page.click('[data-dialog=rotate] [data-confirm]');
    await page.locator('[data-dialog=rotate] [role=alert]').waitFor();
    assert.equal((await call(rig.gw, 'GET', '/key', { key: created.key })).status, 401, 'the secret was rotated all the same');

    // Retried with the dialog's Idempotency-Key: the gateway replays its answer, whose secret is null.
    await page.click('[data-dialog=rotate] [data-confirm]');
    const lost = page.locator('[data-dialog=secret] [data-secret-lost]');
    await lost.waitFor();
    assert.match((await lost.textContent())!, /never shows a secret twice\. Rotate the key to get a new one\./);
    assert.equal(await page.locator('[data-secret]').count(), 0, 'no empty secret is offered for copying');
    assert.equal(sent, 2, 'one rotation sent, then its retry');
    await watched.shot('rotation-answer-lost');
    watched.assertClean();
  });

  test('a create retried after its answer was lost issues one key, not two', async () => {
    const watched = await watchPage(rig.browser, 'operator-lost-create');
    const page = await signIn(watched);
    await page.click('[data-nav=keys]');
    // The first create reaches the gateway, which issues the key and records its answer, but the
    // connection drops before the page receives it.
    let sent = 0;
    await page.route('**/admin/v1/keys', async (route) => {
      if (route.request().method() !== 'POST' || sent++ > 0) return route.continue();
      await route.fetch();
      await route.abort('aborted');
    });
    await page.click('[data-action=create]');
    await page.fill('#key-name', 'created-once');
    await page.click('[data-dialog=create] button[type=submit]');
    await page.locator('[data-dialog=create] [role=alert]').waitFor();
    // Submitted again, unchanged: the same Idempotency-Key, so the gateway replays its answer.
    await page.click('[data-dialog=create] button[type=submit]');
    await page.locator('[data-dialog=secret] [data-secret-lost]').waitFor();
    assert.equal(sent, 2, 'one create sent, then its retry');
    const listed: Json[] = (await admin('GET', '/keys?name=created-once')).json.data;
    assert.equal(listed.length, 1, 'one key issued');
    watched.assertClean();
  });

  test('the providers page shows each upstream’s health, and one cooling down after a failure', async () => {
    // A gateway of its own whose upstreams cool down after one failure, for ten minutes.
    const config = mockConfig(rig.mock, `admin:\n  token: ${ADMIN_TOKEN}\n`).replace('cooldown: { failures: 1000000, seconds: 1 }', 'cooldown: { failures: 1, seconds: 600 }');
    assert.ok(config.includes('failures: 1, seconds: 600'));
    const cooling = await startGateway({ config });
    try {
      const key = await cooling.createKey({ name: 'p', balance: 1 });
      rig.mock.handle(errorReply(500, 'the upstream broke'));
      assert.equal((await call(cooling, 'POST', '/chat/completions', { key: key.key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] } })).status, 502);
      rig.mock.handle(null);

      const watched = await watchPage(rig.browser, 'operator-providers');
      const { page } = watched;
      await page.goto(`${cooling.origin}/dashboard/`);
      await page.fill('#token', ADMIN_TOKEN);
      await page.click('button[type=submit]');
      await page.click('[data-nav=providers]');
      await page.locator('table.providers tbody tr').first().waitFor();
      const api: Json[] = (await call(cooling, 'GET', '//admin/v1/providers', { key: ADMIN_TOKEN })).json.data;
      assert.equal(await page.locator('table.providers tbody tr').count(), api.length, 'one row per upstream');
      const broken = page.locator('tr[data-upstream="mock/gpt-4o-mini"]');
      assert.equal(await broken.getAttribute('data-cooling'), 'true', 'the failed upstream is cooling down');
      assert.match((await broken.textContent())!, /cooling until/);
      assert.match((await broken.locator('td.last-error').textContent())!, /500/);
      assert.equal(await page.locator('tr[data-upstream="mock/text-embedding-3-small"]').getAttribute('data-cooling'), 'false', 'the others are healthy');
      await watched.shot('providers');
      watched.assertClean();
    } finally {
      rig.mock.handle(null);
      await stopGateway(cooling, 10_000);
    }
  });

  test('a wrong admin token shows a clear message and keeps nothing', async () => {
    const watched = await watchPage(rig.browser, 'operator-wrong');
    watched.expect(401, /\/admin\/v1\/keys/);
    const { page } = watched;
    assert.deepEqual((await call(rig.gw, 'GET', '//dashboard/config.json')).json, { operator: true }, 'the page knows the operator view exists');
    await page.goto(`${rig.gw.origin}/dashboard/`);
    await page.getByLabel('Admin token, account token or Tollgate key').waitFor();
    await page.fill('#token', 'not-the-admin-token-but-long-enough-to-look-real');
    await page.click('button[type=submit]');
    await page.getByRole('alert').waitFor();
    assert.match((await page.getByRole('alert').textContent())!, /admin token is not valid/);
    assert.equal(await page.evaluate('sessionStorage.length'), 0);
    await watched.shot('wrong-token');
    watched.assertClean();
  });

  test('the overview page weighs little: measured in bytes transferred, compressed', async () => {
    const watched = await watchPage(rig.browser, 'operator-weight');
    await signIn(watched);
    await watched.page.locator('[data-chart=spend] canvas').waitFor();
    const bytes = await watched.transferred();
    const encodings = watched.requests().filter((r) => /app\.(js|css)$/.test(r.url));
    assert.equal(encodings.length, 2);
    for (const path of ['//dashboard/', '//dashboard/app.js', '//dashboard/app.css']) {
      const res = await call(rig.gw, 'GET', path, { headers: { 'accept-encoding': 'br, gzip' } });
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('content-encoding'), 'br', `${path} is sent brotli-compressed`);
      assert.ok(res.headers.get('content-security-policy')?.includes("script-src 'self'"), `${path} carries the CSP`);
    }
    // Not a timing: a size budget, so a heavy dependency slipping in fails here.
    assert.ok(bytes < 100_000, `the overview with its data is ${bytes} bytes`);
    await watched.shot('overview');
    console.log(`overview page weight: ${bytes} bytes transferred (document, bundle, styles and API data)`);
    watched.assertClean();
  });
});

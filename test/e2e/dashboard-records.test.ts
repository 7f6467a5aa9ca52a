// Every request on record, as the operator's dashboard shows it, in a real headless Chromium against the
// real gateway process: the usage page's status filter (successful, errors, 4xx, 5xx, one code) shows
// exactly the rows the API has for it; a usage row opens the request's own page (#/usage/<request id>)
// with its outcome, error, timings, tokens and each upstream attempt, and that page opens from a link
// too; a key's own page (#/keys/<id>) shows the key, its ledger history page by page and its recent
// requests; the overview counts the requests refused for a bad key. The API is the truth each view is
// checked against.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { call, postChat, waitFor, type Json } from '../support/e2e.js';
import { chromiumSkipReason, watchPage, type WatchedPage } from '../support/browser.js';
import { dashboardRig } from '../support/dashboard-rig.js';
import { type CreatedKey } from '../support/gateway-process.js';
import { errorReply } from '../support/mock-upstream.js';
import { usdToNano } from '../support/money.js';

const skip = chromiumSkipReason();
const ADMIN_TOKEN = 'dashboard-records-admin-token-0123456789abcdef';
const chat = (content: string, model = 'gpt-test') => ({ model, messages: [{ role: 'user', content }] });

describe('dashboard: every request on record', { skip }, () => {
  const rig = dashboardRig(ADMIN_TOKEN);
  let key: CreatedKey;
  let broke: CreatedKey;
  /** The request ids of the calls made, by what happened to them. */
  const ids = { ok: [] as string[], upstreamFailed: '', unknownModel: '', noCredit: '' };

  const admin = (path: string): Promise<Json> => rig.admin('GET', path);
  const apiRows = async (query = ''): Promise<Json[]> => (await admin(`/usage?limit=100${query}`)).data;
  const apiRow = async (id: string): Promise<Json> => {
    const row = (await apiRows()).find((r) => r.request_id === id);
    assert.ok(row, `the API has a row for ${id}`);
    return row;
  };

  before(async () => {
    key = await rig.gw.createKey({ name: 'records', balance: 1 });
    broke = await rig.gw.createKey({ name: 'no-credit', balance: 0 });
    const requestId = (res: { headers: Headers }) => res.headers.get('x-request-id')!;
    for (let i = 0; i < 3; i++) {
      const res = await postChat(rig.gw, key.key, chat(`Hello ${i}`));
      assert.equal(res.status, 200);
      ids.ok.push(requestId(res));
    }
    rig.mock.handle(errorReply(500, 'the upstream broke'));
    const failed = await postChat(rig.gw, key.key, chat('this one fails'));
    rig.mock.handle(null);
    assert.equal(failed.status, 502);
    ids.upstreamFailed = requestId(failed);
    const unknown = await postChat(rig.gw, key.key, chat('hi', 'no-such-model'));
    assert.equal(unknown.status, 404);
    ids.unknownModel = requestId(unknown);
    const poor = await postChat(rig.gw, broke.key, chat('hi'));
    assert.equal(poor.status, 402);
    ids.noCredit = requestId(poor);
    for (let i = 0; i < 2; i++) assert.equal((await postChat(rig.gw, `tg-${'x'.repeat(43)}`, chat('hi'))).status, 401);
    // Every request that named a valid key is on record.
    assert.ok(await waitFor(async () => (await apiRows()).some((r) => r.request_id === ids.noCredit), 5000), 'the refused request has its row');
  });

  async function signIn(label: string): Promise<{ watched: WatchedPage; page: Page }> {
    const watched = await watchPage(rig.browser, label);
    return { watched, page: await rig.signIn(watched.page, undefined, '[data-nav=keys]') };
  }

  /** The request ids the usage table shows, once the filter's answer has arrived. */
  async function filterBy(page: Page, status: string, code = ''): Promise<string[]> {
    await page.selectOption('select[name=status]', status);
    if (status === 'code') await page.fill('input[name=code]', code);
    const sent = status === 'code' ? code : status;
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().includes('/admin/v1/usage?') && (sent ? r.url().includes(`status=${sent}`) : !r.url().includes('status='))),
      page.click('.filters button[type=submit]'),
    ]);
    assert.equal(response.status(), 200, `status=${sent}: ${await response.text()}`);
    const expected: Json[] = (await response.json()).data;
    await page.locator(`[data-page-rows="${expected.length}"]`).waitFor();
    return page.locator('table.usage tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-request')!));
  }

  test('the usage page filters by status: successful, errors, 4xx, 5xx, or one code', async () => {
    const { watched, page } = await signIn('records-filter');
    await page.click('[data-nav=usage]');
    await page.locator('table.usage tbody tr').first().waitFor();
    const all = await apiRows();
    const idsWhere = (test: (status: number) => boolean) => all.filter((r) => test(r.status)).map((r) => r.request_id as string);

    const successful = await filterBy(page, '2xx');
    assert.deepEqual(successful, idsWhere((s) => s < 300));
    assert.deepEqual([...successful].sort(), [...ids.ok].sort(), 'the three calls that worked');
    const errors = await filterBy(page, 'error');
    assert.deepEqual(errors, idsWhere((s) => s >= 400));
    assert.deepEqual([...errors].sort(), [ids.upstreamFailed, ids.unknownModel, ids.noCredit].sort(), 'every failure, refusals included');
    assert.deepEqual((await filterBy(page, '4xx')).sort(), [ids.unknownModel, ids.noCredit].sort());
    assert.deepEqual(await filterBy(page, '5xx'), [ids.upstreamFailed]);
    assert.deepEqual(await filterBy(page, 'code', '402'), [ids.noCredit]);
    await page.locator('[data-figure=matching-errors][data-value="1"]').waitFor();
    assert.equal(await page.locator('[data-figure=matching-requests]').getAttribute('data-value'), '1', 'the totals follow the filter');
    await watched.shot('filtered-402');
    assert.deepEqual(await filterBy(page, ''), all.map((r) => r.request_id));

    // A code that is not one: the API's message.
    watched.expect(400, /\/admin\/v1\/usage/);
    await page.selectOption('select[name=status]', 'code');
    await page.fill('input[name=code]', '99');
    await page.click('.filters button[type=submit]');
    assert.match((await page.getByRole('alert').first().textContent())!, /status/);
    watched.assertClean();
  });

  test('a usage row opens the request’s own page: outcome, error, timings, tokens and each attempt', async () => {
    const { watched, page } = await signIn('records-detail');
    await page.click('[data-nav=usage]');
    // Each kind of outcome, with the fields that make it worth a page of its own (none of them "—").
    const expectations: Array<[string, (row: Json) => void]> = [
      [
        ids.upstreamFailed,
        (row) => assert.ok(row.endpoint === 'chat' && row.error_code && row.error_message && row.duration_ms !== null && row.attempts.length >= 1, 'a failed call: its error, latency and attempts'),
      ],
      [ids.ok[0]!, (row) => assert.ok(row.cost > 0 && row.duration_ms !== null && row.attempts.length === 1, 'a call that worked: its cost, latency and one attempt')],
      [ids.noCredit, (row) => assert.ok(row.status === 402 && row.error_code && row.attempts.length === 0 && row.provider === null, 'refused before an upstream was chosen')],
    ];
    for (const [id, check] of expectations) {
      const row = await apiRow(id);
      check(row);
      await page.locator(`tr[data-request="${id}"]`).click();
      await page.waitForURL(`**/dashboard/#/usage/${id}`);
      await assertDetail(page, row, row.key_id === key.id ? 'records' : 'no-credit');
      await watched.shot(`request-${row.status}`);
      await page.goBack();
      await page.locator(`tr[data-request="${id}"]`).waitFor();
    }
    watched.assertClean();
  });

  test('a request’s page opens from a link, and says so when no request has that id', async () => {
    const { watched, page } = await signIn('records-link');
    const row = await apiRow(ids.upstreamFailed);
    await page.goto(`${rig.gw.origin}/dashboard/#/usage/${encodeURIComponent(ids.upstreamFailed)}`);
    await assertDetail(page, row, 'records');
    assert.ok(
      watched.requests().some((r) => r.url.includes(`/admin/v1/usage?request_id=${encodeURIComponent(ids.upstreamFailed)}`)),
      'the row was asked for by its id',
    );
    await page.goto(`${rig.gw.origin}/dashboard/#/usage/req_nobody_made_this`);
    await page.getByRole('alert').filter({ hasText: 'No request has the id “req_nobody_made_this”' }).waitFor();
    await watched.shot('request-unknown');
    watched.assertClean();
  });

  test('a key’s own page shows the key, its ledger page by page, and its recent requests', async () => {
    const { watched, page } = await signIn('records-key');
    await page.click('[data-nav=keys]');
    await page.locator(`tr[data-key="${key.id}"] [data-key-link]`).click();
    await page.waitForURL(`**/dashboard/#/keys/${key.id}`);
    await page.locator(`[data-key-page="${key.id}"]`).waitFor();
    const info: Json = await admin(`/keys/${key.id}`);
    for (const figure of ['balance', 'held', 'available'] as const) {
      assert.equal(Number(await page.locator(`[data-figure=${figure}]`).getAttribute('data-usd')), info[figure], `${figure} is the API's`);
    }
    const charged = (await apiRows(`&key_id=${key.id}`)).reduce((n, r) => n + usdToNano(r.cost), 0);
    assert.ok(charged > 0);
    await page.locator('[data-figure=spent]').waitFor();
    assert.equal(usdToNano(Number(await page.locator('[data-figure=spent]').getAttribute('data-usd'))), charged, 'spent: what its requests were charged');
    assert.equal(usdToNano(info.balance), usdToNano(1) - charged, 'which is what left the balance');
    assert.equal((await page.locator('[data-field=limits]').textContent())!.trim(), 'none');
    assert.equal((await page.locator('[data-field=models]').textContent())!.trim(), 'all');

    // The ledger, newest first, page by page, exactly as the API lists it.
    const first: Json = await admin(`/keys/${key.id}/ledger?limit=20`);
    const entryIds = () => page.locator('table.ledger tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-entry')!));
    assert.deepEqual(await entryIds(), first.data.map((e: Json) => String(e.id)));
    const kinds = await page.locator('table.ledger tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-kind')));
    assert.ok(kinds.includes('capture') && kinds.includes('hold'), 'each request’s hold and charge');
    const charge = page.locator('table.ledger tr[data-kind=capture]').first();
    const chargeRequest = (await charge.locator('a').textContent())!;
    assert.ok([...ids.ok, ids.upstreamFailed].includes(chargeRequest), 'a charge names its request');
    await watched.shot('key-page');

    // One more entry than a page holds: a top-up per missing entry, then "Next" shows the rest.
    const missing = Math.max(0, 21 - (await admin(`/keys/${key.id}/ledger?limit=100`)).data.length);
    for (let i = 0; i < missing; i++) {
      const res = await call(rig.gw, 'POST', `//admin/v1/keys/${key.id}/topup`, { key: ADMIN_TOKEN, body: { amount: 0.01, note: `top-up ${i}` } });
      assert.equal(res.status, 200);
    }
    await page.reload();
    await page.locator('table.ledger tbody tr').first().waitFor();
    const newest: Json = await admin(`/keys/${key.id}/ledger?limit=20`);
    assert.ok(newest.has_more);
    assert.deepEqual(await entryIds(), newest.data.map((e: Json) => String(e.id)));
    assert.equal(await page.locator('table.ledger tbody tr').first().getAttribute('data-kind'), 'topup', 'newest first');
    assert.match((await page.locator('table.ledger tbody tr').first().textContent())!, /Top-up\+\$0\.01.*top-up/);
    await page.locator('.pager button', { hasText: 'Next' }).first().click();
    const second: Json = await admin(`/keys/${key.id}/ledger?limit=20&after=${encodeURIComponent(newest.next_cursor)}`);
    const entries = page.locator('table.ledger tbody tr');
    assert.ok(await waitFor(async () => (await entries.count()) === second.data.length, 5000), 'the second page replaces the first');
    assert.deepEqual(await entryIds(), second.data.map((e: Json) => String(e.id)));

    // Its recent requests, each opening its own page.
    const recent = await page.locator('table.usage tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-request')!));
    assert.deepEqual(recent, (await apiRows(`&key_id=${key.id}`)).slice(0, 10).map((r) => r.request_id));
    await page.locator(`table.usage tr[data-request="${ids.ok[1]}"] a`).click();
    await page.waitForURL(`**/dashboard/#/usage/${ids.ok[1]}`);
    await page.locator(`[data-request-detail="${ids.ok[1]}"]`).waitFor();

    // "All requests of this key": the usage page, filtered to it.
    await page.goBack();
    await page.locator('[data-all-requests]').click();
    await page.locator('table.usage tbody tr').first().waitFor();
    // The key filter shows the key once the key list behind its options has loaded (after the rows, at times).
    const filter = page.locator('select[name=key_id]');
    assert.ok(await waitFor(async () => (await filter.inputValue()) === key.id, 5000), `the key filter names the key (${await filter.inputValue()})`);
    await page.locator(`[data-page-rows="${(await apiRows(`&key_id=${key.id}`)).length}"]`).waitFor();

    // A key that does not exist: the API's message.
    watched.expect(404, /\/admin\/v1\/keys\/key_nobody/);
    await page.goto(`${rig.gw.origin}/dashboard/#/keys/key_nobody`);
    await page.getByRole('alert').waitFor();
    watched.assertClean();
  });

  test('the overview counts requests refused for a bad key beside the error rate', async () => {
    const { watched, page } = await signIn('records-overview');
    const figure = page.locator('[data-figure=unauthenticated]');
    await figure.waitFor();
    const since = new Date(Date.now() - 24 * 3600_000).toISOString();
    const api: Json = await admin(`/usage/unauthenticated?group_by=hour&since=${encodeURIComponent(since)}`);
    const refused = api.data.reduce((n: number, b: Json) => n + b.requests, 0);
    assert.equal(refused, 2, 'the two calls with a key that does not exist');
    assert.equal(await figure.getAttribute('data-value'), '2');
    // Refusals are requests too: 3 of 6 failed.
    assert.equal(await page.locator('[data-figure=error-rate]').getAttribute('data-value'), '50');
    await watched.shot('overview');
    watched.assertClean();
  });
});

/** The request page shows every field of the API's row; absent ones read "—". */
async function assertDetail(page: Page, row: Json, keyName: string): Promise<void> {
  await page.locator(`[data-request-detail="${row.request_id}"]`).waitFor();
  const field = async (name: string) => (await page.locator(`[data-field=${name}]`).textContent())!.trim();
  const dash = (v: unknown) => (v === null || v === undefined || v === '' ? '—' : String(v));
  const msText = (v: number | null | undefined) => (v === null || v === undefined ? '—' : `${v.toLocaleString('en-US')} ms`);
  assert.match(await page.locator('h2').textContent() ?? '', new RegExp(row.request_id));
  assert.equal(await field('status'), String(row.status));
  assert.equal(await field('model'), dash(row.model));
  assert.equal(await field('endpoint'), dash(row.endpoint));
  assert.equal(await field('error_code'), dash(row.error_code));
  assert.equal(await field('error_message'), dash(row.error_message));
  assert.equal(await field('duration'), msText(row.duration_ms));
  assert.equal(await field('first_token'), msText(row.first_token_ms));
  assert.ok((await field('key')).startsWith(keyName), 'the key by name');
  assert.equal(usdToNano(Number(await page.locator('[data-field=cost] [data-usd]').getAttribute('data-usd'))), usdToNano(row.cost));
  assert.ok((await field('upstream')).startsWith(dash(row.provider)));
  for (const [cell, value] of [['input', row.input_tokens], ['cached_input', row.cached_input_tokens], ['output', row.output_tokens], ['reasoning', row.reasoning_tokens]]) {
    assert.equal((await page.locator(`[data-tokens=${cell}]`).textContent())!.trim(), value.toLocaleString('en-US'), `${cell} tokens`);
  }
  const attempts = page.locator('table.attempts tbody tr');
  assert.equal(await attempts.count(), row.attempts.length, 'one line per attempt');
  for (const [i, attempt] of (row.attempts as Json[]).entries()) {
    const cells = (await attempts.nth(i).locator('td').allTextContents()).map((t) => t.trim());
    assert.deepEqual(cells, [String(i + 1), attempt.provider, String(attempt.status), msText(attempt.duration_ms)]);
  }
  if (row.attempts.length === 0) await page.locator('[data-attempts="0"]').waitFor();
}

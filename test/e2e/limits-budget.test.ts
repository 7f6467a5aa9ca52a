// Budgets and key lifetime end to end (product.md §8): a spend cap per period enforced by the same atomic
// admission as the balance — 500 concurrent requests on a key whose daily budget covers exactly 40 holds
// admit exactly 40 —, a new UTC day starting clean (the gateway's clock moved across midnight), keys that
// expire, and `keys set-limits`. Every refusal: no hold, no charge, no upstream call.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI, { APIError } from 'openai';
import { assertErrorResponse, call, costOf, parseJsonOutput, postChat, type Json } from '../support/e2e.js';
import { fakeClock, type FakeClock } from '../support/fake-clock.js';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { chatChunks, makeUsage, sseFromChunks, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { chatCostNano, nanoToUsdString, usdToNano } from '../support/money.js';
import { ledgerTotals } from '../support/resilience.js';

const BODY = { model: 'gpt-test', messages: [{ role: 'user', content: 'Budget me' }], max_tokens: 50 };
const USAGE = { prompt: 9, completion: 20 };

describe('budgets', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  let clock: FakeClock;
  let hold: number;

  before(async () => {
    mock = await startMockUpstream();
    clock = fakeClock();
    gw = await startGateway({ config: mockConfig(mock), env: clock.env });
    const probe = await gw.createKey({ name: 'probe', balance: 0 });
    const refused = await postChat(gw, probe.key, BODY);
    hold = usdToNano(assertErrorResponse(refused, 402, 'insufficient_balance').metadata.hold);
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
    clock?.remove();
  });
  beforeEach(() => mock.reset());

  async function keyWithBudget(name: string, budgetNano: number, balanceUsd = 100): Promise<{ id: string; key: string }> {
    const result = await gw.cli(['keys', 'create', '--name', name, '--balance', String(balanceUsd), '--budget', nanoToUsdString(budgetNano), '--budget-period', 'day', '--json']);
    const created = parseJsonOutput<Json>(result, 'keys create');
    assert.deepEqual(created.limits, { rpm: null, tpm: null, max_concurrent: null, budget: Number(nanoToUsdString(budgetNano)), budget_period: 'day' });
    assert.equal(created.budget_used, 0);
    return created;
  }

  test('500 concurrent requests on a key whose daily budget covers exactly 40 holds: exactly 40 admitted, spend within the budget', { timeout: 90_000 }, async () => {
    const COVERED = 40;
    const TOTAL = 500;
    const key = await keyWithBudget('contended-budget', COVERED * hold);
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    mock.handle(async () => {
      await gate;
      return sseFromChunks(chatChunks({ content: 'one two three', usage: makeUsage(USAGE.prompt, USAGE.completion) }));
    });
    const client = new OpenAI({ apiKey: key.key, baseURL: gw.baseURL, maxRetries: 0, timeout: 60_000 });
    const refusals: Json[] = [];
    let other = 0;
    const outcomes = Array.from({ length: TOTAL }, async () => {
      try {
        const stream = await client.chat.completions.create({ ...BODY, messages: [{ role: 'user', content: 'Budget me' }], stream: true });
        let cost: number | undefined;
        for await (const chunk of stream) if (chunk.usage) cost = costOf(chunk.usage);
        return cost;
      } catch (error) {
        if (error instanceof APIError && error.status === 402) refusals.push(error.error);
        else other += 1;
        return undefined;
      }
    });
    try {
      const deadline = Date.now() + 60_000;
      while (mock.requests.length + refusals.length + other < TOTAL && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(other, 0, 'nothing failed other than with 402');
      assert.equal(mock.requests.length, COVERED, 'exactly the 40 holds the budget covers were admitted');
      assert.equal(refusals.length, TOTAL - COVERED);
      for (const error of refusals) {
        assert.equal(error.code, 'budget_exceeded');
        assert.deepEqual(Object.keys(error.metadata).sort(), ['budget', 'resets_at', 'used']);
        assert.equal(usdToNano(error.metadata.budget), COVERED * hold);
        assert.ok(usdToNano(error.metadata.used) + hold > COVERED * hold, 'used + this hold would exceed the budget');
        assert.ok(usdToNano(error.metadata.used) <= COVERED * hold, 'used never above the budget');
        assert.match(error.metadata.resets_at, /T00:00:00\.000Z$/, 'resets at the next UTC midnight');
      }
    } finally {
      openGate();
    }
    const costs = (await Promise.all(outcomes)).filter((c) => c !== undefined);
    assert.equal(costs.length, COVERED);
    const totals = ledgerTotals(gw, key.id);
    assert.equal(totals.captureCount, COVERED);
    assert.equal(totals.holdRows, COVERED, 'the refused requests left no hold');
    assert.ok(totals.captures <= COVERED * hold, 'spend within the budget');
    assert.equal(totals.captures, COVERED * chatCostNano(USAGE.prompt, USAGE.completion));
    const shown = parseJsonOutput<Json>(await gw.cli(['keys', 'show', key.id, '--json']), 'keys show');
    assert.equal(usdToNano(shown.budget_used), totals.captures, 'budget_used: the captures of the day, nothing held');
  });

  test('the budget is available again once the UTC day changes', { timeout: 30_000 }, async () => {
    const beforeMidnight = Date.UTC(2031, 4, 6, 23, 59, 0);
    await clock.set(beforeMidnight);
    const key = await keyWithBudget('daily', 2 * hold);
    assert.equal(assertOk(await postChat(gw, key.key, BODY)), 200);
    assert.equal(assertOk(await postChat(gw, key.key, BODY)), 200, 'the second one still fits: the first settled for less than its hold');
    let day1Spent = 2 * chatCostNano(11, 7);
    // Spend until the budget refuses.
    let refused: Json | undefined;
    for (let i = 0; i < 200 && !refused; i++) {
      const res = await postChat(gw, key.key, BODY);
      if (res.status === 200) day1Spent += usdToNano(res.json.usage.cost);
      else refused = assertErrorResponse(res, 402, 'budget_exceeded');
    }
    assert.ok(refused, 'the budget ran out on day one');
    assert.equal(refused.metadata.resets_at, '2031-05-07T00:00:00.000Z');
    assert.equal(usdToNano(refused.metadata.used), day1Spent);
    const callsBefore = mock.requests.length;

    await clock.set(Date.UTC(2031, 4, 7, 0, 0, 1));
    const res = await postChat(gw, key.key, BODY);
    assert.equal(res.status, 200, `a new day starts clean: ${res.text}`);
    assert.equal(mock.requests.length, callsBefore + 1);
    const shown = parseJsonOutput<Json>(await gw.cli(['keys', 'show', key.id, '--json']), 'keys show');
    assert.equal(usdToNano(shown.budget_used), usdToNano(res.json.usage.cost), "only today's spend counts");
    assert.equal(shown.budget_resets_at, '2031-05-08T00:00:00.000Z');
    await clock.set(Date.now());
  });

  test('a refused request (budget) leaves no hold, no charge, and reaches no upstream', async () => {
    const key = await keyWithBudget('tiny', hold - 1);
    const before = ledgerTotals(gw, key.id);
    const res = await postChat(gw, key.key, BODY);
    assertErrorResponse(res, 402, 'budget_exceeded');
    assert.equal(mock.requests.length, 0);
    assert.deepEqual(ledgerTotals(gw, key.id), before);
  });
});

function assertOk(res: { status: number; text: string }): number {
  assert.equal(res.status, 200, res.text);
  return res.status;
}

describe('key lifetime and set-limits', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;

  before(async () => {
    mock = await startMockUpstream();
    gw = await startGateway({ config: mockConfig(mock) });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });

  test('a key created with --expires 2s works, then answers 401 with the same body as an unknown key', { timeout: 30_000 }, async () => {
    const created = parseJsonOutput<Json>(await gw.cli(['keys', 'create', '--name', 'short-lived', '--balance', '1', '--expires', '2s', '--json']), 'keys create');
    const expiresAt = Date.parse(created.expires_at);
    assert.ok(expiresAt > Date.now() && expiresAt <= Date.now() + 2_500, `expires_at ${created.expires_at}`);
    assert.equal((await postChat(gw, created.key, BODY)).status, 200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now()) + 100));
    const expired = await postChat(gw, created.key, BODY);
    const unknown = await postChat(gw, `tg-${'A'.repeat(43)}`, BODY);
    assertErrorResponse(expired, 401, 'invalid_api_key');
    assert.equal(expired.text, unknown.text, 'the same body as any bad key');
    const models = await call(gw, 'GET', '/models', { key: created.key });
    assert.equal(models.status, 401);
    assert.equal(mock.requests.length, 1, 'the expired key reached no upstream');
    const list = parseJsonOutput<Json[]>(await gw.cli(['keys', 'list', '--json']), 'keys list');
    assert.equal(list.find((k) => k.id === created.id).expires_at, created.expires_at);
  });

  test('set-limits changes one field, `none` clears it, and bad values are one clear line that changes nothing', async () => {
    const key = await gw.createKey({ name: 'adjustable', balance: 1 });
    let shown = parseJsonOutput<Json>(await gw.cli(['keys', 'set-limits', key.id, '--rpm', '30', '--budget', '2.5', '--budget-period', 'week', '--json']), 'set-limits');
    assert.deepEqual(shown.limits, { rpm: 30, tpm: null, max_concurrent: null, budget: 2.5, budget_period: 'week' });
    shown = parseJsonOutput<Json>(await gw.cli(['keys', 'set-limits', key.id, '--rpm', 'none', '--expires', '2031-01-01T00:00:00Z', '--json']), 'set-limits');
    assert.deepEqual(shown.limits, { rpm: null, tpm: null, max_concurrent: null, budget: 2.5, budget_period: 'week' });
    assert.equal(shown.expires_at, '2031-01-01T00:00:00.000Z');
    for (const [flag, value] of [
      ['--rpm', '0'],
      ['--tpm', '-5'],
      ['--budget', 'lots'],
      ['--budget-period', 'fortnight'],
      ['--expires', '2001-01-01'],
      ['--expires', 'soon'],
    ] as const) {
      const result = await gw.cli(['keys', 'set-limits', key.id, flag, value]);
      assert.equal(result.code, 1, `${flag} ${value} is refused`);
      assert.equal(result.stderr.trim().split('\n').length, 1, `one line: ${result.stderr}`);
      assert.match(result.stderr, /^tollgate: Invalid '/);
    }
    const unchanged = parseJsonOutput<Json>(await gw.cli(['keys', 'show', key.id, '--json']), 'keys show');
    assert.deepEqual(unchanged.limits, shown.limits);
    assert.equal(unchanged.expires_at, shown.expires_at);
    const missing = await gw.cli(['keys', 'set-limits', 'key_nope', '--rpm', '5']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /No key with id key_nope/);
  });
});

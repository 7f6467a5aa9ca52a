// Per-key rate limits end to end on one gateway (in-process counters): rpm, tpm (the hold's estimate at
// admission, corrected to the real usage at settlement) and max_concurrent answer 429 rate_limited with
// Retry-After and error.metadata; OpenAI's x-ratelimit-* headers on every answer; and every refusal —
// 429, or a 402 after the limiter admitted — leaves no hold, no charge, no upstream call, and counts
// for nothing against the limits.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { assertChatOk, assertErrorResponse, call, parseJsonOutput, postChat, waitFor, type Json, type RawResponse } from '../support/e2e.js';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { chatCompletion, makeUsage, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { chatCostNano } from '../support/money.js';
import { ledgerTotals, sleep } from '../support/resilience.js';

const BODY = { model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 100 };
/** What the mock reports for BODY: 11 prompt + 7 completion tokens. */
const USED = 11 + 7;

async function createKey(gw: GatewayProcess, name: string, flags: string[], balance = 10): Promise<{ id: string; key: string }> {
  return parseJsonOutput<Json>(await gw.cli(['keys', 'create', '--name', name, '--balance', String(balance), ...flags, '--json']), 'keys create');
}

/** The 429 rate_limited answer: envelope, Retry-After ≥ 1 (whole seconds) and metadata {limit, retry_after_ms}. */
function assertRateLimited(res: RawResponse, limit: string): Json {
  const error = assertErrorResponse(res, 429, 'rate_limited');
  assert.equal(error.type, 'rate_limit_error');
  assert.deepEqual(Object.keys(error.metadata).sort(), ['limit', 'retry_after_ms']);
  assert.equal(error.metadata.limit, limit);
  const retryAfter = res.headers.get('retry-after');
  assert.match(retryAfter ?? '', /^\d+$/, 'Retry-After is whole seconds');
  assert.ok(Number(retryAfter) >= 1);
  assert.equal(Number(retryAfter), Math.max(1, Math.ceil(error.metadata.retry_after_ms / 1000)));
  return error;
}

function assertHeaders(res: RawResponse, kind: 'requests' | 'tokens', limit: number): { remaining: number; reset: string } {
  assert.equal(res.headers.get(`x-ratelimit-limit-${kind}`), String(limit), `x-ratelimit-limit-${kind} on ${res.status}`);
  const remaining = Number(res.headers.get(`x-ratelimit-remaining-${kind}`));
  assert.ok(Number.isInteger(remaining) && remaining >= 0 && remaining <= limit);
  const reset = res.headers.get(`x-ratelimit-reset-${kind}`) ?? '';
  assert.match(reset, /^(\d+ms|\d+(\.\d)?s|\d+m\d+s)$/, `x-ratelimit-reset-${kind} like OpenAI's: ${reset}`);
  return { remaining, reset };
}

describe('rate limits on one gateway', () => {
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
  beforeEach(() => mock.reset());

  test('rpm 10 and tpm: bursts admit exactly what fits, the rest 429 with Retry-After; after the window both admit again', { timeout: 120_000 }, async () => {
    const rpmKey = await createKey(gw, 'rpm-10', ['--rpm', '10']);
    const burst = await Promise.all(Array.from({ length: 30 }, () => postChat(gw, rpmKey.key, BODY)));
    const ok = burst.filter((r) => r.status === 200);
    const limited = burst.filter((r) => r.status === 429);
    assert.equal(ok.length, 10, 'exactly 10 admitted');
    assert.equal(limited.length, 20);
    for (const res of ok) assertChatOk(res, 'gpt-test');
    for (const res of limited) {
      const error = assertRateLimited(res, 'rpm');
      assert.ok(error.metadata.retry_after_ms > 50_000 && error.metadata.retry_after_ms <= 60_000, `retry after the window: ${error.metadata.retry_after_ms}`);
      assertHeaders(res, 'requests', 10);
    }
    assert.equal(mock.requests.length, 10, 'the refused requests reached no upstream');
    const totals = ledgerTotals(gw, rpmKey.id);
    assert.equal(totals.holdRows, 10, 'the refused requests left no hold');
    assert.equal(totals.captures, 10 * chatCostNano(11, 7));

    // tpm: the estimate counts at admission. Three concurrent calls whose estimates fill the window.
    const probe = await createKey(gw, 'tpm-probe', ['--tpm', '1000000']);
    const first = await postChat(gw, probe.key, BODY);
    const estimate = 1_000_000 - assertHeaders(first, 'tokens', 1_000_000).remaining;
    assert.ok(estimate > 100, `the estimate counts max_tokens: ${estimate}`);
    const tpmKey = await createKey(gw, 'tpm', ['--tpm', String(3 * estimate)]);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    mock.handle(async () => {
      await gate;
      return { json: chatCompletion({ usage: makeUsage(11, 7) }) };
    });
    const callsBefore = mock.requests.length;
    let answered = 0;
    const pending = Array.from({ length: 8 }, () => postChat(gw, tpmKey.key, BODY).finally(() => (answered += 1)));
    // The five that do not fit are answered at once; the three that fit wait upstream at the gate.
    const settled = await waitFor(async () => answered === 5 && mock.requests.length - callsBefore === 3, 15_000, 20);
    assert.ok(settled, `five answered (${answered}) while three wait upstream (${mock.requests.length - callsBefore})`);
    assert.equal(mock.requests.length - callsBefore, 3, 'three estimates fit the tokens per minute');
    release();
    const tpmResults = await Promise.all(pending);
    assert.equal(tpmResults.filter((r) => r.status === 200).length, 3);
    for (const res of tpmResults.filter((r) => r.status === 429)) assertRateLimited(res, 'tpm');
    mock.handle(null);
    // Settled: each now counts its real 18 tokens, not its estimate — the difference is given back.
    const after = await call(gw, 'GET', '/models', { key: tpmKey.key });
    assert.equal(assertHeaders(after, 'tokens', 3 * estimate).remaining, 3 * estimate - 3 * USED, 'corrected to the real usage at settlement');
    assert.equal((await postChat(gw, tpmKey.key, BODY)).status, 200, 'so another request fits at once');

    const alone = await postChat(gw, tpmKey.key, { ...BODY, max_tokens: 1000 });
    const neverFits = assertRateLimited(alone, 'tpm');
    assert.match(neverFits.message, /alone/, 'a request whose estimate exceeds tpm by itself says so');

    // After the window, rpm admits again.
    const wait = Math.max(...limited.map((r) => Number(r.headers.get('retry-after'))));
    await sleep(wait * 1000 + 500);
    const again = await postChat(gw, rpmKey.key, BODY);
    assert.equal(again.status, 200, `admitted again after the window: ${again.text}`);
  });

  test('max_concurrent 2 with a slow upstream: 2 in flight, the others 429; once they finish, admitted again', async () => {
    const key = await createKey(gw, 'concurrent', ['--max-concurrent', '2']);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    mock.handle(async () => {
      await gate;
      return { json: chatCompletion({ usage: makeUsage(11, 7) }) };
    });
    let answered = 0;
    const pending = Array.from({ length: 6 }, () => postChat(gw, key.key, BODY).finally(() => (answered += 1)));
    const settled = await waitFor(async () => answered === 4 && mock.requests.length === 2, 15_000, 20);
    assert.ok(settled, `four answered (${answered}) while two wait upstream (${mock.requests.length})`);
    assert.equal(mock.requests.length, 2);
    release();
    const results = await Promise.all(pending);
    assert.equal(results.filter((r) => r.status === 200).length, 2);
    const refused = results.filter((r) => r.status === 429);
    assert.equal(refused.length, 4);
    for (const res of refused) {
      const error = assertRateLimited(res, 'max_concurrent');
      assert.equal(res.headers.get('retry-after'), '1');
      assert.equal(error.metadata.retry_after_ms, 1000);
    }
    mock.handle(null);
    assert.equal((await postChat(gw, key.key, BODY)).status, 200, 'the slots were freed');
    assert.equal(ledgerTotals(gw, key.id).holdRows, 3);
  });

  test('the x-ratelimit headers are on every answer to a limited key: 200, stream, 402, 404, GET /v1/models and /v1/key', async () => {
    const key = await createKey(gw, 'headers', ['--rpm', '100', '--tpm', '100000']);
    const ok = await postChat(gw, key.key, BODY);
    assert.equal(ok.status, 200);
    assert.equal(assertHeaders(ok, 'requests', 100).remaining, 99);
    assertHeaders(ok, 'tokens', 100_000);
    const stream = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...BODY, stream: true }),
    });
    await stream.text();
    assert.equal(stream.headers.get('x-ratelimit-limit-requests'), '100', 'a stream carries them too');
    assert.equal(stream.headers.get('x-ratelimit-remaining-requests'), '98');
    const unknownModel = await postChat(gw, key.key, { ...BODY, model: 'nope' });
    assertErrorResponse(unknownModel, 404, 'model_not_found');
    assertHeaders(unknownModel, 'requests', 100);
    for (const path of ['/models', '/key']) {
      const res = await call(gw, 'GET', path, { key: key.key });
      assert.equal(res.status, 200);
      assert.equal(assertHeaders(res, 'requests', 100).remaining, 98, `${path} reads the state without counting`);
    }
    const plain = await createKey(gw, 'no-limits', []);
    const unlimited = await postChat(gw, plain.key, BODY);
    assert.equal(unlimited.headers.get('x-ratelimit-limit-requests'), null, 'a key without limits gets none');
  });

  test('a request the ledger refuses (402) counts for nothing against the rate limits', async () => {
    const key = await createKey(gw, 'broke-limited', ['--rpm', '2'], 0);
    for (let i = 0; i < 5; i++) {
      const res = await postChat(gw, key.key, BODY);
      assertErrorResponse(res, 402, 'insufficient_balance');
      assert.equal(assertHeaders(res, 'requests', 2).remaining, 1, 'admitted by the limiter, then given back');
    }
    await gw.cli(['keys', 'topup', key.id, '1']);
    assert.equal((await postChat(gw, key.key, BODY)).status, 200);
    assert.equal((await postChat(gw, key.key, BODY)).status, 200);
    assertRateLimited(await postChat(gw, key.key, BODY), 'rpm');
    assert.equal(mock.requests.length, 2);
    assert.equal(ledgerTotals(gw, key.id).holdRows, 2);
  });
});

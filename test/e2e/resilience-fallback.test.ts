// Resilience, fallback: a model served by two upstream accounts A and B (`routing: fallback`, two mock
// upstreams). A retryable failure of A before the first byte (500, 429, a TCP reset before the headers, a
// first-byte timeout) is retried on A (`retries: 1`), then the request moves to B; every attempt shares one
// hold and only B's answer is charged. A non-retryable answer (400, 401, 403, 404, 422) is neither retried nor
// sent to B. Ends with the issue's "Done when" load: 300 requests, A failing in turn, B healthy.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { assertChatOk, assertErrorResponse, costOf, finalUsageChunk, postChat, streamedText, waitFor, type Json } from '../support/e2e.js';
import { startGateway, stopGateway, type CreatedKey, type GatewayProcess } from '../support/gateway-process.js';
import { DEFAULT_TEXT, errorReply, resetSocket, stall, startMockUpstream, type MockHandler, type MockUpstream, type ReplySource } from '../support/mock-upstream.js';
import { chatCostNano, usdToNano } from '../support/money.js';
import {
  NO_COOLDOWN,
  assertLedgerExact,
  attemptsOf,
  costNanoOf,
  hello,
  pool,
  postStream,
  requestEntries,
  resilienceConfig,
  usageById,
} from '../support/resilience.js';

const FIRST_BYTE_MS = 400;
/** Default mock usage for one message: 11 prompt + 7 completion tokens. */
const CHARGE = chatCostNano(11, 7);
const BALANCE_USD = 50;

interface Fault {
  name: string;
  source: () => ReplySource;
  /** The status the gateway records for A's attempt. */
  attemptStatus: number;
}

const FAULTS: Fault[] = [
  { name: 'HTTP 500', source: () => errorReply(500, 'The server had an error while processing your request.'), attemptStatus: 500 },
  { name: 'HTTP 429', source: () => errorReply(429, 'Rate limit reached for requests.'), attemptStatus: 429 },
  { name: 'a TCP reset before the headers', source: () => resetSocket(), attemptStatus: 502 },
  { name: `a first-byte timeout (stall, first_byte_ms ${FIRST_BYTE_MS})`, source: () => stall(), attemptStatus: 504 },
];

describe('fallback from upstream A to upstream B', () => {
  let a: MockUpstream;
  let b: MockUpstream;
  let gw: GatewayProcess;
  let key: CreatedKey;

  before(async () => {
    a = await startMockUpstream();
    b = await startMockUpstream();
    gw = await startGateway({
      config: resilienceConfig({
        providers: {
          a: { url: a.url, extra: ['retries: 1', NO_COOLDOWN, `timeouts: { connect_ms: 2000, first_byte_ms: ${FIRST_BYTE_MS}, idle_ms: 5000, total_ms: 30000 }`] },
          b: { url: b.url, extra: [NO_COOLDOWN] },
        },
        models: { 'fb-model': { upstreams: [{ provider: 'a' }, { provider: 'b' }] } },
      }),
    });
    key = await gw.createKey({ name: 'fallback', balance: BALANCE_USD });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    if (gw) await stopGateway(gw, 10_000);
  });
  beforeEach(() => {
    a.reset();
    b.reset();
  });

  /** The ledger trail of one successful request: one hold, released, one capture of exactly `charge`. */
  function assertChargedOnce(requestId: string, charge: number): void {
    const entries = requestEntries(gw, requestId);
    assert.deepEqual(
      entries.map((e) => e.kind),
      ['hold', 'release', 'capture'],
      'one hold, released once, one capture',
    );
    assert.equal(entries[2]!.amount, charge, 'the capture is B’s usage price');
  }

  for (const fault of FAULTS) {
    for (const stream of [false, true]) {
      test(`A fails with ${fault.name} (${stream ? 'stream' : 'non-stream'}): retried once on A, then served by B, charged once at B’s usage price`, async () => {
        a.handle(fault.source());
        let requestId: string;
        let cost: number;
        if (stream) {
          const read = await postStream(gw, key.key, { model: 'fb-model', messages: hello });
          assert.equal(read.status, 200, read.text);
          assert.equal(read.error, undefined, 'no error event');
          assert.equal(streamedText(read.chunks), DEFAULT_TEXT);
          assert.equal(read.chunks.filter((c: Json) => c.choices[0]?.delta?.role === 'assistant').length, 1, 'one role chunk: nothing of A’s attempts leaked');
          cost = costOf(finalUsageChunk(read.chunks, 'fb-model').usage);
          requestId = read.requestId;
        } else {
          const res = await postChat(gw, key.key, { model: 'fb-model', messages: hello });
          cost = assertChatOk(res, 'fb-model');
          assert.equal(res.json.choices[0].message.content, DEFAULT_TEXT);
          requestId = res.headers.get('x-request-id')!;
        }
        assert.equal(cost, CHARGE, 'usage.cost is B’s usage price');

        assert.equal(a.requests.length, 2, 'A saw the attempt and its one retry');
        assert.equal(b.requests.length, 1, 'B saw one request');
        assert.equal(b.requests[0]!.body.stream === true, stream);
        if (stream) assert.deepEqual(b.requests[0]!.body.stream_options, { include_usage: true });
        if (fault.attemptStatus === 504) {
          for (const r of a.requests) assert.ok(await waitFor(() => r.abortedAt, 2000), 'the gateway hung up on the stalled attempt');
          assert.ok(a.requests[1]!.receivedAt - a.requests[0]!.receivedAt >= FIRST_BYTE_MS - 50, 'the retry came after the first-byte timeout');
        }

        assertChargedOnce(requestId, CHARGE);
        assertLedgerExact(gw, key.id);
        const row = (await usageById(gw, key.id)).get(requestId);
        assert.ok(row, 'a usage row');
        assert.equal(row.provider, 'b');
        assert.equal(row.status, 200);
        assert.equal(row.usage_source, 'upstream');
        assert.equal(costNanoOf(row), CHARGE);
        assert.deepEqual(attemptsOf(row), [`a:${fault.attemptStatus}`, `a:${fault.attemptStatus}`, 'b:200'], 'attempts: A’s failures, then B’s 200');
        if (fault.attemptStatus === 504) assert.ok(row.attempts[0]!.duration_ms >= FIRST_BYTE_MS - 50, `a timed-out attempt lasted ${row.attempts[0]!.duration_ms} ms`);
      });
    }
  }

  test('Anthropic-style 529 (overloaded) and 408 count as retryable too: retried on A, then B answers', async () => {
    for (const status of [529, 408]) {
      a.reset();
      b.reset();
      a.handle(errorReply(status, 'Overloaded'));
      const res = await postChat(gw, key.key, { model: 'fb-model', messages: hello });
      assert.equal(assertChatOk(res, 'fb-model'), CHARGE);
      assert.equal(a.requests.length, 2);
      assert.equal(b.requests.length, 1);
      assertChargedOnce(res.headers.get('x-request-id')!, CHARGE);
      const row = (await usageById(gw, key.id)).get(res.headers.get('x-request-id')!)!;
      assert.deepEqual(attemptsOf(row), [`a:${status}`, `a:${status}`, 'b:200']);
    }
    assertLedgerExact(gw, key.id);
  });

  const NON_RETRYABLE: Array<{ status: number; code?: string; client: number; clientCode: string | RegExp }> = [
    { status: 400, client: 400, clientCode: /.+/ },
    { status: 400, code: 'context_length_exceeded', client: 400, clientCode: 'context_length_exceeded' },
    { status: 401, client: 502, clientCode: 'upstream_auth_failed' },
    { status: 403, client: 502, clientCode: 'upstream_auth_failed' },
    { status: 404, client: 404, clientCode: /.+/ },
    { status: 422, client: 422, clientCode: /.+/ },
  ];
  for (const c of NON_RETRYABLE) {
    test(`an upstream ${c.status}${c.code ? ` ${c.code}` : ''} from A is neither retried nor sent to B; the hold is released, nothing charged`, async () => {
      a.handle(errorReply(c.status, `upstream says ${c.status}`, c.code ? { code: c.code, param: 'messages' } : {}));
      const before = gw.audit(key.id);
      const res = await postChat(gw, key.key, { model: 'fb-model', messages: hello });
      const requestId = res.headers.get('x-request-id')!;
      assertErrorResponse(res, c.client, c.clientCode);
      assert.equal(a.requests.length, 1, 'A was asked once');
      assert.equal(b.requests.length, 0, 'B was never asked');
      assert.deepEqual(
        requestEntries(gw, requestId).map((e) => e.kind),
        ['hold', 'release'],
        'the hold was released; no capture',
      );
      const { audit } = assertLedgerExact(gw, key.id);
      assert.equal(audit.spent, before.spent, 'nothing charged');
      const row = (await usageById(gw, key.id)).get(requestId);
      assert.ok(row, 'a usage row for the failed request');
      assert.equal(row.status, c.client);
      assert.equal(costNanoOf(row), 0);
      assert.deepEqual(attemptsOf(row), [`a:${c.status}`]);
    });
  }

  test('Done when: A failing (500, 429, reset, first-byte timeout in turn) and B healthy — 300 requests (stream and not, 12 at once) all succeed through B: 300 holds, 300 charges, none left active', async () => {
    const fresh = await gw.createKey({ name: 'fallback-300', balance: 5 });
    let n = 0;
    const cycle: MockHandler = (req, res) => {
      const fault = FAULTS[n++ % FAULTS.length]!.source();
      return typeof fault === 'function' ? fault(req, res) : fault;
    };
    a.handle(cycle);
    const TOTAL = 300;
    const outcomes = await pool(TOTAL, 12, async (i) => {
      const body = { model: 'fb-model', messages: [{ role: 'user', content: `request ${i}` }] };
      if (i % 2 === 1) {
        const read = await postStream(gw, fresh.key, body);
        assert.equal(read.status, 200, `request ${i}: ${read.text}`);
        assert.equal(read.error, undefined, `request ${i}: no error event`);
        assert.equal(streamedText(read.chunks), DEFAULT_TEXT);
        return { requestId: read.requestId, cost: costOf(finalUsageChunk(read.chunks, 'fb-model').usage) };
      }
      const res = await postChat(gw, fresh.key, body, { signal: AbortSignal.timeout(30_000) });
      return { requestId: res.headers.get('x-request-id')!, cost: assertChatOk(res, 'fb-model') };
    });
    for (const o of outcomes) assert.equal(o.cost, CHARGE, 'every answer is charged B’s usage price');
    assert.equal(new Set(outcomes.map((o) => o.requestId)).size, TOTAL);

    assert.equal(b.requests.length, TOTAL, 'B served every request once');
    assert.equal(a.requests.length, 2 * TOTAL, 'A was tried twice per request (retries: 1)');

    const { audit, totals } = assertLedgerExact(gw, fresh.id, usdToNano(5));
    assert.equal(totals.holdRows, TOTAL, '300 holds');
    assert.equal(totals.holdEntries, TOTAL);
    assert.equal(totals.captureCount, TOTAL, '300 charges');
    assert.deepEqual(totals.holdsByStatus, { captured: TOTAL }, 'every hold captured, none active');
    assert.equal(totals.captures, TOTAL * CHARGE, 'Σ captures = 300 × B’s price');
    assert.equal(audit.usageRows, TOTAL);

    const rows = await usageById(gw, fresh.id);
    assert.equal(rows.size, TOTAL);
    const statusesSeen = new Set<string>();
    for (const o of outcomes) {
      const row = rows.get(o.requestId);
      assert.ok(row, `usage row for ${o.requestId}`);
      assert.equal(row.provider, 'b');
      assert.equal(row.status, 200);
      assert.equal(costNanoOf(row), CHARGE);
      const attempts = attemptsOf(row);
      assert.equal(attempts.length, 3, `attempts ${attempts.join(', ')}`);
      assert.equal(attempts.at(-1), 'b:200');
      for (const x of attempts.slice(0, -1)) {
        assert.match(x, /^a:(500|429|502|504)$/);
        statusesSeen.add(x);
      }
    }
    assert.deepEqual([...statusesSeen].sort(), ['a:429', 'a:500', 'a:502', 'a:504'], 'every fault was met');
  });
});

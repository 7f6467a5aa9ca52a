// Resilience, crash-safe holds (`billing.hold_ttl_seconds`, `billing.sweep_interval_seconds`): `kill -9` the
// server with 50 streams (and 10 slow non-stream calls) in flight, restart it on the same database, and
// within TTL + sweep interval (+ the restart) every hold is released or settled, with exact conservation:
// initial balance + top-ups == final balance + Σ captures, cached == derived, no active hold.
// TOLLGATE_KILL_RUNS=N repeats the kill scenario N times (a fresh gateway each run; default 1).
//
// Also: a request that lives longer than the TTL keeps its hold — a stream that relays for longer, a stream
// whose first byte comes after the TTL, a slow non-stream call — so it settles normally and its hold keeps
// the balance committed (testing.md invariants 1 and 4).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertChatOk, costOf, finalUsageChunk, postChat, streamedText, waitFor } from '../support/e2e.js';
import { startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { holdOf } from '../support/ledger-check.js';
import { chatChunks, defaultReply, delayed, makeUsage, slowDrip, sseFromChunks, startMockUpstream, type MockHandler, type MockUpstream } from '../support/mock-upstream.js';
import { chatCostNano, usdToNano } from '../support/money.js';
import {
  NO_COOLDOWN,
  assertLedgerExact,
  attemptsOf,
  costNanoOf,
  exitOf,
  hello,
  ledgerTotals,
  postStream,
  requestEntries,
  resilienceConfig,
  sleep,
  usageById,
} from '../support/resilience.js';

const RUNS = Number(process.env.TOLLGATE_KILL_RUNS || '1');
if (!Number.isSafeInteger(RUNS) || RUNS < 1) throw new Error(`TOLLGATE_KILL_RUNS must be a positive integer, got "${process.env.TOLLGATE_KILL_RUNS}"`);
const TTL_S = 3;
const SWEEP_S = 1;
const STREAMS = 50;
const SLOW_CALLS = 10;

interface KillReport {
  run: number;
  activeAtKill: number;
  heldAtKill: number;
  msUntilNoActiveHold: number;
  holds: Record<string, number>;
  topups: number;
  balance: number;
  captures: number;
}

describe('kill -9 with requests in flight, then restart on the same database', () => {
  let mock: MockUpstream;
  const gateways: GatewayProcess[] = [];
  const reports: KillReport[] = [];

  before(async () => {
    mock = await startMockUpstream();
  });
  after(async () => {
    await mock?.close();
    for (const gw of gateways) await stopGateway(gw, 10_000);
    if (reports.length) console.log(`kill -9 runs:\n${reports.map((r) => JSON.stringify(r)).join('\n')}`);
  });

  const config = () =>
    resilienceConfig({
      providers: { m: { url: mock.url, extra: [NO_COOLDOWN, 'timeouts: { connect_ms: 2000, first_byte_ms: 30000, idle_ms: 30000, total_ms: 60000 }'] } },
      models: { 'crash-model': { upstreams: [{ provider: 'm' }] } },
      billing: [`hold_ttl_seconds: ${TTL_S}`, `sweep_interval_seconds: ${SWEEP_S}`],
    });

  for (let run = 1; run <= RUNS; run++) {
    test(`run ${run}/${RUNS}: ${STREAMS} streams + ${SLOW_CALLS} slow calls in flight, kill -9, restart: every hold released within TTL + sweep, conservation exact`, async () => {
      mock.reset();
      // Streams drip 44 frames 200 ms apart (~9 s); non-stream calls saying 'slow' answer after 20 s; others at once.
      const drip = slowDrip(200, sseFromChunks(chatChunks({ content: Array.from({ length: 40 }, (_, i) => `w${i} `), usage: makeUsage(11, 40) })));
      const slow = delayed(20_000);
      const handler: MockHandler = (req, res) => {
        if (req.body?.stream === true) return drip(req, res);
        if (req.body?.messages?.[0]?.content === 'slow') return slow(req, res);
        return defaultReply(req);
      };
      mock.handle(handler);

      let gw = await startGateway({ config: config() });
      gateways.push(gw);
      const key = await gw.createKey({ name: `kill-${run}`, balance: 10 });

      // Some settled history first: 5 answered calls and a top-up.
      for (let i = 0; i < 5; i++) assert.equal(assertChatOk(await postChat(gw, key.key, { model: 'crash-model', messages: hello }), 'crash-model'), chatCostNano(11, 7));
      const topup = await gw.cli(['keys', 'topup', key.id, '1.5', '--json']);
      assert.equal(topup.code, 0, topup.stderr);

      // In flight: 50 streams that have started relaying, and 10 non-stream calls waiting on the upstream.
      const controllers: AbortController[] = [];
      const opened = await Promise.all(
        Array.from({ length: STREAMS }, async () => {
          const controller = new AbortController();
          controllers.push(controller);
          const res = await fetch(`${gw.baseURL}/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'crash-model', messages: hello, stream: true, max_tokens: 300 }),
            signal: controller.signal,
          });
          assert.equal(res.status, 200);
          const reader = res.body!.getReader();
          const first = await reader.read();
          assert.ok(!first.done);
          reader.read().catch(() => undefined); // the body fails when the server dies
          return res.headers.get('x-request-id')!;
        }),
      );
      const slowCalls = Array.from({ length: SLOW_CALLS }, () => {
        const controller = new AbortController();
        controllers.push(controller);
        return postChat(gw, key.key, { model: 'crash-model', messages: [{ role: 'user', content: 'slow' }] }, { signal: controller.signal }).catch((error: unknown) => error);
      });
      assert.ok(await waitFor(() => mock.requests.length === 5 + STREAMS + SLOW_CALLS, 5000), 'every call reached the upstream');
      const atKill = gw.audit(key.id);
      assert.equal(atKill.activeHolds, STREAMS + SLOW_CALLS, 'every in-flight call holds');

      const exited = exitOf(gw.child);
      gw.child.kill('SIGKILL');
      const killedAt = Date.now();
      assert.deepEqual(await exited, [null, 'SIGKILL']);
      for (const c of controllers) c.abort();
      const slowOutcomes = await Promise.all(slowCalls);
      for (const o of slowOutcomes) assert.ok(o instanceof Error, 'a call in flight at the kill got no answer');
      assert.ok(await waitFor(() => mock.requests.every((r, i) => i < 5 || r.abortedAt !== undefined), 3000), 'the upstream saw every in-flight call go away');

      // Restart on the same directory (same database).
      gw = await startGateway({ config: config(), dir: gw.dir });
      gateways.push(gw);
      const clean = await waitFor(() => gw.audit(key.id).activeHolds === 0, (TTL_S + SWEEP_S + 5) * 1000, 50);
      const msUntilNoActiveHold = Date.now() - killedAt;
      assert.ok(clean, 'every hold ended after the restart');
      assert.ok(msUntilNoActiveHold <= (TTL_S + SWEEP_S + 3) * 1000, `all holds ended ${msUntilNoActiveHold} ms after the kill (TTL ${TTL_S} s + sweep ${SWEEP_S} s + 3 s for the restart)`);

      const initialAndTopups = usdToNano(10) + usdToNano(1.5);
      const { audit, totals } = assertLedgerExact(gw, key.id, initialAndTopups);
      assert.deepEqual(totals.holdsByStatus, { captured: 5, expired: STREAMS + SLOW_CALLS }, 'the killed calls’ holds expired; nothing else changed');
      assert.equal(totals.captures, 5 * chatCostNano(11, 7), 'only the answered calls were charged');
      assert.equal(audit.usageRows, 5);
      for (const id of opened) {
        assert.deepEqual(
          requestEntries(gw, id).map((e) => e.kind),
          ['hold', 'release'],
          'a killed stream: its hold, released by the sweeper',
        );
        assert.equal(holdOf(gw, id)?.status, 'expired');
      }

      // The restarted gateway serves and bills as before.
      const res = await postChat(gw, key.key, { model: 'crash-model', messages: hello });
      assert.equal(assertChatOk(res, 'crash-model'), chatCostNano(11, 7));
      const final = assertLedgerExact(gw, key.id, initialAndTopups);
      assert.equal(final.totals.captureCount, 6);
      reports.push({
        run,
        activeAtKill: atKill.activeHolds,
        heldAtKill: atKill.held,
        msUntilNoActiveHold,
        holds: final.totals.holdsByStatus,
        topups: final.totals.topups,
        balance: final.audit.balance,
        captures: final.totals.captures,
      });
      await stopGateway(gw, 10_000);
    });
  }
});

describe('holds of live requests that outlast the TTL', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;

  before(async () => {
    mock = await startMockUpstream();
    gw = await startGateway({
      config: resilienceConfig({
        providers: { m: { url: mock.url, extra: [NO_COOLDOWN, 'timeouts: { connect_ms: 2000, first_byte_ms: 10000, idle_ms: 10000, total_ms: 30000 }'] } },
        models: { 'ttl-model': { upstreams: [{ provider: 'm' }] } },
        billing: ['hold_ttl_seconds: 2', 'sweep_interval_seconds: 1'],
      }),
    });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });

  /** Polls the statuses of the key's holds every 100 ms while `work` runs; returns every status seen. */
  async function watchHolds<T>(keyId: string, work: Promise<T>): Promise<{ result: T; seen: Set<string> }> {
    const seen = new Set<string>();
    let done = false;
    const watcher = (async () => {
      while (!done) {
        for (const status of Object.keys(ledgerTotals(gw, keyId).holdsByStatus)) seen.add(status);
        await sleep(100);
      }
    })();
    try {
      return { result: await work, seen };
    } finally {
      done = true;
      await watcher;
    }
  }

  test('a live stream of ~5 s with a TTL of 2 s keeps extending its hold: captured at the exact price, never expired', async () => {
    const key = await gw.createKey({ name: 'long-stream', balance: 10 });
    mock.handle(slowDrip(500, sseFromChunks(chatChunks({ content: ['one ', 'two ', 'three ', 'four ', 'five ', 'six ', 'seven'], usage: makeUsage(11, 7) }))));
    const started = Date.now();
    const { result: read, seen } = await watchHolds(key.id, postStream(gw, key.key, { model: 'ttl-model', messages: hello }));
    assert.ok(Date.now() - started >= 4000, 'the stream outlasted the TTL twice over');
    assert.equal(read.status, 200);
    assert.equal(read.error, undefined);
    assert.equal(streamedText(read.chunks), 'one two three four five six seven');
    assert.equal(costOf(finalUsageChunk(read.chunks, 'ttl-model').usage), chatCostNano(11, 7));
    assert.ok(!seen.has('expired'), `the hold must not be swept while the stream is live (statuses seen: ${[...seen].join(', ')})`);
    assert.equal(holdOf(gw, read.requestId)?.status, 'captured');
    assert.deepEqual(
      requestEntries(gw, read.requestId).map((e) => e.kind),
      ['hold', 'release', 'capture'],
    );
    assert.ok(!gw.logs.some((l) => l.includes('settled after the hold had expired')), 'no late settlement');
    assertLedgerExact(gw, key.id, usdToNano(10));
    const row = (await usageById(gw, key.id)).get(read.requestId)!;
    assert.equal(row.status, 200);
    assert.equal(row.usage_source, 'upstream');
    assert.equal(costNanoOf(row), chatCostNano(11, 7));
    assert.deepEqual(attemptsOf(row), ['m:200']);
  });

  test('a live stream whose first byte takes longer than the TTL (3 s, TTL 2 s) keeps its hold: never expired, settled normally', async () => {
    const key = await gw.createKey({ name: 'slow-first-byte', balance: 10 });
    mock.handle(delayed(3000));
    const { result: read, seen } = await watchHolds(key.id, postStream(gw, key.key, { model: 'ttl-model', messages: hello }));
    assert.equal(read.status, 200);
    assert.equal(read.error, undefined);
    assert.equal(costOf(finalUsageChunk(read.chunks, 'ttl-model').usage), chatCostNano(11, 7));
    assert.ok(!seen.has('expired'), `the hold must not be swept while the stream is live (statuses seen: ${[...seen].join(', ')})`);
    assert.ok(!gw.logs.some((l) => l.includes('settled after the hold had expired')), 'no late settlement');
    assertLedgerExact(gw, key.id, usdToNano(10));
  });

  test('while a slow call (4.5 s, TTL 2 s) is in flight its hold keeps the balance committed: a second call that does not fit is refused', async () => {
    // The balance covers one hold (the input estimate + 1000 output tokens at 2 USD per 1M ≈ 0.00201 USD), not two.
    const key = await gw.createKey({ name: 'overcommit', balance: 0.003 });
    mock.handle(delayed(4500));
    const first = postChat(gw, key.key, { model: 'ttl-model', messages: hello });
    await sleep(3400); // past the first hold's TTL (2 s) and the next sweep (≤ 1 s later)
    const second = await postChat(gw, key.key, { model: 'ttl-model', messages: hello });
    const firstRes = await first;
    assertChatOk(firstRes, 'ttl-model');
    assert.equal(second.status, 402, `the second call must not be admitted while the first still holds the balance (got ${second.status})`);
    await waitFor(() => gw.audit(key.id).activeHolds === 0, 5000);
    assertLedgerExact(gw, key.id, usdToNano(0.003));
    assert.equal(holdOf(gw, firstRes.headers.get('x-request-id')!)?.status, 'captured');
  });
});

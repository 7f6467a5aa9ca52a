// `database: postgres://...` end to end: real gateway processes and the real CLI on one PostgreSQL
// database (a fresh schema), driven by the openai SDK. Three gateways share the database, as a deployment
// behind a load balancer would: all bill the same key, admission (group-committed by each) still never
// overdraws it, any one's CLI sees every usage row, and the survivor's sweeper releases the holds of a gateway killed with -9.
// Skipped with the reason when PostgreSQL is unreachable (a failure under CI=true; test/support/postgres.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { APIError } from 'openai';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import type { Store } from '../../src/storage/types.js';
import { costOf, parseJsonOutput, sdk, waitFor } from '../support/e2e.js';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { usageRows } from '../support/ledger-check.js';
import { chatChunks, makeUsage, sseFromChunks, slowDrip, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { expectedCostNano, nanoToUsdString, TEST_PRICES, usdToNano } from '../support/money.js';
import { freshPgSchema, postgresSkipReason, type PgSchema } from '../support/postgres.js';

const skip = await postgresSkipReason();

/** mockConfig with room for streams that wait at the mock, and the given billing lines. */
function config(mock: MockUpstream, billing = ''): string {
  const text = mockConfig(mock, billing).replace(/first_byte_ms: \d+, idle_ms: \d+/, 'first_byte_ms: 30000, idle_ms: 30000');
  assert.match(text, /first_byte_ms: 30000/);
  return text;
}

async function expectSettled(store: Store, keyId: string): Promise<{ balance: number; spent: number }> {
  const audit = await store.ledger.audit(keyId);
  assert.equal(audit.activeHolds, 0, 'no active hold remains');
  assert.equal(audit.cached.held, 0, 'nothing is held');
  assert.deepEqual(audit.cached, audit.derived, 'cached balance/held/spent == derived from the entries');
  return audit.cached;
}

describe('PostgreSQL storage: three gateways on one database', { skip }, () => {
  let mock: MockUpstream;
  let schema: PgSchema;
  let store: Store;
  let a: GatewayProcess;
  let b: GatewayProcess;
  let c: GatewayProcess;

  before(async () => {
    mock = await startMockUpstream();
    schema = await freshPgSchema();
    // Started together: all migrate the empty schema at once, which must apply each migration once.
    [a, b, c] = await Promise.all([
      startGateway({ config: config(mock), database: schema.url }),
      startGateway({ config: config(mock), database: schema.url }),
      startGateway({ config: config(mock), database: schema.url }),
    ]);
    store = await openPostgresStore(schema.url, { maxConnections: 2 });
  });

  after(async () => {
    await mock?.close();
    for (const gw of [a, b, c]) if (gw) await stopGateway(gw, 10_000);
    await store?.close();
    await schema?.drop();
  });

  test('a key made with one gateway\'s CLI is billed exactly by both, and either CLI lists every usage row', async () => {
    mock.reset();
    const key = await a.createKey({ name: 'shared', balance: 5 });
    const shown = parseJsonOutput<{ id: string; balance: number }>(await b.cli(['keys', 'show', key.id, '--json']), 'keys show');
    assert.equal(shown.id, key.id);
    assert.equal(shown.balance, 5);

    const reply = await sdk(a, key.key).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 30 });
    const stream = await sdk(b, key.key).chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Stream, please' }],
      max_tokens: 30,
      stream: true,
    });
    let streamedUsage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) if (chunk.usage) streamedUsage = chunk.usage;
    assert.equal(mock.requests.length, 2);
    assert.equal(mock.requests[1]!.body?.stream_options?.include_usage, true);

    const charges = [reply.usage!, streamedUsage!].map((usage) => {
      const cost = costOf(usage);
      assert.equal(cost, expectedCostNano({ prompt: usage.prompt_tokens, completion: usage.completion_tokens }, TEST_PRICES), 'usage.cost == price(usage)');
      return cost;
    });
    const final = await expectSettled(store, key.id);
    const rows = await usageRows(b, key.id);
    assert.equal(rows.length, 2, 'both requests, one usage row each, whichever gateway served them');
    assert.deepEqual(rows.map((r) => usdToNano(r.cost)).sort(), [...charges].sort());
    assert.equal(final.spent, charges[0]! + charges[1]!);
    assert.equal(final.balance, usdToNano(5) - final.spent, 'balance == initial − Σ charges, to the nano-dollar');
    assert.deepEqual(rows.map((r) => r.usage_source), ['upstream', 'upstream']);
  });

  test('a key revoked with one gateway\'s CLI is refused by another at once, though that one read the key a moment ago', async () => {
    mock.reset();
    const key = await a.createKey({ name: 'revoked-elsewhere', balance: 1 });
    const client = sdk(a, key.key);
    // Gateway a has just read the key for a chat (a record it may reuse for a second, ADR 0027).
    await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 20 });
    await b.cli(['keys', 'revoke', key.id]);
    const refused = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Again' }], max_tokens: 20 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(refused instanceof APIError, 'the chat after the revocation fails');
    assert.equal(refused.status, 401);
    assert.equal((refused.error as { code?: string } | undefined)?.code, 'invalid_api_key');
    assert.equal(mock.requests.length, 1, 'no upstream call after the revocation');
    const own = await fetch(`${a.baseURL}/key`, { headers: { authorization: `Bearer ${key.key}` } });
    assert.equal(own.status, 401, 'GET /v1/key reads the key afresh');
    await expectSettled(store, key.id);
    assert.equal((await usageRows(b, key.id)).length, 1, 'one usage row: the call before the revocation');
  });

  test('500 concurrent streams over three gateways (group commit) on a key that covers exactly 100 holds: exactly 100 admitted, conservation exact', { timeout: 90_000 }, async () => {
    const TOTAL = 500;
    const COVERED = 100;
    const USAGE = { prompt: 17, completion: 9 };
    const CHARGE = expectedCostNano(USAGE, TEST_PRICES);
    const body = { model: 'gpt-test', messages: [{ role: 'user' as const, content: 'Count to five.' }], max_tokens: 40, stream: true as const };

    // The exact hold, from a 402 on an empty key — asked of every gateway, which also warms each one's
    // tokenizer: a cold one's first count can overrun its time budget and round the estimate up.
    const empty = await a.createKey({ name: 'probe', balance: '0' });
    const probed = await Promise.all(
      [a, b, c].map(async (gw) => {
        const probe = await sdk(gw, empty.key).chat.completions.create(body).then(
          () => assert.fail('an empty key was admitted'),
          (error: unknown) => error,
        );
        assert.ok(probe instanceof APIError && probe.status === 402);
        return usdToNano((probe.error as { metadata: { hold: number } }).metadata.hold);
      }),
    );
    const hold = probed[0]!;
    assert.deepEqual(probed, [hold, hold, hold], 'every gateway sizes the same hold');
    assert.ok(CHARGE <= hold);

    const initial = COVERED * hold;
    const key = await b.createKey({ name: 'contended', balance: nanoToUsdString(initial) });
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    mock.reset();
    mock.handle(async () => {
      await gate;
      return sseFromChunks(chatChunks({ content: 'one two three four five', usage: makeUsage(USAGE.prompt, USAGE.completion) }));
    });

    const clients = [a, b, c].map((gw) => new OpenAI({ apiKey: key.key, baseURL: gw.baseURL, maxRetries: 0, timeout: 60_000 }));
    let refused = 0;
    let failed = 0;
    const outcomes = Array.from({ length: TOTAL }, async (_, i) => {
      try {
        const stream = await clients[i % 3]!.chat.completions.create({ ...body, user: `req-${i}` });
        let cost: number | undefined;
        for await (const chunk of stream) if (chunk.usage) cost = costOf(chunk.usage);
        return cost;
      } catch (error) {
        if (error instanceof APIError && error.status === 402) refused += 1;
        else failed += 1;
        return undefined;
      }
    });

    let minAvailable = Infinity;
    try {
      const arrived = await waitFor(async () => {
        const audit = await store.ledger.audit(key.id);
        minAvailable = Math.min(minAvailable, audit.cached.balance - audit.cached.held);
        return mock.requests.length + refused + failed >= TOTAL;
      }, 45_000, 10);
      assert.ok(arrived, `only ${mock.requests.length + refused + failed} of ${TOTAL} requests were admitted or refused`);
      assert.equal(failed, 0, 'no request fails other than with 402');
      assert.equal(mock.requests.length, COVERED, 'exactly the 100 covered holds were admitted across the three gateways');
      assert.equal(refused, TOTAL - COVERED);
      const atGate = await store.ledger.audit(key.id);
      assert.equal(atGate.activeHolds, COVERED);
      assert.equal(atGate.cached.held, COVERED * hold);
    } finally {
      openGate();
    }
    const costs = (await Promise.all(outcomes)).filter((c): c is number => c !== undefined);
    assert.ok(minAvailable >= 0, `available went to ${minAvailable}`);
    assert.equal(costs.length, COVERED);
    for (const cost of costs) assert.equal(cost, CHARGE, 'usage.cost is the exact charge');
    assert.ok(await waitFor(async () => (await store.ledger.audit(key.id)).activeHolds === 0, 5_000));
    const final = await expectSettled(store, key.id);
    // The refusals' rows (402, cost 0) go with no money: the billed rows are the admitted requests'.
    const rows = (await usageRows(a, key.id)).filter((row) => row.usage_source !== 'none');
    const sum = rows.reduce((total, row) => total + usdToNano(row.cost), 0);
    assert.equal(rows.length, COVERED, 'one usage row per admitted request');
    assert.equal(final.spent, sum);
    assert.equal(final.balance, initial - sum, 'final balance == initial − Σ charges, exactly');
    assert.equal(final.balance, initial - COVERED * CHARGE);
    const probeAudit = await store.ledger.audit(empty.id);
    assert.deepEqual([probeAudit.cached.balance, probeAudit.cached.held, probeAudit.activeHolds], [0, 0, 0], 'the 402 probe left no trace');
  });
});

describe('PostgreSQL storage: a gateway killed with -9, the other sweeps its holds', { skip }, () => {
  const TTL_S = 2;
  const SWEEP_S = 1;
  const STREAMS = 20;
  let mock: MockUpstream;
  let schema: PgSchema;
  let store: Store;
  const gateways: GatewayProcess[] = [];

  before(async () => {
    mock = await startMockUpstream();
    schema = await freshPgSchema();
    store = await openPostgresStore(schema.url, { maxConnections: 2 });
  });

  after(async () => {
    await mock?.close();
    for (const gw of gateways) await stopGateway(gw, 10_000);
    await store?.close();
    await schema?.drop();
  });

  test(`${STREAMS} streams in flight on the killed gateway: released by the survivor within TTL + sweep; its own streams settle exactly`, { timeout: 60_000 }, async () => {
    const billing = `billing:\n  hold_ttl_seconds: ${TTL_S}\n  sweep_interval_seconds: ${SWEEP_S}\n`;
    const [doomed, survivor] = await Promise.all([
      startGateway({ config: config(mock, billing), database: schema.url }),
      startGateway({ config: config(mock, billing), database: schema.url }),
    ]);
    gateways.push(doomed, survivor);
    const key = await survivor.createKey({ name: 'crash', balance: 10 });
    // Streams drip for ~8 s: longer than the TTL, so the survivor's own holds live only by keep-alive.
    mock.handle(slowDrip(200, sseFromChunks(chatChunks({ content: Array.from({ length: 36 }, (_, i) => `w${i} `), usage: makeUsage(12, 36) }))));

    const open = (gw: GatewayProcess) =>
      Array.from({ length: STREAMS }, async () => {
        try {
          const stream = await sdk(gw, key.key).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'drip' }], max_tokens: 60, stream: true });
          let cost: number | undefined;
          for await (const chunk of stream) if (chunk.usage) cost = costOf(chunk.usage);
          return cost;
        } catch {
          return undefined; // the killed gateway's clients see their connection cut
        }
      });
    const doomedOutcomes = open(doomed);
    const survivorOutcomes = open(survivor);
    assert.ok(await waitFor(async () => (await store.ledger.audit(key.id)).activeHolds === 2 * STREAMS, 10_000), 'all streams hold');

    doomed.child.kill('SIGKILL');
    const killedAt = Date.now();
    await doomed.stop();
    assert.deepEqual(
      (await Promise.all(doomedOutcomes)).filter((c) => c !== undefined),
      [],
      'no stream of the killed gateway completed',
    );
    // While the survivor's streams still run (their holds kept alive past the TTL), the killed one's expire.
    const swept = await waitFor(async () => (await store.ledger.audit(key.id)).activeHolds === STREAMS, (TTL_S + SWEEP_S) * 1000 + 2_000, 50);
    const sweptAfterMs = Date.now() - killedAt;
    assert.ok(swept, `the killed gateway's holds were still active ${sweptAfterMs} ms after the kill`);
    const survivorCosts = await Promise.all(survivorOutcomes);
    assert.ok(Date.now() - killedAt > TTL_S * 1000, "the survivor's streams outlived the TTL");
    assert.ok(survivorCosts.every((c) => c !== undefined), 'every stream of the survivor completed with usage');
    assert.ok(await waitFor(async () => (await store.ledger.audit(key.id)).activeHolds === 0, 5_000), 'the survivor settled its streams');

    const final = await expectSettled(store, key.id);
    const rows = await usageRows(survivor, key.id);
    const sum = rows.reduce((total, row) => total + usdToNano(row.cost), 0);
    assert.equal(rows.length, STREAMS, 'usage rows for the survivor\'s streams only: the killed ones never settled');
    assert.equal(sum, survivorCosts.reduce((t, c) => t! + c!, 0));
    assert.equal(final.spent, sum);
    assert.equal(final.balance, usdToNano(10) - sum, 'conservation: balance == initial − Σ charges, exactly');
    console.log(`postgres kill -9: ${STREAMS} holds of the killed gateway released by the survivor ${sweptAfterMs} ms after the kill (TTL ${TTL_S} s + sweep ${SWEEP_S} s)`);
  });
});

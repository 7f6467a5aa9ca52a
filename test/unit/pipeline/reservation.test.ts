// How a reservation closes after an unexpected error (the fault row of the settlement decision): released
// when no upstream did any work, charged the estimate (capped at the hold) once one had — never $0 for
// work done — and exactly once.
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { Ledger } from '../../../src/billing/ledger.js';
import { priceUsage, sizeChatHold } from '../../../src/billing/pricing.js';
import { parseConfig } from '../../../src/config/load.js';
import { GatewayError } from '../../../src/errors.js';
import { Reservation, type UsageDraft } from '../../../src/pipeline/admission/reservation.js';
import type { ClientRequest, PipelineDeps } from '../../../src/pipeline/deps.js';
import { decideSettlement } from '../../../src/pipeline/settlement.js';
import { DrainSlots } from '../../../src/pipeline/drain-slots.js';
import { resolveRoute } from '../../../src/routing/resolve-route.js';
import { UpstreamHealth } from '../../../src/routing/upstream-health.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../../src/storage/types.js';
import type { UpstreamTransport } from '../../../src/upstream/transport.js';
import { testNewKey } from '../../support/key-fixture.js';

const CONFIG = parseConfig(
  `providers:
  vllm:
    kind: openai-compatible
    base_url: http://127.0.0.1:9/v1
models:
  llama:
    upstreams: [{ provider: vllm, model: meta-llama/Llama-3.1-8B-Instruct }]
    price: { input: 1, output: 2 }
    max_output_tokens: 1000
`,
  '/tmp/tollgate-unit.yaml',
  {},
);
const BALANCE = 1_000_000_000;
const INPUT_TOKENS = 40;
const MAX_OUTPUT = 1000;

let store: Store;

beforeEach(async () => {
  store = openSqliteStore(':memory:');
  await store.keys.create(testNewKey('key_a', { initialBalance: BALANCE, now: Date.now() }));
});
afterEach(async () => {
  await store.close();
});

const DRAFT: UsageDraft = { provider: 'vllm', upstreamModel: 'meta-llama/Llama-3.1-8B-Instruct', attempts: [], firstTokenAt: undefined };

/** Closes the reservation as a bug after admission does: `delivered` undefined when no upstream had answered. */
function closeAfterFault(reservation: Reservation, delivered?: () => number) {
  const facts = { phase: 'fault', served: delivered !== undefined, delivered: delivered ?? (() => 0), heldOutput: MAX_OUTPUT, failure: new GatewayError('internal_error') } as const;
  return reservation.close(decideSettlement(facts, INPUT_TOKENS), DRAFT);
}

async function openBill(): Promise<{ bill: Reservation; hold: number }> {
  const log = pino({ level: 'silent' });
  const deps: PipelineDeps = {
    config: CONFIG,
    ledger: new Ledger(store.ledger, CONFIG.billing, CONFIG.limits, log),
    transport: {} as UpstreamTransport,
    log,
    health: new UpstreamHealth(),
    drains: new DrainSlots(),
    limiter: { admit: () => Promise.reject(new Error('no limits in this test')), peek: async () => ({}), close: async () => {} },
  };
  const client: ClientRequest = {
    requestId: 'req-1',
    key: (await store.keys.get('key_a'))!,
    signal: new AbortController().signal,
    setHeader: () => {},
    dryRun: false,
    clamp: false,
    headers: {},
    endpoint: 'chat',
    sessionId: null,
    startedAt: performance.now(),
  };
  const route = resolveRoute(CONFIG, '*', 'llama', 'chat');
  const rates = route.model.rates;
  const hold = sizeChatHold(rates, INPUT_TOKENS, MAX_OUTPUT, 1);
  const bill = await Reservation.open(deps, client, route.model, { rates, inputTokens: INPUT_TOKENS, n: 1, hold, modelMaxOutput: MAX_OUTPUT });
  return { bill, hold };
}

async function outcome() {
  const rows = await store.usage.list({ keyId: 'key_a', limit: 10 });
  assert.equal(rows.length, 1, 'one usage row');
  const audit = await store.ledger.audit('key_a');
  assert.deepEqual(audit.cached, audit.derived);
  assert.equal(audit.activeHolds, 0, 'the hold is closed');
  assert.equal(audit.cached.balance, BALANCE - rows[0]!.cost, 'the balance lost exactly the cost');
  return rows[0]!;
}

describe('a reservation closed after a fault', () => {
  test('releases the hold when no upstream had answered: nothing is charged', async () => {
    const { bill } = await openBill();
    await closeAfterFault(bill);
    const row = await outcome();
    assert.equal(row.cost, 0);
    assert.equal(row.status, 500);
    assert.equal(row.errorCode, 'internal_error');
  });

  test('charges the input estimate plus the output delivered once an upstream served the request', async () => {
    const { bill, hold } = await openBill();
    await closeAfterFault(bill, () => 25);
    const row = await outcome();
    const expected = priceUsage(CONFIG.models.get('llama')!.rates, { input: INPUT_TOKENS, cachedInput: 0, output: 25, reasoning: 0 });
    assert.ok(expected > 0 && expected < hold);
    assert.equal(row.cost, expected);
    assert.equal(row.usageSource, 'estimated');
    assert.equal(row.outputTokens, 25);
    assert.equal(row.status, 500);
  });

  test('charges the whole hold when the output delivered cannot even be read (never $0)', async () => {
    const { bill, hold } = await openBill();
    await closeAfterFault(bill, () => {
      throw new RangeError('Invalid string length');
    });
    const row = await outcome();
    assert.equal(row.cost, hold);
    assert.equal(row.usageSource, 'estimated');
    assert.equal(row.outputTokens, MAX_OUTPUT);
  });

  test('never charges more than the hold', async () => {
    const { bill, hold } = await openBill();
    await closeAfterFault(bill, () => 50 * MAX_OUTPUT);
    assert.equal((await outcome()).cost, hold);
  });

  test('closes once: a second close is refused and changes nothing', async () => {
    const { bill } = await openBill();
    const charge = await bill.close(decideSettlement({ phase: 'answered', usage: null, delivered: () => 7 }, INPUT_TOKENS), DRAFT);
    assert.equal(bill.isClosed, true);
    await assert.rejects(closeAfterFault(bill, () => 25), /settled twice/);
    const row = await outcome();
    assert.equal(row.cost, charge.cost);
    assert.equal(row.status, 200);
  });
});

// testing.md "Billing invariants" on /v1/messages: 50 concurrent Messages streams (the official SDK) on one
// key whose balance covers exactly 20 holds. The mock Anthropic keeps every admitted stream waiting behind
// a gate, so all 50 meet admission while no hold has settled; then the gate opens and everything settles.
// Never overdrawn (a sampler thread watches the ledger throughout), conservation exact to the nano-dollar.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic, { PaymentRequiredError } from '@anthropic-ai/sdk';
import { startE2E, stopE2E, waitFor, type E2E } from '../support/e2e.js';
import { ledgerTrail, startLedgerSampler, usageRows } from '../support/ledger-check.js';
import { anthropicReply, startMockAnthropic, type MockAnthropic } from '../support/mock-anthropic.js';
import { messagesConfig } from '../support/messages-config.js';
import { nanoToUsdString, usdToNano } from '../support/money.js';

const TOTAL = 50;
const COVERED_HOLDS = 20;
const MAX_TOKENS = 64;
/** The mock reports input 21 and output 9 for a one-message request: 21 × $3 + 9 × $15 per 1M tokens. */
const CHARGE = 21 * 3000 + 9 * 15_000;

describe('50 concurrent Messages streams on a key whose balance covers exactly 20 holds', () => {
  let e: E2E;
  let anthropic: MockAnthropic;

  before(async () => {
    anthropic = await startMockAnthropic();
    e = await startE2E((mock) => messagesConfig(mock, anthropic).replace(/first_byte_ms: \d+, idle_ms: \d+/g, 'first_byte_ms: 30000, idle_ms: 30000'));
  });
  after(async () => {
    anthropic?.handle(null);
    await anthropic?.close();
    await stopE2E(e);
  });

  it('admits exactly 20, never overdraws, and settles each admitted stream at its exact usage', { timeout: 60_000 }, async (t) => {
    const body = { model: 'claude-test', max_tokens: MAX_TOKENS, messages: [{ role: 'user' as const, content: 'Count to five.' }], stream: true as const };
    const client = (secret: string) => new Anthropic({ apiKey: secret, authToken: null, baseURL: e.gw.origin, maxRetries: 0, timeout: 60_000 });

    // The exact hold, from a 402 on an empty key.
    const empty = await e.gw.createKey({ name: 'probe', balance: '0' });
    const probe = await client(empty.key)
      .messages.create(body)
      .then(
        () => assert.fail('an empty key was admitted'),
        (error: unknown) => error,
      );
    assert.ok(probe instanceof PaymentRequiredError, String(probe));
    const hold = usdToNano((probe.error as { error: { metadata: { hold: number } } }).error.metadata.hold);
    assert.ok(hold >= CHARGE, `hold ${hold} covers the charge ${CHARGE}`);

    const initial = COVERED_HOLDS * hold;
    const key = await e.gw.createKey({ name: 'agents', balance: nanoToUsdString(initial) });
    const sampler = await startLedgerSampler(e.gw.dbPath, key.id);
    let stopped = false;
    t.after(async () => {
      if (!stopped) await sampler.stop().catch(() => undefined);
    });

    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    anthropic.reset();
    anthropic.handle(async (req) => {
      await gate;
      return anthropicReply(req);
    });

    let refused = 0;
    let failed = 0;
    const sdk = client(key.key);
    const outcomes = Array.from({ length: TOTAL }, async (_, i) => {
      try {
        const stream = await sdk.messages.create({ ...body, metadata: { user_id: `req-${i}` } });
        let text = '';
        let cost: number | undefined;
        for await (const event of stream) {
          if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
          if (event.type === 'message_delta') cost = (event.usage as unknown as { cost: number }).cost;
        }
        return { kind: 'streamed' as const, text, cost };
      } catch (error) {
        if (error instanceof PaymentRequiredError) {
          refused += 1;
          return { kind: 'refused' as const, error };
        }
        failed += 1;
        return { kind: 'failed' as const, error };
      }
    });

    const violations: string[] = [];
    const sample = () => {
      const audit = e.gw.audit(key.id);
      if (audit.balance - audit.held < 0) violations.push(`available ${audit.balance - audit.held} < 0`);
      return audit;
    };
    try {
      const arrived = await waitFor(() => {
        sample();
        return anthropic.requests.length + refused + failed >= TOTAL;
      }, 30_000, 5);
      assert.ok(arrived, `${anthropic.requests.length} at the gate, ${refused} refused, ${failed} failed`);
      assert.equal(failed, 0);
      assert.equal(anthropic.requests.length, COVERED_HOLDS, 'exactly the holds the balance covers were admitted');
      const atGate = sample();
      assert.deepEqual([atGate.activeHolds, atGate.held], [COVERED_HOLDS, COVERED_HOLDS * hold]);
    } finally {
      openGate();
    }
    const results = await Promise.all(outcomes);
    await waitFor(() => e.gw.audit(key.id).activeHolds === 0, 5_000);
    const report = await sampler.stop();
    stopped = true;
    const final = sample();
    assert.deepEqual(violations, []);
    assert.deepEqual(report.violations, [], 'every sampler snapshot: available ≥ 0, cached == derived, held == Σ active holds');
    assert.ok(report.maxHeld <= initial);

    const streamed = results.filter((r) => r.kind === 'streamed');
    assert.equal(streamed.length, COVERED_HOLDS);
    assert.equal(results.filter((r) => r.kind === 'refused').length, TOTAL - COVERED_HOLDS);
    for (const r of streamed) {
      assert.equal(r.text, 'Hello from the mock Anthropic server.');
      assert.equal(usdToNano(r.cost ?? NaN), CHARGE, 'the final message_delta carries the exact charge');
    }

    // Conservation: what left the balance is exactly what the usage rows and captures say.
    assert.deepEqual({ balance: final.balance, held: final.held, spent: final.spent }, final.derived);
    assert.equal(final.held, 0);
    assert.equal(final.spent, COVERED_HOLDS * CHARGE);
    assert.equal(final.balance, initial - COVERED_HOLDS * CHARGE);
    const rows = await waitFor(async () => {
      const listed = await usageRows(e.gw, key.id);
      return listed.length === TOTAL ? listed : undefined;
    }, 10_000);
    assert.ok(rows, 'one usage row per request, refusals included');
    const billed = rows.filter((row) => row.usage_source !== 'none');
    assert.equal(billed.length, COVERED_HOLDS);
    assert.equal(billed.reduce((sum, row) => sum + usdToNano(row.cost), 0), final.spent);
    for (const row of billed) assert.deepEqual([row.status, row.usage_source, usdToNano(row.cost), (row as unknown as { endpoint: string }).endpoint], [200, 'upstream', CHARGE, 'messages']);
    assert.ok(rows.filter((row) => row.usage_source === 'none').every((row) => row.status === 402 && row.cost === 0));
    const trail = ledgerTrail(e.gw.dbPath, key.id);
    assert.equal(trail.holds.size, COVERED_HOLDS);
    for (const [requestId, h] of trail.holds) {
      assert.equal(h.status, 'captured');
      const kinds = (trail.entries.get(requestId) ?? []).map((entry) => `${entry.kind}:${entry.amount}`).sort();
      assert.deepEqual(kinds, [`capture:${CHARGE}`, `hold:${hold}`, `release:${hold}`].sort(), requestId);
    }
  });
});

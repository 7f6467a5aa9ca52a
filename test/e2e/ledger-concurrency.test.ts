// testing.md "Billing invariants", 1–3 under load: 500 concurrent streaming requests on a key whose
// balance covers exactly 100 holds. The mock keeps every admitted stream waiting behind a gate, so all
// 500 requests meet admission while no hold has been settled; then the gate opens and everything settles.
//
// TOLLGATE_CONCURRENCY_RUNS=N repeats the scenario N times in one process (same gateway, fresh keys).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI, { APIError } from 'openai';
import { startE2E, stopE2E, waitFor } from '../support/e2e.js';
import { mockConfig, type GatewayProcess, type KeyAudit } from '../support/gateway-process.js';
import { ledgerTrail, startLedgerSampler, usageRows, type SamplerReport } from '../support/ledger-check.js';
import { chatChunks, makeUsage, sseFromChunks, type MockUpstream } from '../support/mock-upstream.js';
import { expectedCostNano, nanoToUsdString, TEST_PRICES, usdToNano } from '../support/money.js';

const TOTAL = 500;
const COVERED_HOLDS = 100;
const RUNS = Number(process.env.TOLLGATE_CONCURRENCY_RUNS || '1');
if (!Number.isSafeInteger(RUNS) || RUNS < 1) throw new Error(`TOLLGATE_CONCURRENCY_RUNS must be a positive integer, got "${process.env.TOLLGATE_CONCURRENCY_RUNS}"`);
const MAX_TOKENS = 50;
const MESSAGES = [
  { role: 'system' as const, content: 'You are a terse assistant.' },
  { role: 'user' as const, content: 'Count from one to five, in words, on one line.' },
];
/** The usage the mock reports for every admitted stream, and its exact price in nano-dollars. */
const USAGE = { prompt: 23, completion: 11 };
const CHARGE = USAGE.prompt * TEST_PRICES.input * 1000 + USAGE.completion * TEST_PRICES.output * 1000;

type Outcome =
  | { kind: 'streamed'; tag: string; text: string; usage: { cost?: number; prompt_tokens?: number; completion_tokens?: number } | undefined }
  | { kind: 'refused'; tag: string; error: APIError }
  | { kind: 'failed'; tag: string; error: unknown };

interface RunReport {
  run: number;
  admitted: number;
  refused: number;
  failed: number;
  minAvailable: number;
  samples: number;
  sampler: SamplerReport;
  wallMs: number;
}

describe('500 concurrent streaming requests on a key whose balance covers exactly 100 holds', () => {
  let mock: MockUpstream | undefined;
  let gw: GatewayProcess | undefined;
  const reports: RunReport[] = [];

  before(async () => {
    ({ mock, gw } = await startE2E((m) => {
      // Admitted streams wait at the mock for the gate: give the gateway's first-byte timeout room.
      const config = mockConfig(m).replace(/first_byte_ms: \d+, idle_ms: \d+/, 'first_byte_ms: 30000, idle_ms: 30000');
      assert.match(config, /first_byte_ms: 30000/);
      return config;
    }));
  });

  after(async () => {
    mock?.handle(null);
    await stopE2E({ mock, gw });
    if (reports.length > 0) {
      console.log('ledger-concurrency runs:');
      for (const r of reports) {
        console.log(
          `  run ${r.run}: admitted ${r.admitted}, refused ${r.refused}, failed ${r.failed}, ` +
            `min available seen ${Math.min(r.minAvailable, r.sampler.minAvailable)} nano ` +
            `(${r.samples} in-test samples + ${r.sampler.samples} sampler-thread snapshots, max active holds ${r.sampler.maxActiveHolds}), wall ${r.wallMs} ms`,
        );
      }
    }
  });

  for (let run = 1; run <= RUNS; run++) {
    it(`admits exactly 100 of 500, never overcommits, and settles every admitted stream exactly (run ${run}/${RUNS})`, { timeout: 60_000 }, async (t) => {
      assert.ok(gw && mock);
      const started = Date.now();
      const where = (s: string) => `[run ${run}] ${s}`;
      const body = { model: 'gpt-test', messages: MESSAGES, max_tokens: MAX_TOKENS, stream: true as const };

      // 1. Learn the exact hold from a 402 on a key with nothing in it.
      const empty = await gw.createKey({ name: `probe-${run}`, balance: '0' });
      const probe = new OpenAI({ apiKey: empty.key, baseURL: gw.baseURL, maxRetries: 0 });
      const probeError = await probe.chat.completions.create({ ...body, user: `probe-${run}` }).then(
        () => assert.fail(where('a zero-balance key was admitted')),
        (err: unknown) => err,
      );
      assert.ok(probeError instanceof APIError && probeError.status === 402, where(`probe: expected a 402, got ${String(probeError)}`));
      const probeMeta = (probeError.error as { metadata?: { hold?: number; available?: number } }).metadata;
      assert.ok(probeMeta && typeof probeMeta.hold === 'number', where(`probe: 402 without metadata.hold: ${JSON.stringify(probeError.error)}`));
      const hold = usdToNano(probeMeta.hold);
      assert.ok(hold > 0 && hold % 1000 === 0, where(`hold ${hold} nano`));
      assert.ok(CHARGE <= hold, where(`the scripted usage (${CHARGE} nano) must fit the hold (${hold} nano)`));
      assert.equal(CHARGE, expectedCostNano(USAGE, TEST_PRICES));

      // 2. A fresh key with exactly 100 holds of credit, passed as an exact decimal string.
      const initial = COVERED_HOLDS * hold;
      const key = await gw.createKey({ name: `concurrency-${run}`, balance: nanoToUsdString(initial), models: ['gpt-test'] });
      const before = gw.audit(key.id);
      assert.equal(before.balance, initial, where('the key starts with exactly 100 holds of credit'));
      assert.equal(before.held, 0);
      // A worker thread snapshots the key's ledger non-stop for the whole scenario.
      const sampler = await startLedgerSampler(gw.dbPath, key.id);
      let samplerReport: SamplerReport | undefined = undefined;
      t.after(async () => {
        if (!samplerReport) await sampler.stop().catch(() => undefined);
      });

      // 3. Every admitted stream waits at the mock until the gate opens.
      let openGate!: () => void;
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      mock.reset();
      mock.handle(async () => {
        await gate;
        return sseFromChunks(chatChunks({ content: 'one two three four five', usage: makeUsage(USAGE.prompt, USAGE.completion) }));
      });

      const client = new OpenAI({ apiKey: key.key, baseURL: gw.baseURL, maxRetries: 0, timeout: 60_000 });
      let refused = 0;
      let failed = 0;
      const outcomes = Array.from({ length: TOTAL }, async (_, i): Promise<Outcome> => {
        const tag = `run${run}-req${i}`;
        try {
          const stream = await client.chat.completions.create({ ...body, user: tag });
          let text = '';
          let usage: Extract<Outcome, { kind: 'streamed' }>['usage'];
          for await (const chunk of stream) {
            text += chunk.choices[0]?.delta?.content ?? '';
            if (chunk.usage) usage = chunk.usage as typeof usage;
          }
          return { kind: 'streamed', tag, text, usage };
        } catch (error) {
          if (error instanceof APIError && error.status === 402) {
            refused += 1;
            return { kind: 'refused', tag, error };
          }
          failed += 1;
          return { kind: 'failed', tag, error };
        }
      });

      // 4. Until every request is either waiting at the mock or refused, watch the ledger: available ≥ 0.
      let minAvailable = Infinity;
      let samples = 0;
      const violations: string[] = [];
      const sample = (): KeyAudit => {
        const a = gw!.audit(key.id);
        samples += 1;
        const available = a.balance - a.held;
        minAvailable = Math.min(minAvailable, available);
        if (available < 0) violations.push(`balance ${a.balance} − held ${a.held} = ${available} < 0`);
        if (a.held > initial) violations.push(`held ${a.held} > initial balance ${initial}`);
        return a;
      };
      try {
        const allArrived = await waitFor(() => {
          sample();
          return mock!.requests.length + refused + failed >= TOTAL;
        }, 30_000, 5);
        const atGate = sample();
        const admitted = mock.requests.length;
        if (!allArrived || failed > 0 || admitted !== COVERED_HOLDS) {
          console.error(
            where(
              `before the gate: mock received ${admitted}, refused ${refused}, failed ${failed} (of ${TOTAL}); ` +
                `audit ${JSON.stringify(atGate)}; hold ${hold}; first failures: ${(await firstFailures(outcomes, failed)).join(' | ')}`,
            ),
          );
        }
        assert.ok(allArrived, where(`only ${admitted + refused + failed} of ${TOTAL} requests reached the mock or got an answer within 30 s`));
        assert.equal(failed, 0, where('no request may fail other than with 402'));
        assert.ok(admitted <= COVERED_HOLDS, where(`overcommitted: ${admitted} admitted on a balance that covers ${COVERED_HOLDS} holds`));
        assert.equal(admitted, COVERED_HOLDS, where('all 500 were concurrent, so exactly 100 are admitted'));
        assert.equal(refused, TOTAL - admitted);
        assert.equal(atGate.activeHolds, admitted, where('one active hold per admitted request, none settled yet'));
        assert.equal(atGate.held, admitted * hold, where('held = admitted × hold'));
        assert.equal(atGate.balance - atGate.held, initial - admitted * hold, where('available is exactly what is left'));
      } finally {
        openGate();
      }

      // 5. Open the gate and consume every stream, still sampling while holds settle.
      let settled = false;
      const inTestSampling = (async () => {
        while (!settled) {
          sample();
          await sleep(5);
        }
      })();
      const results = await Promise.all(outcomes);
      settled = true;
      await inTestSampling;
      const drained = await waitFor(() => gw!.audit(key.id).activeHolds === 0, 5_000);
      const final = sample();
      samplerReport = await sampler.stop();
      assert.deepEqual(violations, [], where('available = balance − held stayed ≥ 0 at every sample'));
      assert.deepEqual(samplerReport.violations, [], where('every sampler snapshot: available ≥ 0, cached == derived, held == Σ active holds'));
      assert.ok(samplerReport.samples > 0, where('the sampler took snapshots'));
      assert.ok(samplerReport.maxHeld <= initial, where(`held peaked at ${samplerReport.maxHeld} > balance ${initial}`));
      assert.ok(drained, where(`holds still active 5 s after the last stream ended: ${JSON.stringify(final)}`));

      // The clients' view.
      const streamed = results.filter((r) => r.kind === 'streamed');
      const refusals = results.filter((r) => r.kind === 'refused');
      assert.equal(streamed.length, COVERED_HOLDS);
      assert.equal(refusals.length, TOTAL - COVERED_HOLDS);
      for (const r of streamed) {
        assert.equal(r.text, 'one two three four five', where(`${r.tag}: streamed text`));
        assert.ok(r.usage, where(`${r.tag}: the final chunk carries usage`));
        assert.equal(r.usage.prompt_tokens, USAGE.prompt);
        assert.equal(r.usage.completion_tokens, USAGE.completion);
        assert.equal(usdToNano(r.usage.cost ?? NaN), CHARGE, where(`${r.tag}: usage.cost is the exact charge`));
      }
      for (const r of refusals) {
        const e = r.error;
        assert.equal(e.code, 'insufficient_balance', where(`${r.tag}: 402 code`));
        const meta = (e.error as { metadata?: { hold: number; available: number; affordable_max_tokens: number } }).metadata;
        assert.ok(meta, where(`${r.tag}: 402 carries metadata`));
        assert.equal(usdToNano(meta.hold), hold, where(`${r.tag}: metadata.hold is the request's hold`));
        assert.ok(usdToNano(meta.available) < hold, where(`${r.tag}: metadata.available ${meta.available} < hold`));
        assert.ok(Number.isInteger(meta.affordable_max_tokens) && meta.affordable_max_tokens < MAX_TOKENS, where(`${r.tag}: affordable_max_tokens ${meta.affordable_max_tokens}`));
      }

      // The upstream's view: exactly the admitted requests, none of the refused ones.
      assert.equal(mock.requests.length, COVERED_HOLDS, where('the mock received exactly the admitted requests'));
      const refusedTags = new Set(refusals.map((r) => r.tag));
      const upstreamTags = mock.requests.map((r) => r.body?.user as string);
      assert.equal(new Set(upstreamTags).size, COVERED_HOLDS, where('no request reached the mock twice'));
      assert.deepEqual(upstreamTags.filter((t) => refusedTags.has(t)), [], where('no upstream call for a refused request'));
      for (const r of mock.requests) assert.equal(r.body?.stream_options?.include_usage, true);

      // The ledger's view.
      assert.equal(final.activeHolds, 0, where('no active hold'));
      assert.equal(final.held, 0);
      assert.deepEqual(
        { balance: final.balance, held: final.held, spent: final.spent },
        final.derived,
        where('cached balance/held/spent equal the figures derived from the entries'),
      );
      // Each refusal leaves its own row too (cost 0, no ledger entry), written just after its answer.
      const all = await waitFor(async () => {
        const listed = await usageRows(gw!, key.id);
        return listed.length === TOTAL ? listed : undefined;
      }, 10_000);
      assert.ok(all, where('one usage row per request, refusals included'));
      const refusalRows = all.filter((row) => row.usage_source === 'none');
      assert.equal(refusalRows.length, TOTAL - COVERED_HOLDS);
      assert.ok(refusalRows.every((row) => row.status === 402 && row.cost === 0), where('each refusal row: a 402 that cost nothing'));
      const rows = all.filter((row) => row.usage_source !== 'none');
      const charges = rows.map((row) => usdToNano(row.cost));
      const sumCharges = charges.reduce((a, b) => a + b, 0);
      assert.equal(rows.length, COVERED_HOLDS, where('one usage row per admitted request'));
      assert.equal(final.usageRows, COVERED_HOLDS);
      assert.equal(final.captures, COVERED_HOLDS, where('one capture per admitted request'));
      assert.equal(sumCharges, final.spent, where('Σ usage-row costs == audit.spent'));
      assert.equal(final.balance, initial - sumCharges, where('final balance == initial − Σ charges, to the nano-dollar'));
      assert.equal(final.balance, initial - COVERED_HOLDS * CHARGE);
      for (const row of rows) {
        assert.equal(row.usage_source, 'upstream', where(`${row.request_id}: usage source`));
        assert.equal(row.status, 200);
        assert.equal(row.input_tokens, USAGE.prompt);
        assert.equal(row.output_tokens, USAGE.completion);
        assert.equal(usdToNano(row.cost), CHARGE, where(`${row.request_id}: charge == price(usage) exactly`));
      }
      // Every hold ended exactly once, by a capture; the refusals left no trace.
      const trail = ledgerTrail(gw.dbPath, key.id);
      assert.equal(trail.holds.size, COVERED_HOLDS);
      for (const [requestId, h] of trail.holds) {
        assert.equal(h.status, 'captured', where(`${requestId}: hold status`));
        assert.equal(h.amount, hold);
        const kinds = (trail.entries.get(requestId) ?? []).map((e) => `${e.kind}:${e.amount}`).sort();
        assert.deepEqual(kinds, [`capture:${CHARGE}`, `hold:${hold}`, `release:${hold}`].sort(), where(`${requestId}: ledger entries`));
      }
      for (const r of refusals) {
        const id = r.error.requestID;
        assert.ok(id, where(`${r.tag}: 402 carries x-request-id`));
        assert.equal(trail.entries.has(id), false, where(`${r.tag}: a 402 left a ledger entry`));
        assert.equal(trail.holds.has(id), false, where(`${r.tag}: a 402 left a hold`));
        assert.equal(trail.usageRequestIds.has(id), false, where(`${r.tag}: a 402 left a usage row`));
      }
      const probeAudit = gw.audit(empty.id);
      assert.deepEqual([probeAudit.balance, probeAudit.held, probeAudit.spent, probeAudit.usageRows], [0, 0, 0, 0], where('the probe left no trace'));

      const wallMs = Date.now() - started;
      reports.push({ run, admitted: COVERED_HOLDS, refused: refusals.length, failed, minAvailable, samples, sampler: samplerReport, wallMs });
      assert.ok(wallMs < 45_000, where(`the scenario took ${wallMs} ms`));
    });
  }
});

/** The first few non-402 failures, for the diagnostic line (only awaited when some exist). */
async function firstFailures(outcomes: Array<Promise<Outcome>>, failed: number): Promise<string[]> {
  if (failed === 0) return [];
  const settledOnes = await Promise.all(outcomes.map((p) => Promise.race([p, sleep(50).then(() => undefined)])));
  return settledOnes
    .filter((o): o is Extract<Outcome, { kind: 'failed' }> => o?.kind === 'failed')
    .slice(0, 5)
    .map((o) => `${o.tag}: ${o.error instanceof Error ? `${o.error.name}: ${o.error.message}` : String(o.error)}`);
}

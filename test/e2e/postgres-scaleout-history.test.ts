// testing.md "Billing invariants" under the PostgreSQL group commit, over THREE gateways on one database:
// a seeded randomized history of top-ups (each gateway's CLI), chat calls (stream and not), client aborts,
// upstream faults and one `kill -9` of a gateway (restarted on the same database) — run a few operations
// at a time over the three — while a sampler checks every ledger snapshot; then the ledger is audited to
// the nano-dollar. Five seeds per run; TOLLGATE_SEED=<seed> replays one (the seed is in every message).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import type { Store } from '../../src/storage/types.js';
import { costOf, waitFor } from '../support/e2e.js';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { chatChunks, chatCompletion, errorReply, makeUsage, slowDrip, sseFromChunks, startMockUpstream, type MockUpstream, type ReplySource } from '../support/mock-upstream.js';
import { chatCostNano, nanoToUsdString } from '../support/money.js';
import { freshPgSchema, postgresSkipReason, type PgSchema } from '../support/postgres.js';
import { seededRng, type Rng } from '../support/seeded-random.js';

const skip = await postgresSkipReason();
const SEEDS = process.env.TOLLGATE_SEED ? [Number(process.env.TOLLGATE_SEED) >>> 0] : Array.from({ length: 5 }, () => (Math.random() * 2 ** 32) >>> 0);
const OPS = 60;
const GATEWAYS = 3;
const TTL_S = 2;

type Kind = 'chat' | 'stream' | 'abort' | 'fault-500' | 'fault-cut' | 'topup';
const WEIGHTS: Record<Kind, number> = { chat: 30, stream: 25, abort: 10, 'fault-500': 8, 'fault-cut': 7, topup: 10 };

interface Outcome {
  status: number;
  /** usage.cost of a 200 answer that carried usage, with the usage it prices. */
  cost?: number;
  usage?: { prompt: number; completion: number };
}

function body(tag: string, stream: boolean): Record<string, unknown> {
  return { model: 'gpt-test', messages: [{ role: 'user', content: `history ${tag}` }], max_tokens: 50, user: tag, ...(stream ? { stream: true } : {}) };
}

async function post(gw: GatewayProcess, secret: string, payload: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(payload),
    ...(signal ? { signal } : {}),
  });
}

/** Reads an SSE body; the usage chunk's cost, if one came. */
async function readStream(res: Response, abortAfterFirst?: AbortController): Promise<number | undefined> {
  let text = '';
  const decoder = new TextDecoder();
  for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(part, { stream: true });
    if (abortAfterFirst && text.includes('data: ')) {
      abortAfterFirst.abort();
      return undefined;
    }
  }
  let cost: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: {')) continue;
    const chunk = JSON.parse(line.slice(6)) as { usage?: unknown };
    if (chunk.usage) cost = costOf(chunk.usage);
  }
  return cost;
}

describe('PostgreSQL group commit: seeded random histories over three gateways, one killed with -9', { skip }, () => {
  let mock: MockUpstream;
  let schema: PgSchema;
  let store: Store;
  let reader: pg.Pool;
  const gateways: GatewayProcess[] = [];
  const replies = new Map<string, ReplySource>();
  let config: string;

  before(async () => {
    mock = await startMockUpstream();
    mock.handle((req, res) => {
      const reply = replies.get(String(req.body?.user)) ?? errorReply(500, 'no scripted reply');
      return typeof reply === 'function' ? reply(req, res) : reply;
    });
    schema = await freshPgSchema();
    config = mockConfig(mock, `billing:\n  hold_ttl_seconds: ${TTL_S}\n  sweep_interval_seconds: 1\n`);
    gateways.push(...(await Promise.all(Array.from({ length: GATEWAYS }, () => startGateway({ config, database: schema.url })))));
    store = await openPostgresStore(schema.url, { maxConnections: 2 });
    reader = new pg.Pool({ connectionString: schema.url, max: 1 });
  });

  after(async () => {
    await mock?.close();
    for (const gw of gateways) await stopGateway(gw, 10_000);
    await reader?.end();
    await store?.close();
    await schema?.drop();
  });

  for (const seed of SEEDS) {
    test(`seed ${seed}: conservation exact, every hold ends once, one usage row per capture, available never < 0`, { timeout: 120_000 }, async () => {
      const tagged = (text: string) => `[TOLLGATE_SEED=${seed}] ${text}`;
      const rng: Rng = seededRng(seed);
      // The exact hold of one call, from the 402 of an empty key.
      const probeKey = await gateways[0]!.createKey({ name: `probe-${seed}`, balance: '0' });
      const probe = await post(gateways[0]!, probeKey.key, body('probe', false));
      assert.equal(probe.status, 402, tagged('an empty key is refused'));
      const holdUsd = ((await probe.json()) as { error: { metadata: { hold: number } } }).error.metadata.hold;
      const initial = Math.round(holdUsd * 1e9) * rng.int(8, 20);
      const key = await gateways[1]!.createKey({ name: `history-${seed}`, balance: nanoToUsdString(initial) });

      // The sampler: every snapshot of the key (one REPEATABLE READ each) during the history.
      const violations: string[] = [];
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const audit = await store.ledger.audit(key.id);
          if (audit.cached.balance - audit.cached.held < 0) violations.push(`available ${audit.cached.balance - audit.cached.held}`);
          if (JSON.stringify(audit.cached) !== JSON.stringify(audit.derived)) violations.push(`cached ${JSON.stringify(audit.cached)} != derived ${JSON.stringify(audit.derived)}`);
          await new Promise((r) => setTimeout(r, 5));
        }
      })();

      let toppedUp = 0;
      const answered: Outcome[] = [];
      const killAt = rng.int(2, 4);
      let killed = false;
      let wave = 0;
      let index = 0;
      while (index < OPS) {
        const size = rng.int(1, 12);
        const work: Promise<void>[] = [];
        for (let i = 0; i < size && index < OPS; i++, index++) {
          const kind = rng.weighted(WEIGHTS);
          const gwIndex = rng.int(0, GATEWAYS - 1);
          const gw = gateways[gwIndex]!;
          const tag = `s${seed}-op${index}`;
          const usage = { prompt: rng.int(1, 8), completion: rng.int(1, 50) };
          if (kind === 'topup') {
            const amount = rng.int(1, 3) * Math.round(holdUsd * 1e9);
            work.push(
              gw.cli(['keys', 'topup', key.id, nanoToUsdString(amount)]).then((r) => {
                if (r.code === 0) toppedUp += amount;
                // A top-up through the killed gateway's CLI still runs: the CLI is its own process.
                else assert.fail(tagged(`topup failed: ${r.stderr}`));
              }),
            );
            continue;
          }
          const stream = kind !== 'chat' && kind !== 'fault-500' ? true : rng.chance(0.5);
          const drip = rng.int(0, 30);
          const chunks = chatChunks({ content: ['a', ' b', ' c', ' d'], usage: makeUsage(usage.prompt, usage.completion) });
          replies.set(
            tag,
            kind === 'fault-500'
              ? errorReply(500, 'scripted upstream fault')
              : kind === 'fault-cut'
                ? slowDrip(drip, { ...sseFromChunks(chunks), cutAfter: 2 })
                : stream
                  ? slowDrip(drip, sseFromChunks(chunks))
                  : { json: chatCompletion({ content: 'a b c d', usage: makeUsage(usage.prompt, usage.completion) }) },
          );
          const controller = new AbortController();
          work.push(
            (async () => {
              try {
                const res = await post(gw, key.key, body(tag, stream), controller.signal);
                if (res.status !== 200) {
                  await res.arrayBuffer();
                  answered.push({ status: res.status });
                  return;
                }
                if (!stream) {
                  const json = (await res.json()) as { usage: unknown };
                  answered.push({ status: 200, cost: costOf(json.usage), usage });
                  return;
                }
                const cost = await readStream(res, kind === 'abort' ? controller : undefined);
                answered.push(cost === undefined || (kind !== 'stream' && kind !== 'chat') ? { status: 200 } : { status: 200, cost, usage });
              } catch {
                answered.push({ status: 0 }); // aborted by the client, or the gateway was killed
              }
            })(),
          );
        }
        wave += 1;
        if (wave === killAt) {
          // kill -9 of one gateway while this wave is in flight, then a new one on the same database.
          const victim = rng.int(0, GATEWAYS - 1);
          await new Promise((r) => setTimeout(r, rng.int(0, 40)));
          await gateways[victim]!.stop('SIGKILL');
          await Promise.allSettled(work);
          gateways[victim]!.cleanup();
          gateways[victim] = await startGateway({ config, database: schema.url });
          killed = true;
        }
        await Promise.all(work);
      }

      // Holds of requests the killed gateway never settled expire: TTL + one sweep.
      const drained = await waitFor(async () => (await store.ledger.audit(key.id)).activeHolds === 0, (TTL_S + 5) * 1000, 100);
      sampling = false;
      await sampler;
      assert.ok(drained, tagged('every hold ended (captured, released or expired)'));
      assert.deepEqual(violations.slice(0, 5), [], tagged('every snapshot: available ≥ 0 and cached == derived'));

      const audit = await store.ledger.audit(key.id);
      assert.deepEqual(audit.cached, audit.derived, tagged('cached == derived at the end'));
      assert.equal(audit.cached.held, 0, tagged('nothing held'));
      const one = async (sql: string) => Number((await reader.query<{ n: string }>(sql, [key.id])).rows[0]!.n);
      const captures = await one("SELECT COALESCE(SUM(amount), 0) AS n FROM ledger_entries WHERE key_id = $1 AND kind = 'capture'");
      assert.equal(initial + toppedUp, audit.cached.balance + captures, tagged('conservation: B0 + ΣT == B_final + ΣC'));
      assert.equal(audit.cached.spent, captures, tagged('spent == ΣC'));
      assert.equal(await one("SELECT COUNT(*) AS n FROM ledger_entries e WHERE key_id = $1 AND kind = 'capture' AND NOT EXISTS (SELECT 1 FROM usage_records u WHERE u.request_id = e.request_id)"), 0, tagged('every capture has its usage row'));
      assert.equal(await one("SELECT COALESCE(SUM(cost), 0) AS n FROM usage_records WHERE key_id = $1"), captures, tagged('Σ usage-row costs == ΣC'));
      assert.equal(await one("SELECT COUNT(*) AS n FROM (SELECT request_id FROM ledger_entries WHERE key_id = $1 AND kind = 'capture' GROUP BY request_id HAVING COUNT(*) > 1) d"), 0, tagged('no request charged twice'));
      assert.equal(await one("SELECT COUNT(*) AS n FROM holds h WHERE key_id = $1 AND (SELECT COUNT(*) FROM ledger_entries e WHERE e.request_id = h.request_id AND kind = 'hold') <> h.seq + 1"), 0, tagged('each hold admitted once per admission'));
      for (const outcome of answered) {
        if (outcome.cost === undefined) continue;
        assert.equal(outcome.cost, chatCostNano(outcome.usage!.prompt, outcome.usage!.completion), tagged('a 200 answer bills price(usage), exactly'));
      }
      assert.ok(killed, tagged('a gateway was killed with -9 and restarted'));
      assert.ok(answered.some((o) => o.cost !== undefined), tagged('some calls were billed'));
      const probeAudit = await store.ledger.audit(probeKey.id);
      assert.deepEqual([probeAudit.cached.balance, probeAudit.cached.held, probeAudit.activeHolds], [0, 0, 0], tagged('the 402 left no trace'));
    });
  }
});

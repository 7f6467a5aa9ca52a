// A hold that expired while its request still ran — the gateway paused (SIGSTOP), its hold released by
// another gateway's sweeper and the money reused — is never charged outside admission: when the paused
// gateway resumes, it re-admits the hold atomically or, if the key can no longer cover it, ends the
// stream with insufficient_balance and charges only what is available. Two gateways on one database,
// SQLite (one file, WAL) and PostgreSQL alike; the ledger is sampled throughout.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { call, waitFor, type Json } from '../support/e2e.js';
import { DERIVED_BALANCES_SQL, mockConfig, readDatabase, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { usageRows } from '../support/ledger-check.js';
import { chatChunks, makeUsage, slowDrip, sseFromChunks, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { chatCostNano, usdToNano } from '../support/money.js';
import { freshPgSchema, postgresSkipReason, type PgSchema } from '../support/postgres.js';
import { sleep } from '../support/resilience.js';

const TTL_S = 2;
const SWEEP_S = 1;
const BODY = { model: 'gpt-test', messages: [{ role: 'user', content: 'Tell me a long story' }], max_tokens: 200, stream: true };
/** 100 content chunks, one every 100 ms: the stream outlives the pause by seconds. */
const CHUNKS = 100;
const DRIP = slowDrip(100, sseFromChunks(chatChunks({ content: Array.from({ length: CHUNKS }, (_, i) => `w${i} `), usage: makeUsage(15, CHUNKS) })));

interface Snapshot {
  balance: number;
  held: number;
  spent: number;
  derived: { balance: number; held: number; spent: number };
  topups: number;
  activeHolds: number;
}

/** Read access to the shared database, whichever dialect. */
interface LedgerReader {
  snapshot(keyId: string): Promise<Snapshot>;
  entries(requestId: string): Promise<string[]>;
  holdStatus(requestId: string): Promise<string | undefined>;
  close(): Promise<void>;
}

const SNAPSHOT_SQL = {
  key: 'SELECT a.balance, k.held, k.spent FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = $1',
  derived: DERIVED_BALANCES_SQL.replace('?', '$1'),
  topups: "SELECT COALESCE(SUM(amount), 0) AS n FROM ledger_entries WHERE key_id = $1 AND kind = 'topup'",
  active: "SELECT COUNT(*) AS n FROM holds WHERE key_id = $1 AND status = 'active'",
  entries: 'SELECT kind, seq, amount FROM ledger_entries WHERE request_id = $1 ORDER BY id',
  hold: 'SELECT status FROM holds WHERE request_id = $1',
};

function sqliteReader(dbPath: string): LedgerReader {
  const q = <T>(sql: string, ...params: unknown[]) => readDatabase(dbPath, (db) => db.prepare(sql.replace(/\$\d/g, '?')).all(...params) as T[]);
  return {
    async snapshot(keyId) {
      return readDatabase(dbPath, (db) => {
        const one = <T>(sql: string) => db.prepare(sql.replace(/\$\d/g, '?')).get(keyId) as T;
        // One read transaction, as the PostgreSQL reader's REPEATABLE READ: separate reads could see the
        // key row before a commit and the entries after it (a false "cached != derived").
        return db.transaction(() => ({
          ...one<{ balance: number; held: number; spent: number }>(SNAPSHOT_SQL.key),
          derived: one<Snapshot['derived']>(SNAPSHOT_SQL.derived),
          topups: one<{ n: number }>(SNAPSHOT_SQL.topups).n,
          activeHolds: one<{ n: number }>(SNAPSHOT_SQL.active).n,
        }))();
      });
    },
    async entries(requestId) {
      return q<{ kind: string; seq: number; amount: number }>(SNAPSHOT_SQL.entries, requestId).map((e) => `${e.kind}#${e.seq}:${e.amount}`);
    },
    async holdStatus(requestId) {
      return q<{ status: string }>(SNAPSHOT_SQL.hold, requestId)[0]?.status;
    },
    async close() {},
  };
}

async function postgresReader(url: string): Promise<LedgerReader> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const num = (v: unknown) => Number(v);
  return {
    async snapshot(keyId) {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      try {
        const key = (await client.query(SNAPSHOT_SQL.key, [keyId])).rows[0];
        const derived = (await client.query(SNAPSHOT_SQL.derived, [keyId])).rows[0];
        const topups = (await client.query(SNAPSHOT_SQL.topups, [keyId])).rows[0];
        const active = (await client.query(SNAPSHOT_SQL.active, [keyId])).rows[0];
        return {
          balance: num(key.balance),
          held: num(key.held),
          spent: num(key.spent),
          derived: { balance: num(derived.balance), held: num(derived.held), spent: num(derived.spent) },
          topups: num(topups.n),
          activeHolds: num(active.n),
        };
      } finally {
        await client.query('COMMIT');
      }
    },
    async entries(requestId) {
      return (await client.query(SNAPSHOT_SQL.entries, [requestId])).rows.map((e) => `${e.kind}#${e.seq}:${e.amount}`);
    },
    async holdStatus(requestId) {
      return (await client.query(SNAPSHOT_SQL.hold, [requestId])).rows[0]?.status;
    },
    close: () => client.end(),
  };
}

/** Samples available (balance − held) until stopped; reports the minimum and any cached ≠ derived. */
function sampleLedger(reader: LedgerReader, keyId: string) {
  let running = true;
  let minAvailable = Infinity;
  const problems: string[] = [];
  const done = (async () => {
    while (running) {
      const s = await reader.snapshot(keyId);
      minAvailable = Math.min(minAvailable, s.balance - s.held);
      const cached = { balance: s.balance, held: s.held, spent: s.spent };
      if (JSON.stringify(cached) !== JSON.stringify(s.derived) && problems.length < 10) problems.push(`${JSON.stringify(cached)} != ${JSON.stringify(s.derived)}`);
      await sleep(15);
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return { minAvailable, problems };
    },
  };
}

/** A stream read event by event, so the test can act between events. */
async function openStream(gw: GatewayProcess, key: string) {
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(BODY),
    signal: AbortSignal.timeout(60_000),
  });
  assert.equal(res.status, 200, 'admitted');
  const requestId = res.headers.get('x-request-id')!;
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  const events: Json[] = [];
  let done = false;
  /** Reads until at least `n` events arrived (or the stream ended). */
  async function readUntil(n: number): Promise<void> {
    while (events.length < n && !done) {
      const { value, done: ended } = await reader.read();
      if (ended) {
        done = true;
        break;
      }
      buffered += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffered.indexOf('\n\n')) >= 0) {
        const data = buffered.slice(0, cut).replace(/^data: /, '');
        buffered = buffered.slice(cut + 2);
        events.push(data === '[DONE]' ? '[DONE]' : JSON.parse(data));
      }
    }
  }
  return { requestId, events, readUntil, readAll: () => readUntil(Infinity) };
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  const skip = dialect === 'postgres' ? await postgresSkipReason() : undefined;

  describe(`a hold expired while its gateway was paused (${dialect})`, { skip }, () => {
    let mock: MockUpstream;
    let schema: PgSchema | undefined;
    let paused: GatewayProcess;
    let other: GatewayProcess;
    let reader: LedgerReader;
    let hold: number;

    before(async () => {
      mock = await startMockUpstream();
      const billing = `billing:\n  hold_ttl_seconds: ${TTL_S}\n  sweep_interval_seconds: ${SWEEP_S}\n`;
      // The pause must not trip the upstream timeouts: only the hold's TTL is under test.
      const config = mockConfig(mock, billing).replace(/first_byte_ms: \d+, idle_ms: \d+/, 'first_byte_ms: 30000, idle_ms: 30000');
      if (dialect === 'postgres') {
        schema = await freshPgSchema();
        paused = await startGateway({ config, database: schema.url });
        other = await startGateway({ config, database: schema.url });
        reader = await postgresReader(schema.url);
      } else {
        paused = await startGateway({ config });
        other = await startGateway({ config, database: `sqlite:${paused.dbPath}` });
        reader = sqliteReader(paused.dbPath);
      }
      // The hold of BODY, from the 402 of a key with nothing on it.
      const probe = await other.createKey({ name: 'probe', balance: 0 });
      const refused = await call(other, 'POST', '/chat/completions', { key: probe.key, body: BODY });
      assert.equal(refused.status, 402);
      hold = usdToNano(refused.json.error.metadata.hold);
      mock.handle(DRIP);
    });

    after(async () => {
      if (paused?.child.pid) paused.child.kill('SIGCONT');
      await mock?.close();
      for (const gw of [other, paused]) if (gw) await stopGateway(gw, 10_000);
      await reader?.close();
      await schema?.drop();
    });

    /** Starts a stream on the paused-to-be gateway, pauses it until another gateway's sweeper expired its hold. */
    async function pauseUntilExpired(keyId: string, key: string) {
      const victim = await openStream(paused, key);
      await victim.readUntil(2);
      assert.equal(await reader.holdStatus(victim.requestId), 'active');
      paused.child.kill('SIGSTOP');
      const expired = await waitFor(async () => (await reader.holdStatus(victim.requestId)) === 'expired', (TTL_S + SWEEP_S) * 1000 + 3_000, 50);
      assert.ok(expired, "the other gateway's sweeper expired the paused gateway's hold");
      const s = await reader.snapshot(keyId);
      assert.equal(s.held, 0, 'the hold was released');
      return victim;
    }

    test('the money was spent meanwhile: on resuming, the stream ends with insufficient_balance and is charged only what is available', { timeout: 60_000 }, async () => {
      const key = await other.createKey({ name: 'spent-meanwhile', balance: hold / 1e9 });
      const sampler = sampleLedger(reader, key.id);
      const victim = await pauseUntilExpired(key.id, key.key);
      // Another request takes the freed balance (exactly one hold's worth) and is still running.
      const thief = await openStream(other, key.key);
      await thief.readUntil(1);
      assert.equal((await reader.snapshot(key.id)).held, hold, 'the freed balance now backs the other request');

      paused.child.kill('SIGCONT');
      await victim.readAll();
      await thief.readAll();
      const report = await sampler.stop();

      const last = victim.events.at(-2);
      assert.equal(victim.events.at(-1), '[DONE]');
      assert.equal(last?.error?.code, 'insufficient_balance', `the stream ended with insufficient_balance: ${JSON.stringify(last)}`);
      assert.ok(victim.events.length < CHUNKS, 'it was cut short');
      const thiefUsage = thief.events.at(-2).usage;
      assert.equal(usdToNano(thiefUsage.cost), chatCostNano(15, CHUNKS), 'the other request is billed exactly');

      assert.ok(await waitFor(async () => (await reader.snapshot(key.id)).activeHolds === 0, 5_000), 'no hold stays active');
      const final = await reader.snapshot(key.id);
      assert.deepEqual(report.problems, []);
      assert.ok(report.minAvailable >= 0, `available never went below zero (min ${report.minAvailable})`);
      assert.ok(final.balance - final.held >= 0);
      assert.deepEqual({ balance: final.balance, held: final.held, spent: final.spent }, final.derived, 'cached == derived');
      assert.equal(final.topups, final.balance + final.spent, 'conservation: Σ top-ups == balance + Σ captures, exactly');
      const victimEntries = await reader.entries(victim.requestId);
      assert.equal(victimEntries.length, 3, `hold, its release by the sweeper, one capture: ${victimEntries}`);
      assert.deepEqual(victimEntries.slice(0, 2), [`hold#0:${hold}`, `release#0:${hold}`]);
      const victimCharge = Number(victimEntries[2]!.split(':')[1]);
      assert.match(victimEntries[2]!, /^capture#0:/);
      assert.ok(victimCharge <= hold - chatCostNano(15, CHUNKS), 'charged no more than was left');
      const rows = await usageRows(other, key.id);
      const victimRow = rows.find((r) => r.request_id === victim.requestId)!;
      assert.equal(victimRow.status, 402);
      assert.equal(usdToNano(victimRow.cost), victimCharge, 'its usage row records what was charged');
    });

    test('the money is still there: on resuming, the hold is re-admitted and the stream completes, billed exactly', { timeout: 60_000 }, async () => {
      const key = await other.createKey({ name: 'still-there', balance: hold / 1e9 });
      const sampler = sampleLedger(reader, key.id);
      const victim = await pauseUntilExpired(key.id, key.key);
      paused.child.kill('SIGCONT');
      await victim.readAll();
      const report = await sampler.stop();

      assert.equal(victim.events.at(-1), '[DONE]');
      const final = victim.events.at(-2);
      assert.ok(final.usage, `completed with usage: ${JSON.stringify(final)}`);
      assert.equal(usdToNano(final.usage.cost), chatCostNano(15, CHUNKS));
      assert.ok(await waitFor(async () => (await reader.snapshot(key.id)).activeHolds === 0, 5_000));
      const s = await reader.snapshot(key.id);
      assert.deepEqual(report.problems, []);
      assert.ok(report.minAvailable >= 0, `min available ${report.minAvailable}`);
      assert.equal(s.topups, s.balance + s.spent);
      assert.equal(s.spent, chatCostNano(15, CHUNKS));
      assert.deepEqual(await reader.entries(victim.requestId), [
        `hold#0:${hold}`,
        `release#0:${hold}`,
        `hold#1:${hold}`,
        `release#1:${hold}`,
        `capture#0:${chatCostNano(15, CHUNKS)}`,
      ]);
    });
  });
}

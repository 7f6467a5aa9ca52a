// Ledger and usage-row checks for the end-to-end tests: the ledger trail read straight from the SQLite
// file (also by a sampler thread while requests run), and usage rows read through the real CLI.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { SQLITE_DRIVER } from '../../src/storage/sqlite/driver.js';
import { parseJsonOutput } from './e2e.js';
import { DERIVED_BALANCES_SQL, KEY_FIGURES_SQL, readDatabase, type GatewayProcess, type KeyAudit } from './gateway-process.js';
import { chatCostNano, embeddingCostNano, usdToNano } from './money.js';

// ---------------------------------------------------------------- the ledger

/** No active hold, nothing held, and the cached balance/held/spent equal the values derived from ledger entries. */
export function assertLedgerSettled(gw: GatewayProcess, keyId: string): KeyAudit {
  const audit = gw.audit(keyId);
  assert.equal(audit.activeHolds, 0, 'no active hold remains');
  assert.equal(audit.held, 0, 'nothing is held');
  assert.deepEqual({ balance: audit.balance, held: audit.held, spent: audit.spent }, audit.derived, 'cached balances == derived from entries');
  return audit;
}

/** The hold a request placed (from the database), if any. */
export function holdOf(gw: GatewayProcess, requestId: string): { amount: number; status: string } | undefined {
  return readDatabase(gw.dbPath, (db) => db.prepare('SELECT amount, status FROM holds WHERE request_id = ?').get(requestId)) as
    | { amount: number; status: string }
    | undefined;
}

/** Ledger entry kinds written for a key (all requests), e.g. to prove no hold was ever placed. */
export function ledgerKinds(gw: GatewayProcess, keyId: string): string[] {
  const rows = readDatabase(gw.dbPath, (db) => db.prepare('SELECT kind FROM ledger_entries WHERE key_id = ? ORDER BY id').all(keyId)) as Array<{ kind: string }>;
  return rows.map((r) => r.kind);
}

export interface LedgerEntry {
  kind: 'topup' | 'hold' | 'capture' | 'release' | 'adjust';
  amount: number;
}

export interface HoldRecord {
  amount: number;
  status: 'active' | 'captured' | 'released' | 'expired';
}

export interface LedgerTrail {
  /** Every ledger entry of the key, by request id. */
  entries: Map<string, LedgerEntry[]>;
  /** Every hold row of the key, by request id. */
  holds: Map<string, HoldRecord>;
  /** Request ids that have a usage row (any key). */
  usageRequestIds: Set<string>;
}

/** Reads the append-only entries and the hold rows of one key. */
export function ledgerTrail(dbPath: string, keyId: string): LedgerTrail {
  return readDatabase(dbPath, (db) => {
    const entries = new Map<string, LedgerEntry[]>();
    const rows = db.prepare('SELECT request_id, kind, amount FROM ledger_entries WHERE key_id = ? ORDER BY id').all(keyId) as Array<
      { request_id: string } & LedgerEntry
    >;
    for (const row of rows) {
      const list = entries.get(row.request_id) ?? [];
      list.push({ kind: row.kind, amount: row.amount });
      entries.set(row.request_id, list);
    }
    const holds = new Map<string, HoldRecord>();
    for (const row of db.prepare('SELECT request_id, amount, status FROM holds WHERE key_id = ?').all(keyId) as Array<{ request_id: string } & HoldRecord>) {
      holds.set(row.request_id, { amount: row.amount, status: row.status });
    }
    // The rows that go with money; a refusal's row (usage_source 'none') moves none.
    const usageRequestIds = new Set(
      (db.prepare("SELECT request_id FROM usage_records WHERE usage_source <> 'none'").all() as Array<{ request_id: string }>).map((r) => r.request_id),
    );
    return { entries, holds, usageRequestIds };
  });
}

// ---------------------------------------------------------------- usage rows

/** One row of `tollgate usage --json` (product.md §2). */
export interface UsageRow {
  request_id: string;
  time: string;
  key_id: string;
  model: string;
  provider: string;
  upstream_model: string;
  status: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost: number;
  usage_source: 'upstream' | 'estimated' | 'none';
  attempts: Array<{ provider: string; status: number; duration_ms: number }>;
  /** The client API: chat, embeddings, messages, responses (ADR 0040). */
  endpoint: string;
  /** The agent session the client named, or null (ADR 0040). */
  session_id: string | null;
}

/** `tollgate usage --json --key ID` through the real CLI: every row of the key, however many. */
export async function usageRows(gw: GatewayProcess, keyId: string): Promise<UsageRow[]> {
  const rows = parseJsonOutput<UsageRow[]>(await gw.cli(['usage', '--json', '--key', keyId, '--limit', '1000000']), 'usage --json');
  assert.ok(Array.isArray(rows));
  return rows;
}

export interface ExpectedRow {
  /** Names the case in failure messages (default: the request id). */
  label?: string;
  requestId: string;
  keyId: string;
  model: string;
  upstreamModel: string;
  provider?: string;
  /** The row's status (default 200); several values when the contract allows either. */
  status?: number | readonly number[];
  input?: number;
  output?: number;
  cached?: number;
  reasoning?: number;
  /** Exact cost in nano-dollars; omit to skip (estimated rows check bounds themselves). */
  costNano?: number;
  /** Default 'upstream'; 'any' when the contract leaves it open (failed requests). */
  source?: 'upstream' | 'estimated' | 'any';
  /** Expected attempt statuses, in order (default: [status]); 'any' checks only that each attempt names the provider. */
  attempts?: number[] | 'any';
}

/** Finds the row of `requestId` among `rows` and checks it field by field; returns it. */
export function assertUsageRow(rows: UsageRow[], exp: ExpectedRow): UsageRow {
  const matching = rows.filter((r) => r.request_id === exp.requestId);
  assert.equal(matching.length, 1, `exactly one usage row for ${exp.requestId}`);
  const row = matching[0]!;
  const provider = exp.provider ?? 'mock';
  const status = exp.status ?? 200;
  assert.equal(row.key_id, exp.keyId);
  assert.equal(row.model, exp.model);
  assert.equal(row.provider, provider);
  assert.equal(row.upstream_model, exp.upstreamModel);
  if (typeof status === 'number') assert.equal(row.status, status, 'status');
  else assert.ok(status.includes(row.status), `status ${row.status} is one of ${status.join(', ')}`);
  assert.ok(!Number.isNaN(Date.parse(row.time)), 'time is ISO 8601');
  if (exp.input !== undefined) assert.equal(row.input_tokens, exp.input, 'input_tokens');
  if (exp.output !== undefined) assert.equal(row.output_tokens, exp.output, 'output_tokens');
  assert.equal(row.cached_input_tokens, exp.cached ?? 0, 'cached_input_tokens');
  assert.equal(row.reasoning_tokens, exp.reasoning ?? 0, 'reasoning_tokens');
  if (exp.costNano !== undefined) assert.equal(usdToNano(row.cost), exp.costNano, 'usage row cost');
  if (exp.source === 'any') assert.ok(['upstream', 'estimated'].includes(row.usage_source), 'usage_source');
  else assert.equal(row.usage_source, exp.source ?? 'upstream', 'usage_source');
  assert.ok(Array.isArray(row.attempts));
  if (exp.attempts === 'any') {
    assert.ok(row.attempts.length >= 1, 'at least one attempt');
    for (const a of row.attempts) assert.equal(a.provider, provider, 'attempt provider');
    for (const a of row.attempts) assert.ok(Number.isInteger(a.status), 'attempt status');
  } else {
    assert.deepEqual(
      row.attempts.map((a) => ({ provider: a.provider, status: a.status })),
      (exp.attempts ?? [status as number]).map((s) => ({ provider, status: s })),
      'attempts',
    );
  }
  for (const a of row.attempts) assert.ok(Number.isInteger(a.duration_ms) && a.duration_ms >= 0, 'attempt duration_ms');
  return row;
}

/**
 * Cross-checks every usage row of a key against the ledger with one `usage --json` call: one row per
 * settled request, rows priced from their own token counts when the upstream reported usage (failed
 * requests: zero tokens, cost 0), estimated rows within their hold, and Σ row cost == ledger spent.
 */
export async function assertUsageAddsUp(gw: GatewayProcess, keyId: string, embeddingModels: readonly string[] = ['embed-test']): Promise<UsageRow[]> {
  const all = await usageRows(gw, keyId);
  const audit = assertLedgerSettled(gw, keyId);
  assert.equal(new Set(all.map((r) => r.request_id)).size, all.length, 'one row per request');
  // A request that moved no money (refused, quoted, replayed) has its row too: cost 0, no tokens, no hold.
  for (const row of all.filter((r) => r.usage_source === 'none')) {
    assert.deepEqual([row.cost, row.input_tokens, row.output_tokens], [0, 0, 0], `row ${row.request_id} of a request that moved no money`);
    assert.equal(holdOf(gw, row.request_id), undefined, `row ${row.request_id} of a request that moved no money had no hold`);
  }
  const rows = all.filter((r) => r.usage_source !== 'none');
  assert.equal(rows.length, audit.usageRows, 'usage --json lists every usage row');
  for (const row of rows) {
    const cost = usdToNano(row.cost);
    if (row.usage_source === 'upstream') {
      const expected = embeddingModels.includes(row.model)
        ? embeddingCostNano(row.input_tokens)
        : chatCostNano(row.input_tokens, row.output_tokens, row.cached_input_tokens);
      assert.equal(cost, expected, `row ${row.request_id} is priced from its tokens`);
    } else {
      const hold = holdOf(gw, row.request_id);
      assert.ok(hold, `estimated row ${row.request_id} had a hold`);
      assert.ok(cost > 0 && cost <= hold.amount, `estimated row ${row.request_id}: 0 < ${cost} <= hold ${hold.amount}`);
    }
    if (row.status !== 200) assert.ok(row.usage_source === 'estimated' || cost === 0, `failed request ${row.request_id} with upstream source costs 0`);
  }
  assert.equal(
    rows.reduce((sum, r) => sum + usdToNano(r.cost), 0),
    audit.spent,
    'the usage rows add up to what the ledger charged',
  );
  return rows;
}

/**
 * Usage-row expectations collected while a file's tests run and checked at the end with one
 * `tollgate usage --json --key ID` per key (each CLI run is a process start; one per request would
 * dominate the suite's time). Every failure is reported with its label.
 */
export class UsageExpectations {
  private readonly pending: Array<{ exp: ExpectedRow; extra: ((row: UsageRow) => void) | undefined }> = [];

  add(exp: ExpectedRow, extra?: (row: UsageRow) => void): void {
    this.pending.push({ exp, extra });
  }

  /**
   * Checks every expected row and, per key, that the rows add up to the ledger (assertUsageAddsUp, which
   * prices rows of `embeddingModels` as embeddings).
   */
  async verify(gw: GatewayProcess, keyIds: readonly string[], embeddingModels?: readonly string[]): Promise<void> {
    const unknown = this.pending.filter((p) => !keyIds.includes(p.exp.keyId));
    assert.deepEqual(unknown.map((p) => p.exp.label ?? p.exp.requestId), [], 'every expectation names a verified key');
    const failures: string[] = [];
    const rowsByKey = await Promise.all(keyIds.map((keyId) => assertUsageAddsUp(gw, keyId, embeddingModels)));
    for (const [i, keyId] of keyIds.entries()) {
      const rows = rowsByKey[i]!;
      for (const { exp, extra } of this.pending.filter((p) => p.exp.keyId === keyId)) {
        try {
          const row = assertUsageRow(rows, exp);
          extra?.(row);
        } catch (error) {
          failures.push(`${exp.label ?? exp.requestId} (${exp.requestId}): ${(error as Error).message}`);
        }
      }
    }
    assert.deepEqual(failures, [], `usage rows that do not match:\n${failures.join('\n')}`);
    assert.ok(this.pending.length > 0, 'some rows were expected');
  }
}

// ---------------------------------------------------------------- the sampler thread

export interface SamplerReport {
  samples: number;
  /** The smallest balance − held seen (Infinity when no sample was taken). */
  minAvailable: number;
  maxHeld: number;
  maxActiveHolds: number;
  /** Snapshots that broke available ≥ 0 (unless allowed) or cached == derived; at most 20 kept. */
  violations: string[];
}

export interface SamplerOptions {
  /** The documented overage (a charge above its hold) may take available below 0. */
  allowNegative?: boolean;
  /** Snapshot non-stop for busyMs, then rest idleMs, and again (default 4 / 2). */
  busyMs?: number;
  idleMs?: number;
}

export interface LedgerSampler {
  stop(): Promise<SamplerReport>;
}

// Plain CommonJS, run by `new Worker(..., { eval: true })`: a tight loop of consistent snapshots on a
// read-only connection, independent of the test's busy event loop.
const SAMPLER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.betterSqlite3);
const db = new Database(workerData.dbPath, { readonly: true, fileMustExist: true });
const keyRow = db.prepare(workerData.keySql);
const derivedRow = db.prepare(workerData.derivedSql);
const activeRow = db.prepare("SELECT COUNT(*) AS n, COALESCE(SUM(amount), 0) AS total FROM holds WHERE key_id = ? AND status = 'active'");
const snapshot = db.transaction(() => ({ key: keyRow.get(workerData.keyId), derived: derivedRow.get(workerData.keyId), active: activeRow.get(workerData.keyId) }));
const report = { samples: 0, minAvailable: Infinity, maxHeld: 0, maxActiveHolds: 0, violations: [] };
let stopping = false;
parentPort.on('message', () => { stopping = true; });
function note(text) { if (report.violations.length < 20) report.violations.push(text); }
function tick() {
  const deadline = Date.now() + workerData.busyMs;
  while (Date.now() < deadline) {
    const s = snapshot.deferred();
    report.samples += 1;
    const available = s.key.balance - s.key.held;
    if (available < report.minAvailable) report.minAvailable = available;
    if (s.key.held > report.maxHeld) report.maxHeld = s.key.held;
    if (s.active.n > report.maxActiveHolds) report.maxActiveHolds = s.active.n;
    if (available < 0 && !workerData.allowNegative) note('available ' + available + ' < 0 (balance ' + s.key.balance + ', held ' + s.key.held + ')');
    if (s.key.balance !== s.derived.balance || s.key.held !== s.derived.held || s.key.spent !== s.derived.spent) {
      note('cached ' + JSON.stringify(s.key) + ' != derived ' + JSON.stringify(s.derived));
    }
    if (s.key.held !== s.active.total) note('held ' + s.key.held + ' != sum of active holds ' + s.active.total + ' (' + s.active.n + ' active)');
  }
  if (stopping) { db.close(); parentPort.postMessage(report); parentPort.close(); }
  else setTimeout(tick, workerData.idleMs);
}
tick();
`;

/**
 * Samples one key's ledger in a worker thread until stopped: every snapshot (one read transaction) must
 * have balance − held ≥ 0, cached == derived, and held == the sum of active holds.
 */
export async function startLedgerSampler(dbPath: string, keyId: string, opts: SamplerOptions = {}): Promise<LedgerSampler> {
  // The driver package this Node loads (src/storage/sqlite/driver.ts).
  const betterSqlite3 = createRequire(import.meta.url).resolve(SQLITE_DRIVER);
  const workerData = { dbPath, keyId, betterSqlite3, derivedSql: DERIVED_BALANCES_SQL, keySql: KEY_FIGURES_SQL, allowNegative: opts.allowNegative ?? false, busyMs: opts.busyMs ?? 4, idleMs: opts.idleMs ?? 2 };
  const worker = new Worker(SAMPLER_SOURCE, { eval: true, workerData });
  await new Promise<void>((resolve, reject) => {
    worker.once('online', resolve);
    worker.once('error', reject);
  });
  const done = new Promise<SamplerReport>((resolve, reject) => {
    worker.once('message', (report: SamplerReport) => resolve(report));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`ledger sampler exited with ${code} before reporting`)));
  });
  done.catch(() => undefined); // surfaced by stop()
  return {
    async stop() {
      worker.postMessage('stop');
      try {
        return await done;
      } finally {
        await worker.terminate();
      }
    },
  };
}

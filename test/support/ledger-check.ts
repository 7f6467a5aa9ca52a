// Helpers for the ledger e2e tests: exact USD ⇄ nano-dollar conversion, a seeded PRNG, the per-request
// ledger trail read straight from the SQLite file, and usage rows read through the real CLI.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { GatewayProcess } from './gateway-process.js';

const NANO_DIGITS = 9;

/**
 * An exact USD decimal ("0.000123", "1e-7", or a JSON number, read through its shortest round-trip
 * decimal form — the text the server wrote) → integer nano-dollars. Throws on more than 9 decimals.
 */
export function usdToNano(value: number | string): number {
  const text = typeof value === 'number' ? String(value) : value.trim();
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) throw new Error(`not a decimal USD amount: ${JSON.stringify(value)}`);
  const [, sign = '', whole = '', fraction = '', exponent] = match;
  let digits = whole + fraction;
  let decimals = fraction.length - Number(exponent ?? 0);
  if (decimals < 0) {
    digits += '0'.repeat(-decimals);
    decimals = 0;
  }
  while (decimals > NANO_DIGITS && digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    decimals -= 1;
  }
  if (decimals > NANO_DIGITS) throw new Error(`USD amount ${text} has more than 9 decimals`);
  const nano = BigInt(digits || '0') * 10n ** BigInt(NANO_DIGITS - decimals);
  if (nano > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`USD amount ${text} is out of range`);
  return Number(sign === '-' ? -nano : nano);
}

/** Integer nano-dollars → an exact decimal USD string ("0.0115", "-0.000000001"). */
export function nanoToUsdString(nano: number): string {
  if (!Number.isSafeInteger(nano)) throw new Error(`not an integer nano amount: ${nano}`);
  const abs = BigInt(Math.abs(nano));
  const whole = abs / 1_000_000_000n;
  const fraction = (abs % 1_000_000_000n).toString().padStart(NANO_DIGITS, '0').replace(/0+$/, '');
  return `${nano < 0 ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** mulberry32: a tiny seeded PRNG, uniform in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Rng {
  readonly seed: number;
  next(): number;
  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
  /** Picks a key by weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K;
}

export function seededRng(seed: number): Rng {
  const next = mulberry32(seed);
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  return {
    seed,
    next,
    int,
    pick: (items) => items[int(0, items.length - 1)]!,
    chance: (p) => next() < p,
    weighted(weights) {
      const entries = Object.entries(weights) as Array<[keyof typeof weights, number]>;
      const total = entries.reduce((sum, [, w]) => sum + w, 0);
      let roll = next() * total;
      for (const [key, w] of entries) {
        roll -= w;
        if (roll < 0) return key;
      }
      return entries[entries.length - 1]![0];
    },
  };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls until `check` returns true or the time runs out; returns the last answer. */
export async function pollUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, intervalMs = 20): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(intervalMs);
  }
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

/** Reads the append-only entries and the hold rows of one key (read-only; WAL lets it run beside the server). */
export function ledgerTrail(dbPath: string, keyId: string): LedgerTrail {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
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
    const usageRequestIds = new Set((db.prepare('SELECT request_id FROM usage_records').all() as Array<{ request_id: string }>).map((r) => r.request_id));
    return { entries, holds, usageRequestIds };
  } finally {
    db.close();
  }
}

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
  usage_source: 'upstream' | 'estimated';
  attempts: Array<{ provider: string; status: number; duration_ms: number }>;
}

/** `tollgate usage --json --key ID` through the real CLI. */
export async function usageRowsViaCli(gw: GatewayProcess, keyId: string): Promise<UsageRow[]> {
  const result = await gw.cli(['usage', '--json', '--key', keyId, '--limit', '1000000']);
  if (result.code !== 0) throw new Error(`tollgate usage failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout) as UsageRow[];
}

/** Stops the gateway (SIGTERM, then SIGKILL after `graceMs`), closes the mock and removes the temp dir; never throws. */
export async function shutdown(gw: GatewayProcess | undefined, mock: { close(): Promise<void> } | undefined, graceMs = 5_000): Promise<void> {
  // The mock first: in-flight upstream calls fail at once instead of holding the gateway's shutdown.
  await mock?.close().catch((err: unknown) => console.error('mock close failed:', err));
  if (!gw) return;
  try {
    let timer: NodeJS.Timeout | undefined;
    const stopped = gw.stop('SIGTERM');
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), graceMs)));
    if ((await Promise.race([stopped, timedOut])) === 'timeout') await gw.stop('SIGKILL');
    clearTimeout(timer);
  } catch (err) {
    console.error('gateway stop failed:', err);
  } finally {
    gw.cleanup();
  }
}

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
const keyRow = db.prepare('SELECT balance, held, spent FROM api_keys WHERE id = ?');
const derivedRow = db.prepare(\`SELECT
  COALESCE(SUM(CASE kind WHEN 'topup' THEN amount WHEN 'adjust' THEN amount WHEN 'capture' THEN -amount ELSE 0 END), 0) AS balance,
  COALESCE(SUM(CASE kind WHEN 'hold' THEN amount WHEN 'release' THEN -amount ELSE 0 END), 0) AS held,
  COALESCE(SUM(CASE kind WHEN 'capture' THEN amount ELSE 0 END), 0) AS spent
  FROM ledger_entries WHERE key_id = ?\`);
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
  const betterSqlite3 = createRequire(import.meta.url).resolve('better-sqlite3');
  const workerData = { dbPath, keyId, betterSqlite3, allowNegative: opts.allowNegative ?? false, busyMs: opts.busyMs ?? 4, idleMs: opts.idleMs ?? 2 };
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

// Shared plumbing for the resilience end-to-end tests (test/e2e/resilience-*.test.ts): configs with several
// upstream accounts (one mock each), the ledger checks every resilience test ends with (no active hold,
// cached == derived, exact conservation, one capture per success), raw SSE reads that tolerate error events,
// and /proc readings of the gateway process (sockets, memory).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import net from 'node:net';
import { ssePayloads, validateStreamEvents, type Json } from './e2e.js';
import { readDatabase, type GatewayProcess, type KeyAudit } from './gateway-process.js';
import { usageRows, type UsageRow } from './ledger-check.js';
import { TEST_PRICES, usdToNano } from './money.js';

export const hello = [{ role: 'user', content: 'Hello' }];

// ---------------------------------------------------------------- configs

export interface ProviderSpec {
  /** base_url (ends in /v1 for openai-compatible; the resource origin for azure-openai). */
  url: string;
  /** openai-compatible by default. */
  kind?: 'openai-compatible' | 'azure-openai';
  /** Inline YAML for the provider's own keys, e.g. `retries: 0` or `timeouts: { first_byte_ms: 300 }`. */
  extra?: string[];
}

export interface ModelSpec {
  upstreams: Array<{ provider: string; model?: string; weight?: number }>;
  routing?: 'fallback' | 'weighted';
}

export interface ConfigSpec {
  providers: Record<string, ProviderSpec>;
  models: Record<string, ModelSpec>;
  /** Extra lines under `server:`. */
  server?: string[];
  /** Lines under `billing:`. */
  billing?: string[];
}

/**
 * A tollgate.yaml with openai-compatible (or azure-openai) providers (api key sk-mock-upstream-secret; timeouts as in
 * mockConfig unless overridden) and chat models at TEST_PRICES (max_output_tokens 1000). The upstream
 * model defaults to gpt-4o-mini.
 */
export function resilienceConfig(spec: ConfigSpec): string {
  const lines = ['server:', '  host: 127.0.0.1', '  port: 0', ...(spec.server ?? []).map((l) => `  ${l}`), 'database: "{{DB}}"', 'providers:'];
  for (const [id, p] of Object.entries(spec.providers)) {
    lines.push(`  ${id}:`, `    kind: ${p.kind ?? 'openai-compatible'}`, `    base_url: ${p.url}`, '    api_key: sk-mock-upstream-secret');
    const extra = p.extra ?? [];
    if (!extra.some((l) => l.startsWith('timeouts:'))) lines.push('    timeouts: { connect_ms: 2000, first_byte_ms: 5000, idle_ms: 5000, total_ms: 30000 }');
    for (const l of extra) lines.push(`    ${l}`);
  }
  lines.push('models:');
  for (const [id, m] of Object.entries(spec.models)) {
    lines.push(`  ${id}:`, '    type: chat');
    if (m.routing) lines.push(`    routing: ${m.routing}`);
    lines.push('    upstreams:');
    for (const u of m.upstreams) lines.push(`      - { provider: ${u.provider}, model: ${u.model ?? 'gpt-4o-mini'}${u.weight === undefined ? '' : `, weight: ${u.weight}`} }`);
    lines.push(
      `    price: { input: ${TEST_PRICES.input}, output: ${TEST_PRICES.output}, cached_input: ${TEST_PRICES.cachedInput} }`,
      '    context_window: 8000',
      '    max_output_tokens: 1000',
    );
  }
  if (spec.billing) lines.push('billing:', ...spec.billing.map((l) => `  ${l}`));
  return `${lines.join('\n')}\n`;
}

/** Cool-down effectively off: failures are provoked on purpose and must not leak from one test into the next. */
export const NO_COOLDOWN = 'cooldown: { failures: 1000000, seconds: 1 }';

// ---------------------------------------------------------------- the ledger

export interface LedgerTotals {
  topups: number;
  captures: number;
  captureCount: number;
  holdEntries: number;
  releaseEntries: number;
  adjusts: number;
  /** Rows of the holds table, by status. */
  holdsByStatus: Record<string, number>;
  holdRows: number;
}

/** Sums of one key's append-only ledger entries and its hold rows, straight from the database. */
export function ledgerTotals(gw: GatewayProcess, keyId: string): LedgerTotals {
  return readDatabase(gw.dbPath, (db) => {
    const sums = db
      .prepare(
        `SELECT
           COALESCE(SUM(CASE kind WHEN 'topup' THEN amount ELSE 0 END), 0) AS topups,
           COALESCE(SUM(CASE kind WHEN 'capture' THEN amount ELSE 0 END), 0) AS captures,
           COALESCE(SUM(CASE kind WHEN 'capture' THEN 1 ELSE 0 END), 0) AS captureCount,
           COALESCE(SUM(CASE kind WHEN 'hold' THEN 1 ELSE 0 END), 0) AS holdEntries,
           COALESCE(SUM(CASE kind WHEN 'release' THEN 1 ELSE 0 END), 0) AS releaseEntries,
           COALESCE(SUM(CASE kind WHEN 'adjust' THEN amount ELSE 0 END), 0) AS adjusts
         FROM ledger_entries WHERE key_id = ?`,
      )
      .get(keyId) as Omit<LedgerTotals, 'holdsByStatus' | 'holdRows'>;
    const holdsByStatus: Record<string, number> = {};
    let holdRows = 0;
    for (const row of db.prepare('SELECT status, COUNT(*) AS n FROM holds WHERE key_id = ? GROUP BY status').all(keyId) as Array<{ status: string; n: number }>) {
      holdsByStatus[row.status] = row.n;
      holdRows += row.n;
    }
    return { ...sums, holdsByStatus, holdRows };
  });
}

/** Ledger entry kinds of one request, in order. */
export function requestEntries(gw: GatewayProcess, requestId: string): Array<{ kind: string; amount: number }> {
  return readDatabase(gw.dbPath, (db) => db.prepare('SELECT kind, amount FROM ledger_entries WHERE request_id = ? ORDER BY id').all(requestId)) as Array<{
    kind: string;
    amount: number;
  }>;
}

/**
 * The end-of-test ledger check: no active hold and nothing held, cached balance/held/spent == derived from
 * entries, conservation exact (top-ups == final balance + Σ captures, with the initial balance being the
 * first top-up entry: `expectedTopupsNano` when given), every hold row paired with one hold entry, and
 * one usage row per settled request.
 */
export function assertLedgerExact(gw: GatewayProcess, keyId: string, expectedTopupsNano?: number): { audit: KeyAudit; totals: LedgerTotals } {
  const audit = gw.audit(keyId);
  const totals = ledgerTotals(gw, keyId);
  assert.equal(audit.activeHolds, 0, `no active hold remains (${JSON.stringify(totals.holdsByStatus)})`);
  assert.equal(audit.held, 0, 'nothing is held');
  assert.deepEqual({ balance: audit.balance, held: audit.held, spent: audit.spent }, audit.derived, 'cached balances == derived from ledger entries');
  if (expectedTopupsNano !== undefined) assert.equal(totals.topups, expectedTopupsNano, 'the top-ups are what the test paid in');
  assert.equal(totals.adjusts, 0, 'no adjustments');
  assert.equal(totals.topups, audit.balance + totals.captures, 'conservation: initial + top-ups == final balance + Σ captures (exact)');
  assert.equal(audit.spent, totals.captures, 'spent == Σ captures');
  assert.equal(totals.holdEntries, totals.holdRows, 'one hold entry per hold row');
  assert.equal(totals.captureCount, audit.captures);
  return { audit, totals };
}

/** `tollgate usage --json` rows of a key, by request id. */
export async function usageById(gw: GatewayProcess, keyId: string): Promise<Map<string, UsageRow>> {
  const rows = await usageRows(gw, keyId);
  const byId = new Map(rows.map((r) => [r.request_id, r]));
  assert.equal(byId.size, rows.length, 'one usage row per request id');
  return byId;
}

/** The row's attempts as `provider:status` strings, e.g. ['a:500', 'b:200'], after checking their shape. */
export function attemptsOf(row: UsageRow): string[] {
  assert.ok(Array.isArray(row.attempts), 'attempts is an array');
  for (const a of row.attempts) {
    assert.deepEqual(Object.keys(a).sort(), ['duration_ms', 'provider', 'status'], 'an attempt is {provider, status, duration_ms}');
    assert.ok(Number.isInteger(a.duration_ms) && a.duration_ms >= 0, 'duration_ms is a non-negative integer');
  }
  return row.attempts.map((a) => `${a.provider}:${a.status}`);
}

export const costNanoOf = (row: UsageRow): number => usdToNano(row.cost);

// ---------------------------------------------------------------- raw streams

export interface RawStream {
  status: number;
  requestId: string;
  /** Whole body text. */
  text: string;
  /** For a 200 event stream: the validated events (chunks and the error event, if any). */
  chunks: Json[];
  error: Json | undefined;
  /** For a non-200 answer: the JSON body. */
  json: Json;
}

/** POSTs a streaming chat request and reads the whole answer: an event stream (checked framing) or a JSON error. */
export async function postStream(gw: GatewayProcess, key: string, body: Record<string, unknown>, timeoutMs = 30_000): Promise<RawStream> {
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  const requestId = res.headers.get('x-request-id') ?? '';
  if (res.status === 200 && /^text\/event-stream/.test(res.headers.get('content-type') ?? '')) {
    const { chunks, error } = validateStreamEvents(ssePayloads(text));
    return { status: 200, requestId, text, chunks, error, json: undefined };
  }
  let json: Json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, requestId, text, chunks: [], error: undefined, json };
}

/** Runs `task(i)` for i in [0, n) with at most `concurrency` running at once; results in order. */
export async function pool<T>(n: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(n);
  let next = 0;
  const workers = Array.from({ length: Math.min(n, concurrency) }, async () => {
    while (next < n) {
      const i = next++;
      results[i] = await task(i);
    }
  });
  await Promise.all(workers);
  return results;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The p-th percentile (0..100) of the values, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  assert.ok(values.length > 0, 'no values');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Resolves with [code, signal] when the child exits (attach before signalling it). */
export function exitOf(child: ChildProcess): Promise<[number | null, NodeJS.Signals | null]> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve([child.exitCode, child.signalCode]);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
}

// ---------------------------------------------------------------- the gateway process, from /proc

interface TcpEntry {
  localPort: number;
  remotePort: number;
  /** Kernel state, hex: 0A = LISTEN, 01 = ESTABLISHED, ... */
  state: string;
}

function tcpTable(): Map<string, TcpEntry> {
  const table = new Map<string, TcpEntry>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const port = (addr: string) => parseInt(addr.split(':')[1]!, 16);
      table.set(f[9]!, { localPort: port(f[1]!), remotePort: port(f[2]!), state: f[3]! });
    }
  }
  return table;
}

export interface SocketCount {
  /** Every fd of the process that is a socket. */
  total: number;
  /** TCP connections accepted on the gateway's port (clients). */
  clients: number;
  /** TCP connections to the given upstream ports. */
  upstream: number;
  /** Listening sockets. */
  listening: number;
  /** Sockets that are neither (Unix sockets, other TCP). */
  other: number;
}

/**
 * The gateway process's sockets: every `/proc/<pid>/fd/*` whose link is `socket:[inode]`, classified by
 * the inode's row in /proc/net/tcp{,6} (same network namespace).
 */
export function gatewaySockets(pid: number, gatewayPort: number, upstreamPorts: readonly number[]): SocketCount {
  const inodes: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let link: string;
    try {
      link = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    const m = /^socket:\[(\d+)\]$/.exec(link);
    if (m) inodes.push(m[1]!);
  }
  const table = tcpTable();
  const count: SocketCount = { total: inodes.length, clients: 0, upstream: 0, listening: 0, other: 0 };
  for (const inode of inodes) {
    const entry = table.get(inode);
    if (!entry) count.other += 1;
    else if (entry.state === '0A') count.listening += 1;
    else if (entry.localPort === gatewayPort) count.clients += 1;
    else if (upstreamPorts.includes(entry.remotePort)) count.upstream += 1;
    else count.other += 1;
  }
  return count;
}

/** Resident and peak resident memory of a process, in bytes (VmRSS, VmHWM). */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

export const portOf = (url: string): number => Number(new URL(url).port);

// ---------------------------------------------------------------- a host that never answers a SYN

export interface BlackHole {
  url: string;
  close(): void;
}

/**
 * A loopback port whose connection attempts hang (for connect timeouts): a child process listens with a
 * backlog of 1 and is stopped (SIGSTOP), and two filler connections fill its accept queue, so the kernel
 * drops every further SYN. (In this sandbox, "non-routable" addresses like 10.255.255.1 are answered at
 * once by a transparent proxy, so they cannot provoke a connect timeout.)
 */
export async function startBlackHole(): Promise<BlackHole> {
  const child = spawn(
    process.execPath,
    ['-e', "const s=require('net').createServer(()=>{});s.listen({port:0,host:'127.0.0.1',backlog:1},()=>process.stdout.write(s.address().port+'\\n'))"],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    child.once('error', reject);
  });
  process.kill(child.pid!, 'SIGSTOP');
  const fillers: net.Socket[] = [];
  const connectWithin = (ms: number) =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect({ port, host: '127.0.0.1' });
      fillers.push(socket);
      socket.on('error', () => resolve(false));
      socket.once('connect', () => resolve(true));
      setTimeout(() => resolve(false), ms).unref();
    });
  // Fill the queue until a connection attempt hangs.
  let hanging = false;
  for (let i = 0; i < 8 && !hanging; i++) hanging = !(await connectWithin(300));
  assert.ok(hanging, 'the black hole drops SYNs once its accept queue is full');
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close() {
      for (const socket of fillers) socket.destroy();
      child.kill('SIGKILL');
    },
  };
}

// What a benchmark run reports: medians per scenario, the gateway's added latency, the billing check
// against its database, the printed table and the JSON file in bench/results/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openSqliteFile } from '../dist/storage/sqlite/driver.js';
import { median, round } from './numbers.mjs';

const RESULTS_DIR = fileURLToPath(new URL('results', import.meta.url));
/** Issue 14's targets, and issue 24's for a recorded Claude Code turn, printed against the run's figures (see bench/README.md). */
const TARGETS = { chatCpuMs: 0.15, streamCpuMs: 0.22, throughputVsPortkey: 6, ttfbAddedMs: 0.3, peakRssMb: 150, idleRssMb: 90, claudeCodeTurnCpuMs: 1 };

// ---------------------------------------------------------------- summarising

/** The metrics the table shows, each a getter on one run's result. */
const METRICS = {
  rps: (r) => r.rps,
  p50: (r) => r.latencyMs.p50,
  p99: (r) => r.latencyMs.p99,
  ttfbP50: (r) => r.ttfbMs.p50,
  ttfbP99: (r) => r.ttfbMs.p99,
  cpuMsPerRequest: (r) => r.cpuMsPerRequest[r.subject],
  mockCpuMsPerRequest: (r) => r.cpuMsPerRequest.mock,
  loadCores: (r) => r.cpuCores.load,
  subjectCores: (r) => r.cpuCores[r.subject],
  subjectSystemShare: (r) => r.cpuSystemShare[r.subject],
  subjectRun: (r) => r.mainThread[r.subject].run,
  subjectWait: (r) => r.mainThread[r.subject].wait,
  subjectBlocked: (r) => r.mainThread[r.subject].blocked,
  otherCores: (r) => r.otherCores,
  postgresCpuMsPerRequest: (r) => r.postgresCpuMsPerRequest ?? null,
  contextSwitchesPerRequest: (r) => r.contextSwitchesPerRequest ?? null,
  promotedBytesPerRequest: (r) => r.gc?.promotedBytesPerRequest ?? null,
  scavengesPer10k: (r) => r.gc?.scavengesPer10k ?? null,
  fullGcsPer10k: (r) => r.gc?.fullGcsPer10k ?? null,
};

/** Median of every metric per scenario, plus min/max of the ones whose noise we report. */
export function summarise(results, scenarios) {
  return scenarios.map((scenario) => {
    const runs = results.filter((r) => r.id === scenario.id);
    const row = { id: scenario.id, label: scenario.label, kind: scenario.kind, stream: scenario.stream, via: scenario.via, subject: scenario.subject.name, runs: runs.length, errors: runs.reduce((n, r) => n + r.errors, 0) };
    for (const [name, get] of Object.entries(METRICS)) row[name] = round(median(runs.map(get)), 4);
    row.spread = {};
    for (const name of ['rps', 'p50', 'cpuMsPerRequest', 'promotedBytesPerRequest', 'fullGcsPer10k']) {
      const xs = runs.map(METRICS[name]).filter((x) => x !== null);
      if (xs.length === 0 || !row[name]) continue; // every request failed: nothing to compare
      row.spread[name] = { min: Math.min(...xs), max: Math.max(...xs), pct: round(((Math.max(...xs) - Math.min(...xs)) / row[name]) * 100, 1) };
    }
    return row;
  });
}

/** Gateway minus direct, for each scenario kind the gateway ran. */
export function addedLatency(summary) {
  const added = [];
  for (const row of summary.filter((r) => r.via !== 'direct')) {
    const base = summary.find((r) => r.via === 'direct' && r.kind === row.kind);
    if (!base) continue;
    added.push({
      via: row.via,
      kind: row.kind,
      p50Ms: round(row.p50 - base.p50),
      p99Ms: round(row.p99 - base.p99),
      ttfbP50Ms: row.stream ? round(row.ttfbP50 - base.ttfbP50) : null,
      cpuMsPerRequest: row.cpuMsPerRequest,
    });
  }
  return added;
}

const BILLING_COUNTS = {
  usageRows: 'SELECT COUNT(*) AS n FROM usage_records',
  captures: "SELECT COUNT(*) AS n FROM ledger_entries WHERE kind = 'capture'",
  activeHolds: "SELECT COUNT(*) AS n FROM holds WHERE status = 'active'",
};

/** Every successful gateway response must have left exactly one usage row and no open hold behind. */
export async function billingCheck(database, results, via = (v) => v === 'tollgate' || v === 'tollgate-idem', extraServed = 0) {
  const served = extraServed + results.filter((r) => via(r.via)).reduce((n, r) => n + r.completed.warmup + r.completed.measure + r.completed.drain - r.errors, 0);
  const counts = {};
  if (database.startsWith('sqlite:')) {
    const db = openSqliteFile(database.slice('sqlite:'.length), { readonly: true, fileMustExist: true });
    try {
      for (const [name, sql] of Object.entries(BILLING_COUNTS)) counts[name] = db.prepare(sql).get().n;
    } finally {
      db.close();
    }
  } else {
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    try {
      for (const [name, sql] of Object.entries(BILLING_COUNTS)) counts[name] = Number((await client.query(sql)).rows[0].n);
    } finally {
      await client.end();
    }
  }
  return { served, ...counts };
}

// ---------------------------------------------------------------- printing

const LABELS = {
  chat: 'chat',
  stream: 'chat stream',
  open: 'chat, open loop',
  embed: 'embeddings',
  'messages-stream': 'Claude Code turn, /v1/messages stream',
  'responses-stream': 'Codex turn, /v1/responses stream',
};
const VIA = {
  direct: 'direct → mock',
  tollgate: 'via Tollgate',
  'tollgate-idem': 'via Tollgate, an Idempotency-Key on each',
  portkey: 'via Portkey',
  'tollgate-pg': 'PostgreSQL, 1 gateway, hot key',
  'tollgate-pg-keys': 'PostgreSQL, 1 gateway, 100 keys',
  'tollgate-account': 'via Tollgate, 10 keys of one account',
  'tollgate-pg-account': 'PostgreSQL, 1 gateway, 10 keys of one account',
  'tollgate-pg2': 'PostgreSQL, 2 gateways, hot key',
  'tollgate-pg3': 'PostgreSQL, 3 gateways, hot key',
};

function fmt(x, digits = 2) {
  return x === null || x === undefined ? '–' : x.toFixed(digits);
}

function table(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function printReport(report) {
  const { options, summary, added, memory, billing } = report;
  const runs = options.runs > 1 ? `median of ${options.runs} runs` : '1 run';
  console.log(`\nTollgate benchmark — ${options.connections} connections, ${options.warmup} s / ${options.warmupRequests} requests warm-up, ${options.requests ? `${options.requests} requests` : `${options.duration} s`} measured, ${runs}, ledger on ${options.postgresUrl ? 'SQLite (via Tollgate) and PostgreSQL (rows named so)' : 'SQLite'}${options.limits ? `, key limits on (${options.redisUrl ? 'Redis' : 'in-process'} counters)` : ''}`);
  if (options.gatewayFlags?.length) console.log(`gateway node flags: ${options.gatewayFlags.join(' ')}`);
  console.log(`machine: ${report.machine.cpus} CPUs, load average at start ${report.machine.loadavg.join(' ')}\n`);
  const rows = summary.map((r) => [
    r.label ?? `${LABELS[r.kind]}, ${VIA[r.via]}`,
    fmt(r.rps, 0),
    fmt(r.p50),
    fmt(r.p99),
    r.stream ? fmt(r.ttfbP50) : '–',
    r.stream ? fmt(r.ttfbP99) : '–',
    `${fmt(r.cpuMsPerRequest, 3)} (${r.subject})`,
    r.subjectSystemShare === null ? '–' : `${Math.round(r.subjectSystemShare * 100)}%`,
    fmt(r.subjectCores),
    [r.subjectRun, r.subjectWait, r.subjectBlocked].map((x) => Math.round(x * 100)).join('/'),
    fmt(r.loadCores),
    fmt(r.otherCores),
    r.errors,
  ]);
  console.log(table(['scenario', 'req/s', 'p50 ms', 'p99 ms', 'TTFB p50', 'TTFB p99', 'CPU ms/req', 'kernel', 'cores', 'loop run/wait/blk %', 'loadgen cores', 'others cores', 'errors'], rows));
  console.log('\nCPU ms/req: utime+stime of the named process over the window ÷ requests completed in it; kernel: the stime share of it.');
  console.log('cores: that process\'s CPU use; loop run/wait/blk: its main thread running / runnable but waiting for a CPU / blocked or idle.');
  console.log('others cores: CPU used by everything else on the machine during the window (other people\'s jobs = noise).');

  if (added.length > 0) console.log('\nAdded by the gateway (gateway − direct):');
  const LABEL_WIDTH = Math.max(11, ...added.map((a) => LABELS[a.kind].length));
  for (const a of added) {
    const ttfb = a.ttfbP50Ms === null ? '' : `, first chunk p50 ${signed(a.ttfbP50Ms)} ms`;
    console.log(`  ${VIA[a.via].padEnd(12)} ${LABELS[a.kind].padEnd(LABEL_WIDTH)} p50 ${signed(a.p50Ms)} ms, p99 ${signed(a.p99Ms)} ms${ttfb}; CPU ${fmt(a.cpuMsPerRequest, 3)} ms/request`);
  }
  if (summary.some((r) => r.kind === 'open')) {
    console.log(`(open loop: ${options.rate} requests/s whatever the server does; latency from when each request was due, so queueing shows)`);
  }
  for (const [name, m] of Object.entries(memory)) {
    const idle = m.idleRssMb === undefined ? '' : `idle ${m.idleRssMb} MB (after one request of each scenario), `;
    console.log(`${name} RSS: ${idle}${m.rssMb} MB after the run, peak ${m.peakRssMb} MB`);
  }
  printPortkeyComparison(summary, added, memory);
  printTargets(summary, added, memory, options);
  for (const [name, check] of Object.entries(billing ?? {})) {
    const ok = check.usageRows === check.served && check.captures === check.served && check.activeHolds === 0;
    console.log(`billing (${name}): ${check.served} successful gateway responses, ${check.usageRows} usage rows, ${check.captures} captures, ${check.activeHolds} open holds — ${ok ? 'all settled' : 'MISMATCH'}`);
  }
  printPostgresComparison(summary);
  if (options.gc) printGc(summary);
  if (options.runs > 1) {
    console.log('\nNoise across runs (min–max, spread as % of the median):');
    for (const r of summary.filter((row) => row.spread.rps && row.spread.p50 && row.spread.cpuMsPerRequest)) {
      const s = r.spread;
      console.log(`  ${r.id.padEnd(16)} req/s ${fmt(s.rps.min, 0)}–${fmt(s.rps.max, 0)} (${s.rps.pct}%), p50 ${fmt(s.p50.min)}–${fmt(s.p50.max)} ms (${s.p50.pct}%), CPU/req ${fmt(s.cpuMsPerRequest.min, 3)}–${fmt(s.cpuMsPerRequest.max, 3)} ms (${s.cpuMsPerRequest.pct}%)`);
    }
  }
  printErrors(report.results);
}

/** --gc: what each gateway row left to V8's collector in its window (medians; min–max over the runs). */
function printGc(summary) {
  const rows = summary.filter((r) => r.promotedBytesPerRequest !== null);
  if (rows.length === 0) return;
  const range = (s, digits) => (s && s.min !== s.max ? ` (${fmt(s.min, digits)}–${fmt(s.max, digits)})` : '');
  console.log('\nGarbage collection in the window (the gateway, V8 --trace-gc-nvp):');
  console.log(
    table(
      ['scenario', 'promoted B/req', 'scavenges /10k req', 'full GCs /10k req'],
      rows.map((r) => [r.id, fmt(r.promotedBytesPerRequest, 0) + range(r.spread.promotedBytesPerRequest, 0), fmt(r.scavengesPer10k, 1), fmt(r.fullGcsPer10k, 1) + range(r.spread.fullGcsPer10k, 1)]),
    ),
  );
  console.log('promoted: bytes the scavenges moved to the old generation (objects that outlived two of them); full GCs: mark-compact collections.');
}

/** Tollgate beside Portkey, scenario kind by kind: throughput and CPU ratios, added latency side by side. */
function printPortkeyComparison(summary, added, memory) {
  const pairs = ['chat', 'stream', 'open']
    .map((kind) => ({ kind, t: summary.find((r) => r.via === 'tollgate' && r.kind === kind), p: summary.find((r) => r.via === 'portkey' && r.kind === kind) }))
    .filter(({ t, p }) => t && p);
  if (pairs.length === 0) return;
  const addedOf = (via, kind) => added.find((a) => a.via === via && a.kind === kind);
  const rows = pairs.map(({ kind, t, p }) => {
    const at = addedOf('tollgate', kind);
    const ap = addedOf('portkey', kind);
    return [
      LABELS[kind],
      kind === 'open' ? '–' : `${fmt(t.rps, 0)} / ${fmt(p.rps, 0)} = ${fmt(ratio(t.rps, p.rps), 1)}×`,
      `${fmt(t.cpuMsPerRequest, 3)} / ${fmt(p.cpuMsPerRequest, 3)} = ${fmt(ratio(p.cpuMsPerRequest, t.cpuMsPerRequest), 1)}× less`,
      at && ap ? `${signed(at.p50Ms)} / ${signed(ap.p50Ms)}` : '–',
      at && ap ? `${signed(at.p99Ms)} / ${signed(ap.p99Ms)}` : '–',
      kind === 'stream' && at && ap ? `${signed(at.ttfbP50Ms)} / ${signed(ap.ttfbP50Ms)} (Δ ${signed(ap.ttfbP50Ms - at.ttfbP50Ms)})` : '–',
    ];
  });
  console.log('\nTollgate / Portkey, same run:');
  console.log(table(['scenario', 'req/s (throughput ratio)', 'CPU ms/req', 'added p50 ms', 'added p99 ms', 'added first chunk p50 ms'], rows));
  if (memory.tollgate && memory.portkey) {
    console.log(`RSS idle ${memory.tollgate.idleRssMb} / ${memory.portkey.idleRssMb} MB, peak ${memory.tollgate.peakRssMb} / ${memory.portkey.peakRssMb} MB`);
  }
}

/** The issue's targets against this run (the first-chunk one is an unloaded figure: --connections 1). */
function printTargets(summary, added, memory, options) {
  const row = (id) => summary.find((r) => r.id === id);
  const checks = [];
  const check = (name, value, target, ok, unit = '') => value !== null && value !== undefined && checks.push(`  ${name.padEnd(40)} ${fmt(value, 3)}${unit} (target ${target}${unit}) — ${ok ? 'met' : 'NOT met'}`);
  check('CPU per non-streaming request', row('tollgate-chat')?.cpuMsPerRequest, `≤ ${TARGETS.chatCpuMs}`, row('tollgate-chat')?.cpuMsPerRequest <= TARGETS.chatCpuMs, ' ms');
  check('CPU per stream', row('tollgate-stream')?.cpuMsPerRequest, `≤ ${TARGETS.streamCpuMs}`, row('tollgate-stream')?.cpuMsPerRequest <= TARGETS.streamCpuMs, ' ms');
  const t = row('tollgate-chat');
  const p = row('portkey-chat');
  if (t && p) check('throughput vs Portkey (chat)', ratio(t.rps, p.rps), `≥ ${TARGETS.throughputVsPortkey}`, ratio(t.rps, p.rps) >= TARGETS.throughputVsPortkey, '×');
  const ttfb = added.find((a) => a.via === 'tollgate' && a.kind === 'stream')?.ttfbP50Ms;
  check(`first chunk p50 vs direct (c=${options.connections})`, ttfb, `≤ +${TARGETS.ttfbAddedMs}`, ttfb <= TARGETS.ttfbAddedMs, ' ms');
  const agent = row('tollgate-messages-stream')?.cpuMsPerRequest;
  // Issue 14's memory targets are for the chat and stream load; a run with 116 KB agent bodies in flight
  // (50 of them at a time, each with its buffers) measures another workload, so it is reported, not judged.
  if (memory.tollgate && agent === undefined) {
    check('peak RSS', memory.tollgate.peakRssMb, `≤ ${TARGETS.peakRssMb}`, memory.tollgate.peakRssMb <= TARGETS.peakRssMb, ' MB');
    check('idle RSS', memory.tollgate.idleRssMb, `≤ ${TARGETS.idleRssMb}`, memory.tollgate.idleRssMb <= TARGETS.idleRssMb, ' MB');
  }
  check('CPU per Claude Code turn (issue 24)', agent, `≤ ${TARGETS.claudeCodeTurnCpuMs}`, agent <= TARGETS.claudeCodeTurnCpuMs, ' ms');
  if (checks.length > 0) console.log(`\nTargets (issue 14${agent === undefined ? '' : '; the Claude Code turn: issue 24'}):\n${checks.join('\n')}`);
}

function ratio(a, b) {
  return a === null || b === null || !b ? null : a / b;
}

/**
 * --postgres: the PostgreSQL rows against SQLite's single process and, for several gateways, against one
 * (issue 12's done-when figures), with the CPU behind each: the gateways' (summed), PostgreSQL's, and the
 * machine's context switches, all per request.
 */
function printPostgresComparison(summary) {
  const sqlite = summary.find((r) => r.id === 'tollgate-chat');
  const direct = summary.find((r) => r.id === 'direct-chat');
  const one = summary.find((r) => r.id === 'pg-chat');
  const pgRows = summary.filter((r) => r.via.startsWith('tollgate-pg'));
  if (pgRows.length === 0) return;
  console.log('\nPostgreSQL vs SQLite (one process, hot key), chat at the same concurrency:');
  for (const r of pgRows) {
    const vsSqlite = sqlite ? ` = ${fmt((r.rps / sqlite.rps) * 100, 0)}% of SQLite's ${fmt(sqlite.rps, 0)}` : '';
    const vsOne = r.via.match(/^tollgate-pg\d$/) && one ? `, ${fmt((r.rps / one.rps) * 100, 0)}% of one gateway's` : '';
    const added = direct ? `, added p50 ${signed(round(r.p50 - direct.p50))} ms` : '';
    console.log(`  ${(r.label ?? r.id).padEnd(40)} ${fmt(r.rps, 0).padStart(6)} req/s${vsSqlite}${vsOne}${added}`);
    console.log(`  ${''.padEnd(40)} per request: gateway CPU ${fmt(r.cpuMsPerRequest, 3)} ms, PostgreSQL CPU ${fmt(r.postgresCpuMsPerRequest, 3)} ms, ${fmt(r.contextSwitchesPerRequest, 1)} context switches (machine)`);
  }
}

function signed(x) {
  return x === null ? '–' : `${x >= 0 ? '+' : ''}${x.toFixed(2)}`;
}

function printErrors(results) {
  for (const r of results.filter((x) => x.unfinished > 0)) {
    console.log(`\n${r.id} run ${r.round}: ${r.unfinished} requests still queued when the drain ended were cut (the server is slower than --rate)`);
  }
  const failed = results.filter((r) => r.errors > 0);
  if (failed.length === 0) {
    console.log('\nerrors: none (every response was 200, every stream ended with [DONE] or its API\'s last event)');
    return;
  }
  console.log('\nERRORS:');
  for (const r of failed) {
    console.log(`  ${r.id} run ${r.round}: ${r.errors} (warm-up ${r.errorsByPhase.warmup}, measured ${r.errorsByPhase.measure}, drain ${r.errorsByPhase.drain})`);
    for (const e of r.errorSamples) console.log(`    ${e.count} × ${e.message}`);
  }
}

export function saveReport(report) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${report.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

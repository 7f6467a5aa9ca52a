// `npm run bench`: CPU cost and added latency per request of the gateway versus calling the mock upstream directly.
// Mock, gateway (and optionally Portkey) and the load generator each run in their own process, so /proc can
// attribute CPU to each one; see bench/README.md. This file runs the rounds; the parts live beside it:
// options.mjs (command line), processes.mjs (starting and stopping), scenarios.mjs (one measured scenario),
// proc-stats.mjs (/proc figures) and report.mjs (summary, table and JSON).
import { mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { round } from './numbers.mjs';
import { parseOptions } from './options.mjs';
import { join } from 'node:path';
import { gcOverWindow } from './gc-trace.mjs';
import { createBenchSchema } from './postgres.mjs';
import { createSpreadKeys } from './spread-keys.mjs';
import { installCleanup, makeTempDir, removeTempDir, startGateway, startMock, startPortkey, stopAll, wasInterrupted } from './processes.mjs';
import { memoryMb } from './proc-stats.mjs';
import { addedLatency, billingCheck, printReport, saveReport, summarise } from './report.mjs';
import { buildScenarios, runScenario } from './scenarios.mjs';

async function main() {
  const options = parseOptions(process.argv.slice(2));
  installCleanup();
  const startedAt = new Date().toISOString();
  const machine = { cpus: cpus().length, loadavg: loadavg().map((x) => round(x, 2)), node: process.version };
  const tempDir = makeTempDir();
  if (options.cpuProfDir) mkdirSync(options.cpuProfDir, { recursive: true });

  const mock = await startMock({ agents: options.agents });
  const pgSchema = options.postgresUrl ? await createBenchSchema(options.postgresUrl) : undefined;
  const gatewayOptions = { limits: options.limits, redisUrl: options.redisUrl, nodeFlags: options.gatewayFlags, agents: options.agents, accounts: options.accounts, gc: options.gc };
  // SQLite, one process: the reference every PostgreSQL row is compared with.
  const tollgate = await startGateway(tempDir, mock.url, options.cpuProfDir, undefined, gatewayOptions);
  const pg = pgSchema ? await startPostgresGateways(tempDir, mock.url, pgSchema.url, gatewayOptions) : undefined;
  const portkey = options.portkeyDir ? await startPortkey(options.portkeyDir) : undefined;
  // --accounts: 10 keys of one hot account, beside the one-key rows (which are a personal account's).
  const accountKeys = options.accounts ? await createSpreadKeys(tollgate.database, 10, { sharedAccount: true }) : undefined;
  const procs = { mock, tollgate, portkey, pg, accountKeys };
  const scenarios = buildScenarios(procs, options);
  if (scenarios.length === 0) throw new Error(`--only matched no scenario`);
  const idle = await idleMemory(scenarios, [tollgate, portkey].filter(Boolean));

  const results = [];
  // Rounds interleave the scenarios so a burst of someone else's load hits all of them, not one.
  for (let round = 1; round <= options.runs; round++) {
    for (const scenario of scenarios) {
      console.error(`[${round}/${options.runs}] ${scenario.id} …`);
      results.push(await runScenario(scenario, procs, options, round));
    }
  }

  const memory = {};
  for (const p of [tollgate, portkey, ...(pg?.gateways ?? [])].filter(Boolean)) memory[p.name] = { idleRssMb: idle[p.name], ...memoryMb(p.child.pid) };
  await stopAll();
  if (options.gc) await addGcFigures(results, [tollgate, ...(pg?.gateways ?? [])]);
  const billing = {};
  if (results.some((r) => r.via === 'tollgate' || r.via === 'tollgate-account')) {
    billing.sqlite = await billingCheck(tollgate.database, results, (via) => via === 'tollgate' || via === 'tollgate-idem' || via === 'tollgate-account', idle.tollgateRequests);
  }
  if (pg) billing.postgres = await billingCheck(pgSchema.url, results, (via) => via.startsWith('tollgate-pg'));
  await pgSchema?.drop();
  const summary = summarise(results, scenarios);
  const report = { startedAt, machine, options, summary, added: addedLatency(summary), memory, billing, results };
  printReport(report);
  if (options.save) console.log(`\nresults: ${saveReport(report)}`);
  if (options.cpuProfDir) console.log(`cpu profile: ${options.cpuProfDir} (summarise with: node bench/profile-summary.mjs ${options.cpuProfDir})`);
  removeTempDir();
  if (results.some((r) => r.errors > 0)) process.exitCode = 1;
}

/**
 * --gc: each gateway row's collections in its window. Read once the gateways have exited: V8 writes its trace
 * through C stdio, which holds the last lines back while stdout is a pipe.
 */
async function addGcFigures(results, gateways) {
  for (const gateway of gateways.filter((g) => g.gc)) {
    await Promise.race([gateway.gc.done, sleep(5_000, undefined, { ref: false })]);
    for (const r of results.filter((row) => row.subject === gateway.name)) r.gc = gcOverWindow(gateway.gc, r.window.start, r.window.end, r.completed.measure);
  }
}

/**
 * RSS of each gateway at rest, after one request of each of its scenarios (so lazily loaded parts are
 * in) and a second to settle: the footprint of a started, idle sidecar.
 */
async function idleMemory(scenarios, gateways) {
  for (const gateway of gateways) {
    for (const scenario of scenarios.filter((s) => s.subject === gateway && !s.group && !s.bearerRotate)) {
      const headers = Object.fromEntries(scenario.headers.map((h) => [h.slice(0, h.indexOf(':')).trim(), h.slice(h.indexOf(':') + 1).trim()]));
      const res = await request(scenario.url + scenario.path, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: scenario.body });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`${scenario.id}: HTTP ${res.statusCode} before the benchmark started`);
    }
  }
  await sleep(1_000);
  const idle = Object.fromEntries(gateways.map((g) => [g.name, memoryMb(g.child.pid).rssMb]));
  // The SQLite billing check counts these too.
  idle.tollgateRequests = scenarios.filter((s) => s.subject === gateways[0] && s.via === 'tollgate').length;
  return idle;
}

/** Three gateways on one PostgreSQL schema (the first one's key is the hot key; the 2-gateway row uses the first two), and 100 more keys. */
async function startPostgresGateways(tempDir, mockUrl, database, gatewayOptions) {
  const gateways = [];
  // One at a time: each migrates (a no-op after the first) and creates a key through the CLI.
  for (let i = 1; i <= 3; i++) gateways.push(await startGateway(join(tempDir, `pg-${i}`), mockUrl, undefined, database, { ...gatewayOptions, name: `tollgate-pg-${i}` }));
  const spreadKeys = await createSpreadKeys(database, 100);
  const accountKeys = gatewayOptions.accounts ? await createSpreadKeys(database, 10, { sharedAccount: true }) : undefined;
  return { gateways, spreadKeys, accountKeys };
}

main().catch(async (err) => {
  if (wasInterrupted()) return; // the signal handler is already stopping everything and will exit
  console.error(err);
  await stopAll();
  process.exit(1);
});

// `npm run bench`: CPU cost and added latency per request of the gateway versus calling the mock upstream directly.
// Mock, gateway (and optionally Portkey) and the load generator each run in their own process, so /proc can
// attribute CPU to each one; see bench/README.md.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { request } from 'undici';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'tollgate.js');
const LOAD = join(ROOT, 'bench', 'load.mjs');
const RESULTS_DIR = join(ROOT, 'bench', 'results');
// utime/stime in /proc are in clock ticks; ask the system rather than assume 100.
const CLK_TCK = clockTicks();
const PROMPT = [{ role: 'user', content: 'Say hello in five words.' }];
const TARGET_CPU_MS = 0.3;

const USAGE = `usage: npm run bench -- [options]
  --duration S        measured window per scenario, seconds (default 10)
  --requests N        measure a fixed number of requests instead of a timed window
  --warmup S          unmeasured warm-up per scenario, seconds (default 2) ...
  --warmup-requests N ... and at least N requests (default 2000; capped at 5 × --warmup seconds)
  --connections N     concurrent keep-alive connections (default 50)
  --runs N            repeat every scenario N times (interleaved) and report medians (default 1)
  --embeddings        add the embeddings scenarios
  --portkey DIR       add Portkey scenarios, from an installed copy of /work/shared/peers/portkey (or env PORTKEY_DIR)
  --only IDS          comma-separated scenario ids to run (e.g. tollgate-chat)
  --cpu-prof DIR      run the gateway under --cpu-prof, writing the .cpuprofile into DIR
  --no-save           do not write bench/results/<timestamp>.json`;

// ---------------------------------------------------------------- options

function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '10' },
      requests: { type: 'string' },
      warmup: { type: 'string', default: '2' },
      'warmup-requests': { type: 'string', default: '2000' },
      connections: { type: 'string', default: '50' },
      runs: { type: 'string', default: '1' },
      embeddings: { type: 'boolean', default: false },
      portkey: { type: 'string', default: process.env.PORTKEY_DIR },
      only: { type: 'string' },
      'cpu-prof': { type: 'string' },
      'no-save': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  return {
    duration: numberOption('duration', values.duration),
    requests: values.requests === undefined ? undefined : numberOption('requests', values.requests),
    warmup: numberOption('warmup', values.warmup, 0),
    warmupRequests: numberOption('warmup-requests', values['warmup-requests'], 0),
    connections: numberOption('connections', values.connections),
    runs: numberOption('runs', values.runs),
    embeddings: values.embeddings,
    portkeyDir: values.portkey ? resolve(values.portkey) : undefined,
    only: values.only ? values.only.split(',').map((s) => s.trim()) : undefined,
    cpuProfDir: values['cpu-prof'] ? resolve(values['cpu-prof']) : undefined,
    save: !values['no-save'],
  };
}

function numberOption(name, text, min = Number.MIN_VALUE) {
  const n = Number(text);
  if (!Number.isFinite(n) || n < min) {
    console.error(`--${name} must be a number ≥ ${min === Number.MIN_VALUE ? '>0' : min}, got "${text}"\n${USAGE}`);
    process.exit(2);
  }
  return n;
}

// ---------------------------------------------------------------- child processes and cleanup

const children = new Set();
let tempDir;
// Set on Ctrl-C, so the errors that killing the children causes downstream are not reported as failures.
let interrupted = false;

/** Remembers a child so every exit path (normal, error, Ctrl-C) can stop it; keeps its last output lines for errors. */
function track(name, child) {
  child.benchName = name;
  child.logTail = [];
  children.add(child);
  child.once('exit', () => children.delete(child));
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream || name === 'load') continue; // the load generator's stdout is read as events instead
    createInterface({ input: stream }).on('line', (line) => {
      child.logTail.push(line);
      if (child.logTail.length > 40) child.logTail.shift();
    });
  }
  return child;
}

/** SIGTERM (so the gateway shuts down cleanly and --cpu-prof gets written), then SIGKILL after a grace period. */
async function stopChild(child, graceMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  // ref: false, so the grace timer never keeps the benchmark alive once the child is gone.
  if ((await Promise.race([exited.then(() => 'exited'), sleep(graceMs, undefined, { ref: false })])) !== 'exited') {
    child.kill('SIGKILL');
    await exited;
  }
}

async function stopAll() {
  await Promise.all([...children].map((child) => stopChild(child)));
}

function removeTempDir() {
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  tempDir = undefined;
}

function installCleanup() {
  // Last resort on any exit: nothing may outlive the benchmark.
  process.on('exit', () => {
    for (const child of children) child.kill('SIGKILL');
    removeTempDir();
  });
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      interrupted = true;
      console.error(`\n${signal}: stopping child processes`);
      stopAll().finally(() => process.exit(130));
    });
  }
}

/** Resolves with the first value `match` returns for a line of `stream`; rejects if the child exits or times out. */
function waitForLine(child, stream, match, label, timeoutMs = 30_000) {
  return new Promise((resolveLine, reject) => {
    const lines = createInterface({ input: stream });
    const timer = setTimeout(() => fail(`${label} did not start within ${timeoutMs} ms`), timeoutMs);
    const onExit = (code) => fail(`${label} exited (${code}) before it was ready`);
    function fail(message) {
      clearTimeout(timer);
      reject(new Error(`${message}\n${child.logTail.join('\n')}`));
    }
    child.once('exit', onExit);
    lines.on('line', (line) => {
      const value = match(line);
      if (value === undefined) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      resolveLine(value);
    });
  });
}

// ---------------------------------------------------------------- the processes under test

async function startMock() {
  const child = track('mock', spawn(process.execPath, ['--import', 'tsx', 'test/support/mock-upstream-cli.ts', '--port', '0', '--no-record'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] }));
  const url = await waitForLine(child, child.stdout, (line) => /mock upstream listening on (\S+)/.exec(line)?.[1], 'mock upstream');
  return { name: 'mock', child, url };
}

function gatewayConfig(mockUrl, dbPath) {
  return `# Written by bench/run.mjs: one OpenAI-compatible provider in front of the mock upstream.
server:
  host: 127.0.0.1
  port: 0
  shutdown_grace_seconds: 5
database: "sqlite:${dbPath}"
providers:
  mock:
    kind: openai-compatible
    base_url: ${mockUrl}
    api_key: sk-mock-upstream-secret
models:
  gpt-bench:
    type: chat
    upstreams: [{ provider: mock, model: gpt-4o-mini }]
    price: { input: 0.15, output: 0.60, cached_input: 0.075 }
    context_window: 128000
    max_output_tokens: 16384
  embed-bench:
    type: embedding
    upstreams: [{ provider: mock, model: text-embedding-3-small }]
    price: { input: 0.02 }
`;
}

/** Creates the benchmark's key with the real CLI, as an operator would. */
function createKey(configPath) {
  const out = execFileSync(process.execPath, [BIN, 'keys', 'create', '--name', 'bench', '--balance', '1000000', '--json', '--config', configPath], { encoding: 'utf8' });
  return JSON.parse(out).key;
}

async function startGateway(dir, mockUrl, cpuProfDir) {
  const dbPath = join(dir, 'tollgate.db');
  const configPath = join(dir, 'tollgate.yaml');
  writeFileSync(configPath, gatewayConfig(mockUrl, dbPath));
  const key = createKey(configPath);
  const profArgs = cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [];
  const child = track(
    'gateway',
    spawn(process.execPath, [...profArgs, BIN, 'serve', '--config', configPath, '--port', '0'], { cwd: dir, env: { ...process.env, TOLLGATE_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  const url = await waitForLine(child, child.stderr, listeningUrl, 'gateway');
  return { name: 'tollgate', child, url, key, dbPath };
}

function listeningUrl(line) {
  try {
    const entry = JSON.parse(line);
    return entry.msg === 'tollgate listening' ? entry.url : undefined;
  } catch {
    return undefined; // not a log line
  }
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/** Starts Portkey the way /work/shared/peers/portkey/start.sh does, but as our own child so we can measure and stop it. */
async function startPortkey(dir) {
  const entry = join(dir, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
  if (!existsSync(entry)) throw new Error(`no Portkey install in ${dir} (copy /work/shared/peers/portkey there and run npm install)`);
  const loopback = join(dir, 'force-loopback.cjs');
  const port = await freePort();
  const args = [...(existsSync(loopback) ? ['-r', loopback] : []), entry, `--port=${port}`, '--headless'];
  const child = track('portkey', spawn(process.execPath, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }));
  await waitForHttp(`http://127.0.0.1:${port}/`, child, 'portkey');
  return { name: 'portkey', child, url: `http://127.0.0.1:${port}/v1` };
}

async function waitForHttp(url, child, label, timeoutMs = 30_000) {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const res = await request(url);
      await res.body.dump();
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error(`${label} did not answer ${url}\n${child.logTail.join('\n')}`);
}

// ---------------------------------------------------------------- scenarios

/**
 * The direct stream asks for include_usage itself: the gateway always does (to bill), so the mock then
 * sends the same chunks in both cases and the difference is the gateway alone.
 */
function buildScenarios(procs, opts) {
  const { mock, tollgate, portkey } = procs;
  const chat = (model, stream) => JSON.stringify({ model, messages: PROMPT, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) });
  const embed = (model) => JSON.stringify({ model, input: 'The quick brown fox jumps over the lazy dog' });
  const direct = { via: 'direct', subject: mock, url: mock.url, model: 'gpt-4o-mini', embedModel: 'text-embedding-3-small', headers: ['authorization: Bearer sk-mock-upstream-secret'] };
  const viaTollgate = { via: 'tollgate', subject: tollgate, url: tollgate.url, model: 'gpt-bench', embedModel: 'embed-bench', headers: [`authorization: Bearer ${tollgate.key}`] };
  // Portkey routes by headers to any OpenAI-compatible host (see start.sh).
  const viaPortkey = portkey && {
    via: 'portkey',
    subject: portkey,
    url: portkey.url,
    model: 'gpt-4o-mini',
    headers: ['x-portkey-provider: openai', `x-portkey-custom-host: ${mock.url}`, 'authorization: Bearer sk-mock-upstream-secret'],
  };
  const routes = [direct, viaTollgate, viaPortkey].filter(Boolean);
  const scenarios = [];
  for (const kind of ['chat', 'stream']) {
    for (const route of routes) {
      scenarios.push({ id: `${route.via}-${kind}`, kind, ...route, path: '/chat/completions', body: chat(route.model, kind === 'stream'), stream: kind === 'stream' });
    }
  }
  if (opts.embeddings) {
    for (const route of [direct, viaTollgate]) scenarios.push({ id: `${route.via}-embed`, kind: 'embed', ...route, path: '/embeddings', body: embed(route.embedModel), stream: false });
  }
  return opts.only ? scenarios.filter((s) => opts.only.includes(s.id)) : scenarios;
}

function loadArgs(scenario, opts) {
  const args = ['--url', scenario.url + scenario.path, '--body', scenario.body, '--connections', String(opts.connections), '--warmup', String(opts.warmup), '--warmup-requests', String(opts.warmupRequests), '--duration', String(opts.duration)];
  for (const header of scenario.headers) args.push('--header', header);
  if (scenario.stream) args.push('--stream');
  if (opts.requests !== undefined) args.push('--requests', String(opts.requests));
  return args;
}

// ---------------------------------------------------------------- /proc sampling

function clockTicks() {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** [utime, stime] (all threads) of a process, in clock ticks: fields 14 and 15 of /proc/<pid>/stat. */
function cpuTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces, so count fields from after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [Number(fields[11]), Number(fields[12])];
}

/** Busy ticks of the whole machine, so we can tell how much CPU other people's jobs took during a window. */
function machineBusyTicks() {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  return user + nice + system + irq + softirq + steal;
}

function memoryMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: Math.round(kb('VmRSS') / 1024), peakRssMb: Math.round(kb('VmHWM') / 1024) };
}

/** [ns on a CPU, ns runnable but waiting for a CPU] of a process's main thread (its event loop), from /proc/<pid>/schedstat. */
function mainThreadSchedule(pid) {
  const [onCpu, waiting] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ').map(Number);
  return [onCpu, waiting];
}

function snapshot(pids) {
  const cpu = {};
  const sched = {};
  for (const [name, pid] of Object.entries(pids)) {
    cpu[name] = cpuTicks(pid);
    sched[name] = mainThreadSchedule(pid);
  }
  cpu.bench = cpuTicks(process.pid);
  return { at: performance.now(), cpu, sched, machine: machineBusyTicks() };
}

/**
 * CPU over the window: ms per completed request for each process (and the kernel's share of it, which is
 * socket and file syscalls), cores used, and other people's load.
 */
function cpuOverWindow(start, end, completed) {
  const seconds = (end.at - start.at) / 1000;
  const perRequest = {};
  const systemShare = {};
  const cores = {};
  let ours = 0;
  for (const name of Object.keys(start.cpu)) {
    const user = end.cpu[name][0] - start.cpu[name][0];
    const sys = end.cpu[name][1] - start.cpu[name][1];
    ours += user + sys;
    perRequest[name] = completed > 0 ? round(((user + sys) * 1000) / CLK_TCK / completed, 4) : null;
    systemShare[name] = user + sys > 0 ? round(sys / (user + sys), 2) : null;
    cores[name] = round((user + sys) / CLK_TCK / seconds, 2);
  }
  const otherCores = round(Math.max(0, end.machine - start.machine - ours) / CLK_TCK / seconds, 2);
  return { perRequest, systemShare, cores, otherCores, mainThread: mainThreadShares(start, end, seconds) };
}

/**
 * Where each process's event-loop thread spent the window: running, runnable but waiting for a CPU (the
 * machine is oversubscribed), or neither (blocked in a syscall such as an fsync, or idle for lack of work).
 */
function mainThreadShares(start, end, seconds) {
  const shares = {};
  for (const name of Object.keys(start.sched)) {
    const run = (end.sched[name][0] - start.sched[name][0]) / 1e9 / seconds;
    const wait = (end.sched[name][1] - start.sched[name][1]) / 1e9 / seconds;
    shares[name] = { run: round(run, 2), wait: round(wait, 2), blocked: round(Math.max(0, 1 - run - wait), 2) };
  }
  return shares;
}

// ---------------------------------------------------------------- running a scenario

async function runScenario(scenario, procs, opts, round) {
  const pids = Object.fromEntries(Object.values(procs).filter(Boolean).map((p) => [p.name, p.child.pid]));
  const child = track('load', spawn(process.execPath, [LOAD, ...loadArgs(scenario, opts)], { stdio: ['ignore', 'pipe', 'pipe'] }));
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((done) => child.once('exit', done));
  let start;
  let end;
  let result;
  for await (const line of createInterface({ input: child.stdout })) {
    const event = JSON.parse(line);
    // Sampled here, when the load generator says the window opens and closes (pipe delay is the same at both ends).
    if (event.event === 'window-start') start = snapshot({ ...pids, load: child.pid });
    else if (event.event === 'window-end') end = snapshot({ ...pids, load: child.pid });
    else if (event.event === 'result') result = event;
  }
  const code = await exited;
  if (code !== 0 || !result || !start || !end) throw new Error(`load generator failed for ${scenario.id} (exit ${code}):\n${stderr}`);
  const cpu = cpuOverWindow(start, end, result.completed.measure);
  delete result.event;
  return {
    id: scenario.id,
    kind: scenario.kind,
    via: scenario.via,
    subject: scenario.subject.name,
    round,
    ...result,
    cpuMsPerRequest: cpu.perRequest,
    cpuSystemShare: cpu.systemShare,
    cpuCores: cpu.cores,
    mainThread: cpu.mainThread,
    otherCores: cpu.otherCores,
  };
}

// ---------------------------------------------------------------- summarising

function round(x, digits = 3) {
  if (x === null || x === undefined || Number.isNaN(x)) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

function median(values) {
  const xs = values.filter((x) => x !== null && x !== undefined).sort((a, b) => a - b);
  if (xs.length === 0) return null;
  const mid = Math.floor(xs.length / 2);
  return xs.length % 2 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
}

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
};

/** Median of every metric per scenario, plus min/max of the ones whose noise we report. */
function summarise(results, scenarios) {
  return scenarios.map((scenario) => {
    const runs = results.filter((r) => r.id === scenario.id);
    const row = { id: scenario.id, kind: scenario.kind, via: scenario.via, subject: scenario.subject.name, runs: runs.length, errors: runs.reduce((n, r) => n + r.errors, 0) };
    for (const [name, get] of Object.entries(METRICS)) row[name] = round(median(runs.map(get)), 4);
    row.spread = {};
    for (const name of ['rps', 'p50', 'cpuMsPerRequest']) {
      const xs = runs.map(METRICS[name]).filter((x) => x !== null);
      if (xs.length === 0 || !row[name]) continue; // every request failed: nothing to compare
      row.spread[name] = { min: Math.min(...xs), max: Math.max(...xs), pct: round(((Math.max(...xs) - Math.min(...xs)) / row[name]) * 100, 1) };
    }
    return row;
  });
}

/** Gateway minus direct, for each scenario kind the gateway ran. */
function addedLatency(summary) {
  const added = [];
  for (const row of summary.filter((r) => r.via !== 'direct')) {
    const base = summary.find((r) => r.via === 'direct' && r.kind === row.kind);
    if (!base) continue;
    added.push({
      via: row.via,
      kind: row.kind,
      p50Ms: round(row.p50 - base.p50),
      p99Ms: round(row.p99 - base.p99),
      ttfbP50Ms: row.kind === 'stream' ? round(row.ttfbP50 - base.ttfbP50) : null,
      cpuMsPerRequest: row.cpuMsPerRequest,
    });
  }
  return added;
}

/** Every successful gateway response must have left exactly one usage row and no open hold behind. */
function billingCheck(dbPath, results) {
  const served = results.filter((r) => r.via === 'tollgate').reduce((n, r) => n + r.completed.warmup + r.completed.measure + r.completed.drain - r.errors, 0);
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const count = (sql) => db.prepare(sql).get().n;
    return {
      served,
      usageRows: count('SELECT COUNT(*) AS n FROM usage_records'),
      captures: count("SELECT COUNT(*) AS n FROM ledger_entries WHERE kind = 'capture'"),
      activeHolds: count("SELECT COUNT(*) AS n FROM holds WHERE status = 'active'"),
    };
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------- printing

const LABELS = { chat: 'chat', stream: 'chat stream', embed: 'embeddings' };
const VIA = { direct: 'direct → mock', tollgate: 'via Tollgate', portkey: 'via Portkey' };

function fmt(x, digits = 2) {
  return x === null || x === undefined ? '–' : x.toFixed(digits);
}

function table(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function printReport(report) {
  const { options, summary, added, memory, billing } = report;
  const runs = options.runs > 1 ? `median of ${options.runs} runs` : '1 run';
  console.log(`\nTollgate benchmark — ${options.connections} connections, ${options.warmup} s / ${options.warmupRequests} requests warm-up, ${options.requests ? `${options.requests} requests` : `${options.duration} s`} measured, ${runs}`);
  console.log(`machine: ${report.machine.cpus} CPUs, load average at start ${report.machine.loadavg.join(' ')}\n`);
  const rows = summary.map((r) => [
    `${LABELS[r.kind]}, ${VIA[r.via]}`,
    fmt(r.rps, 0),
    fmt(r.p50),
    fmt(r.p99),
    r.kind === 'stream' ? fmt(r.ttfbP50) : '–',
    r.kind === 'stream' ? fmt(r.ttfbP99) : '–',
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
  for (const a of added) {
    const ttfb = a.ttfbP50Ms === null ? '' : `, first chunk p50 ${signed(a.ttfbP50Ms)} ms`;
    console.log(`  ${VIA[a.via].padEnd(12)} ${LABELS[a.kind].padEnd(11)} p50 ${signed(a.p50Ms)} ms, p99 ${signed(a.p99Ms)} ms${ttfb}; CPU ${fmt(a.cpuMsPerRequest, 3)} ms/request`);
  }
  const chat = summary.find((r) => r.id === 'tollgate-chat');
  if (chat) console.log(`\nTollgate CPU per non-streaming request: ${fmt(chat.cpuMsPerRequest, 3)} ms (target ≤ ${TARGET_CPU_MS} ms) — ${chat.cpuMsPerRequest <= TARGET_CPU_MS ? 'met' : 'NOT met'}`);
  for (const [name, m] of Object.entries(memory)) console.log(`${name} RSS after the run: ${m.rssMb} MB (peak ${m.peakRssMb} MB)`);
  if (billing) {
    const ok = billing.usageRows === billing.served && billing.captures === billing.served && billing.activeHolds === 0;
    console.log(`billing: ${billing.served} successful gateway responses, ${billing.usageRows} usage rows, ${billing.captures} captures, ${billing.activeHolds} open holds — ${ok ? 'all settled' : 'MISMATCH'}`);
  }
  if (options.runs > 1) {
    console.log('\nNoise across runs (min–max, spread as % of the median):');
    for (const r of summary.filter((row) => row.spread.rps && row.spread.p50 && row.spread.cpuMsPerRequest)) {
      const s = r.spread;
      console.log(`  ${r.id.padEnd(16)} req/s ${fmt(s.rps.min, 0)}–${fmt(s.rps.max, 0)} (${s.rps.pct}%), p50 ${fmt(s.p50.min)}–${fmt(s.p50.max)} ms (${s.p50.pct}%), CPU/req ${fmt(s.cpuMsPerRequest.min, 3)}–${fmt(s.cpuMsPerRequest.max, 3)} ms (${s.cpuMsPerRequest.pct}%)`);
    }
  }
  printErrors(report.results);
}

function signed(x) {
  return x === null ? '–' : `${x >= 0 ? '+' : ''}${x.toFixed(2)}`;
}

function printErrors(results) {
  const failed = results.filter((r) => r.errors > 0);
  if (failed.length === 0) {
    console.log('\nerrors: none (every response was 200, every stream ended with [DONE])');
    return;
  }
  console.log('\nERRORS:');
  for (const r of failed) {
    console.log(`  ${r.id} run ${r.round}: ${r.errors} (warm-up ${r.errorsByPhase.warmup}, measured ${r.errorsByPhase.measure}, drain ${r.errorsByPhase.drain})`);
    for (const e of r.errorSamples) console.log(`    ${e.count} × ${e.message}`);
  }
}

function saveReport(report) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${report.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

// ---------------------------------------------------------------- main

async function main() {
  const options = parseOptions(process.argv.slice(2));
  installCleanup();
  const startedAt = new Date().toISOString();
  const machine = { cpus: cpus().length, loadavg: loadavg().map((x) => round(x, 2)), node: process.version };
  tempDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
  if (options.cpuProfDir) mkdirSync(options.cpuProfDir, { recursive: true });

  const mock = await startMock();
  const tollgate = await startGateway(tempDir, mock.url, options.cpuProfDir);
  const portkey = options.portkeyDir ? await startPortkey(options.portkeyDir) : undefined;
  const procs = { mock, tollgate, portkey };
  const scenarios = buildScenarios(procs, options);
  if (scenarios.length === 0) throw new Error(`--only matched no scenario`);

  const results = [];
  // Rounds interleave the scenarios so a burst of someone else's load hits all of them, not one.
  for (let round = 1; round <= options.runs; round++) {
    for (const scenario of scenarios) {
      console.error(`[${round}/${options.runs}] ${scenario.id} …`);
      results.push(await runScenario(scenario, procs, options, round));
    }
  }

  const memory = {};
  for (const p of [tollgate, portkey].filter(Boolean)) memory[p.name] = memoryMb(p.child.pid);
  await stopAll();
  const billing = results.some((r) => r.via === 'tollgate') ? billingCheck(tollgate.dbPath, results) : undefined;
  const summary = summarise(results, scenarios);
  const report = { startedAt, machine, options, summary, added: addedLatency(summary), memory, billing, results };
  printReport(report);
  if (options.save) console.log(`\nresults: ${saveReport(report)}`);
  if (options.cpuProfDir) console.log(`cpu profile: ${options.cpuProfDir} (summarise with: node bench/profile-summary.mjs ${options.cpuProfDir})`);
  removeTempDir();
  if (results.some((r) => r.errors > 0)) process.exitCode = 1;
}

main().catch(async (err) => {
  if (interrupted) return; // the signal handler is already stopping everything and will exit
  console.error(err);
  await stopAll();
  process.exit(1);
});

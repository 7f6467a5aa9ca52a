// The processes under test (mock upstream, gateway, Portkey) and every child of the benchmark: starting
// them, waiting until they listen, and stopping them on every exit path (normal, error, Ctrl-C).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { GC_TRACE_FLAG, watchGc } from './gc-trace.mjs';
import { request } from 'undici';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'tollgate.js');

// ---------------------------------------------------------------- child processes and cleanup

const children = new Set();
let tempDir;
// Set on Ctrl-C, so the errors that killing the children causes downstream are not reported as failures.
let interrupted = false;

/** Remembers a child so every exit path (normal, error, Ctrl-C) can stop it; keeps its last output lines for errors. */
export function track(name, child) {
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

export async function stopAll() {
  await Promise.all([...children].map((child) => stopChild(child)));
}

/** The benchmark's temp directory (config and database), removed on every exit path. */
export function makeTempDir() {
  tempDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
  return tempDir;
}

/** True once Ctrl-C (or SIGTERM) is stopping everything. */
export function wasInterrupted() {
  return interrupted;
}

export function removeTempDir() {
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  tempDir = undefined;
}

export function installCleanup() {
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

/** `agents`: the mock also answers /v1/messages and /v1/responses (the coding-agent scenarios). */
export async function startMock({ agents = false } = {}) {
  const args = ['--import', 'tsx', 'test/support/mock-upstream-cli.ts', '--port', '0', '--no-record', ...(agents ? ['--agents'] : [])];
  const child = track('mock', spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] }));
  const url = await waitForLine(child, child.stdout, (line) => /mock upstream listening on (\S+)/.exec(line)?.[1], 'mock upstream');
  return { name: 'mock', child, url };
}

/**
 * --agents: an `anthropic` and an `openai` provider on the same mock, and the models the recorded Claude
 * Code and Codex requests name, each on an upstream model of another name (so the native cell splices
 * `model` into the body, as for a dated snapshot). Prices are the list prices of Claude Sonnet 4.5 and
 * GPT-5-Codex; max_output_tokens as the providers document them (Codex sends none: its hold is this).
 */
export function agentProviders(mockUrl) {
  return `
  anthropic-mock:
    kind: anthropic
    base_url: ${mockUrl.replace(/\/v1$/, '')}
    api_key: sk-ant-mock-secret
  openai-mock:
    kind: openai
    base_url: ${mockUrl}
    api_key: sk-mock-upstream-secret`;
}

export const AGENT_MODELS = `
  claude-sonnet-4-5:
    type: chat
    upstreams: [{ provider: anthropic-mock, model: mock-claude-sonnet-4-5 }]
    price: { input: 3, output: 15, cached_input: 0.30, cache_write: 3.75, cache_write_1h: 6 }
    context_window: 200000
    max_output_tokens: 64000
  gpt-5-codex:
    type: chat
    upstreams: [{ provider: openai-mock, model: mock-gpt-5-codex }]
    price: { input: 1.25, output: 10, cached_input: 0.125 }
    context_window: 400000
    max_output_tokens: 128000
    allow_server_tools: true`;

function gatewayConfig(mockUrl, database, redisUrl, agents) {
  return `# Written by the benchmark (bench/processes.mjs): one OpenAI-compatible provider in front of the mock upstream.
server:
  host: 127.0.0.1
  port: 0
  shutdown_grace_seconds: 5
database: "${database}"
${redisUrl ? `redis: ${redisUrl}\n` : ''}providers:
  mock:
    kind: openai-compatible
    base_url: ${mockUrl}
    api_key: sk-mock-upstream-secret${agents ? agentProviders(mockUrl) : ''}
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
    price: { input: 0.02 }${agents ? AGENT_MODELS : ''}
`;
}

/** Limits that never refuse at benchmark rates but are all counted and checked on every request. */
const BENCH_KEY_LIMITS = ['--rpm', '100000000', '--tpm', '1000000000000', '--max-concurrent', '100000', '--budget', '1000000', '--budget-period', 'day'];

/** Creates the benchmark's key with the real CLI, as an operator would. */
function createKey(configPath, limits) {
  const args = [BIN, 'keys', 'create', '--name', 'bench', '--balance', '1000000', ...(limits ? BENCH_KEY_LIMITS : []), '--json', '--config', configPath];
  const out = execFileSync(process.execPath, args, { encoding: 'utf8' });
  return JSON.parse(out).key;
}

/**
 * `database`: a database URL; SQLite in `dir` when undefined. `limits`, `redisUrl`, `nodeFlags`, `agents`: see
 * --limits, --redis, --gateway-flags, --agents. `name`: how the reports call this process (several gateways run with --postgres).
 */
export async function startGateway(dir, mockUrl, cpuProfDir, database, { limits = false, redisUrl, name = 'tollgate', nodeFlags = [], agents = false, gc = false } = {}) {
  mkdirSync(dir, { recursive: true });
  const dbPath = join(dir, 'tollgate.db');
  const configPath = join(dir, 'tollgate.yaml');
  writeFileSync(configPath, gatewayConfig(mockUrl, database ?? `sqlite:${dbPath}`, redisUrl, agents));
  const key = createKey(configPath, limits);
  const profArgs = cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [];
  const gcFlags = gc ? [GC_TRACE_FLAG] : [];
  const startedAt = performance.now();
  const child = track(
    'gateway',
    spawn(process.execPath, [...nodeFlags, ...gcFlags, ...profArgs, BIN, 'serve', '--config', configPath, '--port', '0'], { cwd: dir, env: { ...process.env, TOLLGATE_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  const gcTrace = gc ? watchGc(child, startedAt) : undefined;
  const url = await waitForLine(child, child.stderr, listeningUrl, 'gateway');
  return { name, child, url, key, database: database ?? `sqlite:${dbPath}`, gc: gcTrace };
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
export async function startPortkey(dir) {
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

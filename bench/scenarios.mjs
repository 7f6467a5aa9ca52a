// The scenarios (chat, stream, open-loop chat, embeddings and the coding agents' recorded requests; direct, via
// Tollgate or via Portkey) and running one of them
// with the load generator in its own process, /proc sampled when its measured window opens and closes.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { track } from './processes.mjs';
import { cpuOverWindow, snapshot } from './proc-stats.mjs';

const LOAD = fileURLToPath(new URL('load.mjs', import.meta.url));
const AGENT_FIXTURES = new URL('../test/fixtures/agents/', import.meta.url);
/** Recorded headers a load generator sets itself, or that would carry the recording's credentials. */
const NOT_REPLAYED = new Set(['content-length', 'content-type', 'connection', 'accept-encoding', 'host', 'x-api-key', 'authorization']);
const PROMPT = [{ role: 'user', content: 'Say hello in five words.' }];
/** Open loop: the most connections the load generator may open when requests queue. */
const OPEN_LOOP_MAX_CONNECTIONS = 256;

/**
 * The direct stream asks for include_usage itself: the gateway always does (to bill), so the mock then
 * sends the same chunks in both cases and the difference is the gateway alone.
 */
export function buildScenarios(procs, opts) {
  const { mock, tollgate, portkey } = procs;
  const chat = (model, stream) => JSON.stringify({ model, messages: PROMPT, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) });
  const embed = (model) => JSON.stringify({ model, input: 'The quick brown fox jumps over the lazy dog' });
  const direct = { via: 'direct', subject: mock, url: mock.url, model: 'gpt-4o-mini', embedModel: 'text-embedding-3-small', headers: ['authorization: Bearer sk-mock-upstream-secret'] };
  const viaTollgate = { via: 'tollgate', subject: tollgate, url: tollgate.url, model: 'gpt-bench', embedModel: 'embed-bench', key: tollgate.key, headers: [`authorization: Bearer ${tollgate.key}`] };
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
  // Open loop: the same non-streaming chat at a fixed arrival rate (closed-loop load hides queueing).
  if (opts.rate > 0) {
    for (const route of routes) {
      scenarios.push({ id: `${route.via}-open`, kind: 'open', ...route, path: '/chat/completions', body: chat(route.model, false), stream: false });
    }
  }
  if (opts.idempotency) {
    // --idempotency: the Tollgate scenarios again, each request with its own Idempotency-Key.
    for (const kind of ['chat', 'stream']) {
      scenarios.push({ id: `tollgate-idem-${kind}`, kind, ...viaTollgate, via: 'tollgate-idem', path: '/chat/completions', body: chat(viaTollgate.model, kind === 'stream'), stream: kind === 'stream', idempotency: true });
    }
  }
  if (opts.agents) scenarios.push(...agentScenarios(direct, viaTollgate));
  if (procs.accountKeys) {
    // --accounts: the chat again, each request on the next of 10 keys of one account (one hot account row).
    // Each request names its key itself (bearerRotate), so the hot key's header and key are left out.
    const route = { via: 'tollgate-account', subject: tollgate, url: tollgate.url, model: viaTollgate.model };
    scenarios.push({ id: 'tollgate-account-chat', label: 'chat, SQLite, 10 keys of one account', kind: 'chat', ...route, headers: [], bearerRotate: procs.accountKeys, path: '/chat/completions', body: chat(route.model, false), stream: false });
  }
  if (procs.pg) scenarios.push(...postgresScenarios(procs.pg, chat('gpt-bench', false)));
  if (opts.embeddings) {
    for (const route of [direct, viaTollgate]) scenarios.push({ id: `${route.via}-embed`, kind: 'embed', ...route, path: '/embeddings', body: embed(route.embedModel), stream: false });
  }
  return opts.only ? scenarios.filter((s) => opts.only.includes(s.id)) : scenarios;
}

/**
 * --agents: the recorded turn 1 of Claude Code (its /v1/messages?beta=true request with the anthropic-*,
 * x-claude-code-session-id and other headers it sent, its key in x-api-key as with ANTHROPIC_API_KEY) and
 * of Codex (/v1/responses, its key as a Bearer token), both streamed, byte for byte as recorded
 * (test/fixtures/agents/), direct to the mock and through the gateway. A stream must end with its API's
 * last event (message_stop; response.completed) instead of [DONE].
 */
function agentScenarios(direct, viaTollgate) {
  const agents = [
    { kind: 'messages-stream', recording: 'claude-code-2.1.197', path: '/messages?beta=true', streamEnd: 'event: message_stop', auth: (key) => `x-api-key: ${key}`, directKey: 'sk-ant-mock-secret' },
    { kind: 'responses-stream', recording: 'codex-0.171.0', path: '/responses', streamEnd: 'event: response.completed', auth: (key) => `authorization: Bearer ${key}`, directKey: 'sk-mock-upstream-secret' },
  ];
  const scenarios = [];
  for (const agent of agents) {
    const bodyFile = fileURLToPath(new URL(`${agent.recording}-turn1.json`, AGENT_FIXTURES));
    const [recorded] = JSON.parse(readFileSync(new URL(`${agent.recording}-requests.json`, AGENT_FIXTURES), 'utf8'));
    const headers = Object.entries(recorded.headers)
      .filter(([name]) => !NOT_REPLAYED.has(name))
      .map(([name, value]) => `${name}: ${value}`);
    for (const [route, key] of [
      [direct, agent.directKey],
      [viaTollgate, viaTollgate.key],
    ]) {
      scenarios.push({
        id: `${route.via}-${agent.kind}`,
        kind: agent.kind,
        ...route,
        headers: [...headers, agent.auth(key)],
        path: agent.path,
        body: readFileSync(bodyFile, 'utf8'),
        bodyFile,
        stream: true,
        streamEnd: agent.streamEnd,
      });
    }
  }
  return scenarios;
}

/**
 * --postgres: the ledger on PostgreSQL beside the SQLite figures — one gateway on the hot key, one on 100
 * keys, and two and three gateways on one database sharing the hot key's load (their CPU summed): the
 * 3-gateway row is issue 12's figure, the 2-gateway one shows how it scales in between.
 */
function postgresScenarios(pg, body) {
  const [first] = pg.gateways;
  const base = { kind: 'chat', path: '/chat/completions', body, stream: false, model: 'gpt-bench' };
  const hot = [`authorization: Bearer ${first.key}`];
  const shared = (n) => {
    const gateways = pg.gateways.slice(0, n);
    return {
      id: `pg${n}-chat`,
      label: `chat, PostgreSQL, ${n} gateways, hot key`,
      via: `tollgate-pg${n}`,
      subject: first,
      group: gateways.map((g) => g.name),
      urls: gateways.map((g) => g.url),
      headers: hot,
      ...base,
    };
  };
  return [
    { id: 'pg-chat', label: 'chat, PostgreSQL, 1 gateway, hot key', via: 'tollgate-pg', subject: first, url: first.url, headers: hot, ...base },
    { id: 'pg-chat-100-keys', label: 'chat, PostgreSQL, 1 gateway, 100 keys', via: 'tollgate-pg-keys', subject: first, url: first.url, headers: [], bearerRotate: pg.spreadKeys, ...base },
    ...(pg.accountKeys
      ? [{ id: 'pg-account-chat', label: 'chat, PostgreSQL, 1 gateway, 10 keys of one account', via: 'tollgate-pg-account', subject: first, url: first.url, headers: [], bearerRotate: pg.accountKeys, ...base }]
      : []),
    shared(2),
    shared(3),
  ];
}

function loadArgs(scenario, opts) {
  const urls = (scenario.urls ?? [scenario.url]).flatMap((url) => ['--url', url + scenario.path]);
  const open = scenario.kind === 'open';
  // Open loop: connections are only a ceiling (opened as queueing needs them); warm-up is by time at that rate.
  const connections = open ? Math.max(opts.connections, OPEN_LOOP_MAX_CONNECTIONS) : opts.connections;
  const warmupRequests = open ? Math.min(opts.warmupRequests, Math.floor(opts.rate * opts.warmup)) : opts.warmupRequests;
  // A recorded agent body is passed as a file: 115 KB is near the kernel's limit on one argument.
  const body = scenario.bodyFile ? ['--body-file', scenario.bodyFile] : ['--body', scenario.body];
  const args = [...urls, ...body, '--connections', String(connections), '--warmup', String(opts.warmup), '--warmup-requests', String(warmupRequests), '--duration', String(opts.duration)];
  if (open) args.push('--rate', String(opts.rate));
  for (const header of scenario.headers) args.push('--header', header);
  if (scenario.stream) args.push('--stream');
  if (scenario.streamEnd) args.push('--stream-end', scenario.streamEnd);
  if (scenario.idempotency) args.push('--unique-idempotency-key');
  if (scenario.bearerRotate) args.push('--bearer-rotate', scenario.bearerRotate.join(','));
  if (opts.requests !== undefined) args.push('--requests', String(opts.requests));
  return args;
}

export async function runScenario(scenario, procs, opts, round) {
  const all = [procs.mock, procs.tollgate, procs.portkey, ...(procs.pg?.gateways ?? [])].filter(Boolean);
  const pids = Object.fromEntries(all.map((p) => [p.name, p.child.pid]));
  const withPostgres = scenario.via.startsWith('tollgate-pg');
  const child = track('load', spawn(process.execPath, [LOAD, ...loadArgs(scenario, opts)], { stdio: ['ignore', 'pipe', 'pipe'] }));
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((done) => child.once('exit', done));
  let start;
  let end;
  let result;
  // performance.now() at both ends, to find the gateway's collections in the window (--gc).
  let windowStart;
  let windowEnd;
  for await (const line of createInterface({ input: child.stdout })) {
    const event = JSON.parse(line);
    // Sampled here, when the load generator says the window opens and closes (pipe delay is the same at both ends).
    if (event.event === 'window-start') {
      start = snapshot({ ...pids, load: child.pid }, { withPostgres });
      windowStart = performance.now();
    } else if (event.event === 'window-end') {
      end = snapshot({ ...pids, load: child.pid }, { withPostgres });
      windowEnd = performance.now();
    }
    else if (event.event === 'result') result = event;
  }
  const code = await exited;
  if (code !== 0 || !result || !start || !end) throw new Error(`load generator failed for ${scenario.id} (exit ${code}):\n${stderr}`);
  const cpu = cpuOverWindow(start, end, result.completed.measure);
  if (scenario.group) {
    // Several gateways served the load: the subject's figures are their sum.
    cpu.perRequest[scenario.subject.name] = sumOf(scenario.group.map((name) => cpu.perRequest[name]));
    cpu.cores[scenario.subject.name] = sumOf(scenario.group.map((name) => cpu.cores[name]));
  }
  delete result.event;
  return {
    id: scenario.id,
    label: scenario.label,
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
    contextSwitchesPerRequest: cpu.contextSwitchesPerRequest,
    postgresCpuMsPerRequest: cpu.postgresMsPerRequest,
    window: { start: windowStart, end: windowEnd },
  };
}

function sumOf(values) {
  return Math.round(values.reduce((a, b) => a + (b ?? 0), 0) * 10_000) / 10_000;
}

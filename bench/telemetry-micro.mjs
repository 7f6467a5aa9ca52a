// Micro-benchmark of what metrics and the access log add to one request (src/telemetry, http/request-end):
// the RequestTrace, GatewayMetrics.requestEnded, two timed ledger writes, and the access-log line with the
// redacting logger — against what the gateway did before (one access-log line from the bill, no redaction).
// The budget: at most 0.02 ms (20 000 ns) more CPU per request. The lines go to /dev/null through
// pino's asynchronous destination, as the server's go to stderr.
// Run: npm run build && node bench/telemetry-micro.mjs [--ops 300000] [--rounds 5]
// CPU is process.cpuUsage() (every thread, GC included) over the loop ÷ operations; rounds interleave the
// two variants and the median is reported.
import { openSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import { pino } from 'pino';
import { parseConfig } from '../dist/config/load.js';
import { addBilledFields } from '../dist/http/request-end.js';
import { REDACTED_PATHS } from '../dist/log.js';
import { GatewayMetrics } from '../dist/telemetry/metrics.js';
import { RequestTrace } from '../dist/telemetry/request-trace.js';

const { values } = parseArgs({ options: { ops: { type: 'string', default: '300000' }, rounds: { type: 'string', default: '5' } } });
const OPS = Number(values.ops);
const ROUNDS = Number(values.rounds);

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

const config = parseConfig(
  `providers:
  openai: { kind: openai, api_key: sk-x }
  anthropic: { kind: anthropic, api_key: sk-y }
models:
${Array.from({ length: 20 }, (_, i) => `  model-${i}:\n    upstreams: [{ provider: ${i % 2 ? 'openai' : 'anthropic'}, model: up-${i} }]\n    price: { input: 1, output: 2 }\n    max_output_tokens: 1000\n`).join('')}`,
  '/tmp/bench.yaml',
  {},
);
const metrics = new GatewayMetrics(config, { activeHolds: async () => ({ count: 0, amount: 0 }), isCooling: () => false });
const devNull = openSync('/dev/null', 'w');
const before = pino({ level: 'info', base: { service: 'tollgate' } }, pino.destination({ dest: devNull, sync: false }));
const after = pino({ level: 'info', base: { service: 'tollgate' }, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, pino.destination({ dest: devNull, sync: false }));

const record = (i) => ({
  requestId: `req_${i}`,
  time: Date.now(),
  keyId: 'key_b6b907805175087d',
  model: `model-${i % 20}`,
  provider: i % 2 ? 'openai' : 'anthropic',
  upstreamModel: `up-${i % 20}`,
  status: 200,
  inputTokens: 11,
  cachedInputTokens: 0,
  outputTokens: 7,
  reasoningTokens: 0,
  cost: 25_000,
  usageSource: 'upstream',
  attempts: [{ provider: i % 2 ? 'openai' : 'anthropic', status: 200, durationMs: 3 }],
});

/** Before: the bill's access line (RequestBill.logOutcome as it was). */
function oldRequest(i) {
  const r = record(i);
  const openedAt = performance.now();
  before.info(
    { requestId: r.requestId, keyId: r.keyId, model: r.model, provider: r.provider, status: r.status, inputTokens: r.inputTokens, outputTokens: r.outputTokens, cost: r.cost, usageSource: r.usageSource, ms: Math.round(performance.now() - openedAt) },
    'request',
  );
}

/** After: the trace, two timed ledger writes, the metrics and the access line (http/request-end.ts). */
function newRequest(i) {
  const r = record(i);
  const trace = new RequestTrace((t) => {
    metrics.requestEnded('chat_completions', r.model, t);
    const billed = t.billed;
    const line = { requestId: r.requestId, method: 'POST', path: '/v1/chat/completions', status: t.clientStatus(), ms: Math.round(performance.now() - t.startedAt) };
    line.keyId = r.keyId;
    addBilledFields(line, billed);
    after.info(line, 'request');
  });
  for (let w = 0; w < 2; w++) {
    const startedAt = performance.now();
    metrics.ledgerWrite((performance.now() - startedAt) / 1000);
  }
  trace.billOpened(r.provider);
  trace.billClosed(r);
  trace.responseClosed(200, true);
}

function measure(body) {
  for (let i = 0; i < 20_000; i++) body(i);
  gc();
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < OPS; i++) body(i);
  const cpu = process.cpuUsage(cpu0);
  return ((cpu.user + cpu.system) * 1000) / OPS;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const runs = { before: [], after: [] };
for (let round = 0; round < ROUNDS; round++) {
  runs.before.push(measure(oldRequest));
  runs.after.push(measure(newRequest));
}
const b = median(runs.before);
const a = median(runs.after);
console.log(`ops per round: ${OPS}, rounds: ${ROUNDS} (median of each)`);
console.log(`before (access line only):                 ${Math.round(b)} ns CPU per request`);
console.log(`after (trace + metrics + timed writes + line): ${Math.round(a)} ns CPU per request`);
console.log(`added: ${Math.round(a - b)} ns = ${((a - b) / 1e6).toFixed(4)} ms per request (budget 0.02 ms)`);
console.log(`runs before: ${runs.before.map(Math.round).join(' ')} | after: ${runs.after.map(Math.round).join(' ')}`);

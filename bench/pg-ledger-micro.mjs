// Store-level benchmark of the PostgreSQL ledger (issue 12): C concurrent "requests", each doing what a
// chat request does to the database — the key lookup, a hold, a settlement with its usage row — on ONE
// key (or --keys N spread keys), for --duration seconds. Reports requests/s, the p50/p99 of the three
// round trips together, and the CPU the PostgreSQL backends and this process used per request, so a
// change to the batch function or the batchers can be judged without the HTTP layers around it.
// Run: npm run build && node bench/pg-ledger-micro.mjs [--postgres URL] [--concurrency 50] [--duration 6] [--keys 1] [--no-lookup] [--stores 1]
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createBenchSchema } from './postgres.mjs';
import { postgresCpuMs } from './proc-stats.mjs';
import { openStore } from '../dist/storage/open-store.js';

const { values } = parseArgs({
  options: {
    postgres: { type: 'string', default: process.env.TOLLGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
    concurrency: { type: 'string', default: '50' },
    duration: { type: 'string', default: '6' },
    keys: { type: 'string', default: '1' },
    'no-lookup': { type: 'boolean', default: false },
    stores: { type: 'string', default: '1' },
  },
});
const C = Number(values.concurrency);
const DURATION_MS = Number(values.duration) * 1000;
const KEYS = Number(values.keys);
const STORES = Number(values.stores);

const schema = await createBenchSchema(values.postgres);
const store = await openStore(schema.url, { busyTimeoutMs: 5000 });
// --stores N: N stores (N pools, N batchers) in this process, as N gateways would have, requests spread over them.
const stores = [store];
for (let i = 1; i < STORES; i++) stores.push(await openStore(schema.url, { busyTimeoutMs: 5000 }));
try {
  const keys = [];
  for (let i = 0; i < KEYS; i++) {
    const hash = `bench-hash-${i}`;
    const key = await store.keys.create({
      id: `key-${i}`, name: `bench ${i}`, prefix: 'tg-bench', secretHash: hash, allowedModels: '*',
      initialBalance: 1_000_000_000_000_000, topupRequestId: randomUUID(), now: Date.now(),
    });
    keys.push({ id: key.id, hash });
  }
  const budget = { limit: null, periodStart: 0 };
  const latencies = [];
  let done = 0;
  let stop = false;

  async function oneRequest(n) {
    const key = keys[n % keys.length];
    const store = stores[n % stores.length];
    const t0 = performance.now();
    if (!values['no-lookup'] && !(await store.keys.findByHash(key.hash))) throw new Error('key not found');
    const requestId = randomUUID();
    const now = Date.now();
    const admission = await store.ledger.placeHold({ requestId, keyId: key.id, amount: 5_000_000, expiresAt: now + 60_000, now, budget });
    if (!admission.admitted) throw new Error('refused');
    const result = await store.ledger.settle({
      requestId, cost: 1_234_567, now: Date.now(), budget,
      usage: {
        requestId, time: now, keyId: key.id, model: 'gpt-4o-mini', provider: 'openai', upstreamModel: 'gpt-4o-mini',
        status: 200, inputTokens: 12, cachedInputTokens: 0, outputTokens: 34, reasoningTokens: 0, cost: 1_234_567,
        usageSource: 'upstream', attempts: [{ provider: 'openai', status: 200, durationMs: 3 }],
      },
    });
    if (result.outcome !== 'captured') throw new Error(`settle: ${result.outcome}`);
    return performance.now() - t0;
  }

  async function worker(w) {
    let n = w;
    while (!stop) {
      const ms = await oneRequest(n);
      n += C;
      if (measuring) {
        latencies.push(ms);
        done += 1;
      }
    }
  }

  let measuring = false;
  const workers = Array.from({ length: C }, (_, w) => worker(w));
  await new Promise((r) => setTimeout(r, 1500)); // warm-up
  const pg0 = postgresCpuMs();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  measuring = true;
  await new Promise((r) => setTimeout(r, DURATION_MS));
  measuring = false;
  const elapsed = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const pgMs = postgresCpuMs() - pg0;
  stop = true;
  await Promise.all(workers);
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  const violations = await store.ledger.findViolations({ keyId: undefined, staleBefore: Date.now() });
  console.log(JSON.stringify({
    concurrency: C,
    keys: KEYS,
    requestsPerSecond: Math.round((done / elapsed) * 1000),
    p50Ms: Number(q(0.5).toFixed(2)),
    p99Ms: Number(q(0.99).toFixed(2)),
    postgresCpuMsPerRequest: Number((pgMs / done).toFixed(3)),
    nodeCpuMsPerRequest: Number(((cpu.user + cpu.system) / 1000 / done).toFixed(3)),
    violations: violations.length,
  }));
} finally {
  for (const s of stores) await s.close();
  await schema.drop();
}

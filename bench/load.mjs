// HTTP load generator (its own process, so its CPU never counts against the server under test): closed
// loop (--connections workers, each sending its next request when the last one ends), or open loop
// (--rate: requests sent at a fixed arrival rate whatever the server does, latency counted from when each
// was due, so queueing in the server is not hidden by the load slowing down with it).
// Prints JSON lines on stdout: {"event":"window-start"}, {"event":"window-end"}, then {"event":"result",...}.
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { setInterval, clearInterval } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';

const USAGE = `usage: node bench/load.mjs --url URL [--url URL]... (--body JSON | --body-file PATH) [--header 'name: value']... [--stream [--stream-end TEXT]]
  [--bearer-rotate KEY,KEY,...] [--connections 50] [--duration 10] [--warmup 2] [--warmup-requests 2000] [--requests N] [--method POST]
  Several --url: the connections are split evenly over them (several gateways behind one load).
  --bearer-rotate: each request's Authorization is the next of these keys (load spread over many keys).
  --rate R: open loop, R requests per second (--connections is then the most connections it may open).
  --stream-end TEXT: a stream is complete when its body contains TEXT (its API's last event), instead of ending with data: [DONE].`;
// A warm-up never runs longer than this many times --warmup, however slow the server is.
const WARMUP_CAP_FACTOR = 5;

function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      url: { type: 'string', multiple: true, default: [] },
      'bearer-rotate': { type: 'string' },
      rate: { type: 'string' },
      method: { type: 'string', default: 'POST' },
      body: { type: 'string', default: '' },
      'body-file': { type: 'string' },
      'stream-end': { type: 'string' },
      header: { type: 'string', multiple: true, default: [] },
      stream: { type: 'boolean', default: false },
      'unique-idempotency-key': { type: 'boolean', default: false },
      connections: { type: 'string', default: '50' },
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      'warmup-requests': { type: 'string', default: '2000' },
      requests: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help || values.url.length === 0) {
    console.error(USAGE);
    process.exit(values.help ? 0 : 2);
  }
  const urls = values.url.map((u) => new URL(u));
  // A file's bytes go as they are (a recorded request, byte for byte).
  const body = values['body-file'] === undefined ? (values.body === '' ? undefined : Buffer.from(values.body)) : readFileSync(values['body-file']);
  const headers = parseHeaders(values.header, body !== undefined);
  const rotate = values['bearer-rotate'] ? values['bearer-rotate'].split(',') : [];
  return {
    targets: urls.map((url) => ({ origin: url.origin, path: url.pathname + url.search })),
    // One header object per key, built once: a request only picks the next one.
    headerSets: rotate.length > 0 ? rotate.map((key) => ({ ...headers, authorization: `Bearer ${key}` })) : [headers],
    method: values.method,
    body,
    stream: values.stream,
    streamEnd: values['stream-end'],
    uniqueIdempotencyKey: values['unique-idempotency-key'],
    connections: positive('connections', values.connections),
    durationMs: positive('duration', values.duration) * 1000,
    warmupMs: Number(values.warmup) * 1000,
    // Both must pass: a slow or contended server gets enough requests through to finish JIT warm-up.
    warmupRequests: Number(values['warmup-requests']),
    // A fixed request count replaces the timed window when given.
    requests: values.requests === undefined ? undefined : positive('requests', values.requests),
    rate: values.rate === undefined ? undefined : positive('rate', values.rate),
  };
}

function positive(name, text) {
  const n = Number(text);
  if (!(n > 0)) {
    console.error(`--${name} must be a positive number, got "${text}"`);
    process.exit(2);
  }
  return n;
}

function parseHeaders(lines, hasBody) {
  const headers = hasBody ? { 'content-type': 'application/json' } : {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`bad --header "${line}" (want "name: value")`);
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

function emit(event) {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

/**
 * Checks a finished response: 200 and, for streams, a body ending in the [DONE] sentinel (or, with
 * --stream-end, one that contained that text: `ended`); else JSON without `error`.
 */
function verdict(status, opts, tail, ended, chunks) {
  if (status !== 200) return `HTTP ${status}: ${Buffer.concat(chunks).toString('utf8').slice(0, 200)}`;
  if (opts.stream && opts.streamEnd !== undefined) return ended ? undefined : `stream never sent ${JSON.stringify(opts.streamEnd)} (tail ${JSON.stringify(tail)})`;
  if (opts.stream) return tail.trimEnd().endsWith('data: [DONE]') ? undefined : `stream did not end with [DONE] (tail ${JSON.stringify(tail)})`;
  try {
    const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return parsed && typeof parsed.object === 'string' ? undefined : `unexpected body ${JSON.stringify(parsed).slice(0, 200)}`;
  } catch (err) {
    return `invalid JSON body: ${err.message}`;
  }
}

/**
 * Sends one request through undici's low-level dispatch API (cheaper than request()/fetch, so the load
 * generator stays light on a shared 2-core box) and resolves with its timings and an error text if any.
 */
let idempotencyCounter = 0;

function sendOne(pool, target, headers, opts, dueAt) {
  return new Promise((resolve) => {
    // Open loop: from when the request was due, so time spent waiting for a free connection counts.
    const started = dueAt ?? performance.now();
    let status = 0;
    let ttfb;
    let tail = '';
    let ended = false;
    const chunks = [];
    pool.dispatch(
      { origin: target.origin, path: target.path, method: opts.method, headers, body: opts.body },
      {
        onRequestStart() {},
        onResponseStart(_controller, statusCode) {
          status = statusCode;
        },
        onResponseData(_controller, chunk) {
          // Time to first chunk: the first body bytes, not the headers (which a gateway may flush early).
          ttfb ??= performance.now() - started;
          // Streams are only checked for their ending, so keep just a short tail; error bodies are kept for the report.
          if (opts.stream && status === 200) {
            const text = tail + chunk.toString('latin1');
            // The tail carries over chunk boundaries, so the end marker is found even when split.
            if (opts.streamEnd !== undefined && !ended) ended = text.includes(opts.streamEnd);
            tail = text.slice(-Math.max(64, opts.streamEnd?.length ?? 0));
          } else chunks.push(chunk);
        },
        onResponseEnd() {
          const total = performance.now() - started;
          resolve({ total, ttfb: ttfb ?? total, error: verdict(status, opts, tail, ended, chunks) });
        },
        onResponseError(_controller, err) {
          resolve({ total: performance.now() - started, ttfb: ttfb ?? 0, error: `${err.code ?? err.name}: ${err.message}` });
        },
      },
    );
  });
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function round3(x) {
  return x === null ? null : Math.round(x * 1000) / 1000;
}

/** Runs warm-up, then the measured window, then lets in-flight requests finish (they are not measured). */
async function run(opts) {
  const perTarget = Math.ceil(opts.connections / opts.targets.length);
  const pools = opts.targets.map((t) => new Pool(t.origin, { connections: perTarget, pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 120_000 }));
  let nextHeaders = 0;
  const state = { unfinished: 0, phase: 'warmup', windowStart: 0, windowEnd: 0, totals: [], ttfbs: [], errors: new Map(), errorCount: { warmup: 0, measure: 0, drain: 0 }, completed: { warmup: 0, measure: 0, drain: 0 } };

  function endWindow() {
    if (state.phase !== 'measure') return;
    state.windowEnd = performance.now();
    state.phase = 'drain';
    emit({ event: 'window-end' });
  }

  function warmEnough() {
    const elapsed = performance.now() - state.startedAt;
    return elapsed >= opts.warmupMs * WARMUP_CAP_FACTOR || (elapsed >= opts.warmupMs && state.completed.warmup >= opts.warmupRequests);
  }

  function startWindow() {
    if (state.phase !== 'warmup') return;
    clearTimeout(state.warmupCap);
    state.phase = 'measure';
    state.windowStart = performance.now();
    emit({ event: 'window-start' });
    if (opts.requests === undefined) setTimeout(endWindow, opts.durationMs);
  }

  function record(result) {
    if (state.phase === 'warmup' && warmEnough()) startWindow();
    const phase = state.phase;
    // Open loop against a server slower than the rate: what is still queued when the drain ends is cut
    // (its latency is already counted as unmeasured backlog), not an error of the server.
    if (opts.rate !== undefined && phase === 'drain' && result.error?.startsWith('UND_ERR_DESTROYED')) {
      state.unfinished++;
      return;
    }
    state.completed[phase]++;
    if (result.error) {
      state.errorCount[phase]++;
      state.errors.set(result.error, (state.errors.get(result.error) ?? 0) + 1);
    } else if (phase === 'measure') {
      state.totals.push(result.total);
      state.ttfbs.push(result.ttfb);
    }
    if (phase === 'measure' && opts.requests !== undefined && state.completed.measure >= opts.requests) endWindow();
  }

  async function worker(_, index) {
    const t = index % opts.targets.length;
    while (state.phase !== 'drain') {
      let headers = opts.headerSets[nextHeaders++ % opts.headerSets.length];
      // A fresh Idempotency-Key per request: the cost of claiming and recording, never a replay.
      if (opts.uniqueIdempotencyKey) headers = { ...headers, 'idempotency-key': `bench-${process.pid}-${++idempotencyCounter}` };
      record(await sendOne(pools[t], opts.targets[t], headers, opts));
    }
  }

  /** Open loop: every millisecond, sends the requests that fell due since the last tick (targets in turn). */
  function arrivals() {
    return new Promise((resolveAll) => {
      const inFlight = new Set();
      let sent = 0;
      const tick = setInterval(() => {
        const now = performance.now();
        if (state.phase === 'drain') {
          clearInterval(tick);
          Promise.all(inFlight).then(resolveAll);
          return;
        }
        for (const due = Math.floor(((now - state.startedAt) / 1000) * opts.rate); sent < due; sent++) {
          const dueAt = state.startedAt + (sent * 1000) / opts.rate;
          const t = sent % opts.targets.length;
          const headers = opts.headerSets[nextHeaders++ % opts.headerSets.length];
          const request = sendOne(pools[t], opts.targets[t], headers, opts, dueAt).then((result) => {
            inFlight.delete(request);
            record(result);
          });
          inFlight.add(request);
        }
      }, 1);
    });
  }

  state.startedAt = performance.now();
  if (opts.warmupMs > 0) {
    setTimeout(() => warmEnough() && startWindow(), opts.warmupMs);
    state.warmupCap = setTimeout(startWindow, opts.warmupMs * WARMUP_CAP_FACTOR);
  } else startWindow();
  const workers = opts.rate === undefined ? Array.from({ length: opts.connections }, worker) : [arrivals()];
  // A hung server must not hang the benchmark: give in-flight requests a bounded time to drain.
  const deadline = (opts.requests === undefined ? opts.durationMs : 600_000) + opts.warmupMs * WARMUP_CAP_FACTOR + 10_000;
  await Promise.race([Promise.all(workers), sleep(deadline, undefined, { ref: false })]);
  // After a timeout, close whatever phase is still open; destroy() then fails the stuck requests, which count as errors.
  startWindow();
  endWindow();
  await Promise.all(pools.map((pool) => pool.destroy()));
  return summarise(opts, state);
}

function summarise(opts, state) {
  const seconds = (state.windowEnd - state.windowStart) / 1000;
  const totals = Float64Array.from(state.totals).sort();
  const ttfbs = Float64Array.from(state.ttfbs).sort();
  return {
    event: 'result',
    connections: opts.connections,
    rate: opts.rate ?? null,
    windowSeconds: round3(seconds),
    completed: state.completed,
    ok: totals.length,
    // Only successful responses count as throughput; a fast error is not work the gateway was asked to do.
    rps: round3(totals.length / seconds),
    latencyMs: { p50: round3(percentile(totals, 50)), p90: round3(percentile(totals, 90)), p99: round3(percentile(totals, 99)), max: round3(totals.at(-1) ?? null) },
    ttfbMs: { p50: round3(percentile(ttfbs, 50)), p99: round3(percentile(ttfbs, 99)) },
    errors: state.errorCount.warmup + state.errorCount.measure + state.errorCount.drain,
    errorsByPhase: state.errorCount,
    unfinished: state.unfinished,
    errorSamples: [...state.errors].slice(0, 10).map(([message, count]) => ({ message, count })),
  };
}

emit(await run(parseOptions(process.argv.slice(2))));

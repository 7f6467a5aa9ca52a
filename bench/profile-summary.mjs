// Summarises a V8 .cpuprofile (from `node --cpu-prof`): top self-time functions, time by module, and Tollgate's own functions by inclusive time.
// Usage: node bench/profile-summary.mjs FILE.cpuprofile|DIR [--top 10] [--cpu-ms X (the bench's CPU ms/req, to print each share in µs per request)]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

// Samples that are not work done for a request: an idle event loop, or the profiler's own root.
const NOT_BUSY = new Set(['(idle)', '(root)']);

function parseOptions(argv) {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { top: { type: 'string', default: '10' }, 'cpu-ms': { type: 'string' } } });
  if (positionals.length !== 1) {
    console.error('usage: node bench/profile-summary.mjs FILE.cpuprofile|DIR [--top 10] [--cpu-ms X]');
    process.exit(2);
  }
  return { file: resolveProfile(positionals[0]), top: Number(values.top), cpuMs: values['cpu-ms'] ? Number(values['cpu-ms']) : undefined };
}

/** A directory means its newest .cpuprofile (node names them CPU.<date>.<time>.<pid>...). */
function resolveProfile(path) {
  if (!statSync(path).isDirectory()) return path;
  const files = readdirSync(path)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(path, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (files.length === 0) throw new Error(`no .cpuprofile in ${path}`);
  return files[0];
}

/** Self time per node in µs: each sample owns the interval until the next one (as Chrome DevTools counts it). */
function selfTimes(profile) {
  const self = new Map();
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) {
    const dt = timeDeltas[i + 1] ?? 0;
    self.set(samples[i], (self.get(samples[i]) ?? 0) + dt);
  }
  return self;
}

/** Groups a script URL into something a reader can act on: a package, a Tollgate source folder, a Node subsystem. */
function moduleOf(frame) {
  const url = frame.url;
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : '(native: V8 builtins, C++ addons)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1];
  const dist = /\/dist\/(?:([^/]+)\/)?[^/]+$/.exec(url);
  if (dist) return `tollgate: ${dist[1] ?? '(root)'}`;
  const internal = /^node:internal\/(?:deps\/)?([^/]+)/.exec(url);
  if (internal) return `node:${internal[1].replace(/\.js$/, '')}`;
  if (url.startsWith('node:')) return url;
  return url.split('/').slice(-2).join('/');
}

function shortUrl(url) {
  const pkg = /node_modules\/(.*)$/.exec(url);
  if (pkg) return pkg[1];
  const dist = /\/(dist\/.*)$/.exec(url);
  return dist ? dist[1] : url.replace(/^file:\/\//, '');
}

function functionKey(frame) {
  const name = frame.functionName || '(anonymous)';
  return frame.url ? `${name}  ${shortUrl(frame.url)}:${frame.lineNumber + 1}` : name;
}

/**
 * Inclusive time per Tollgate (dist/) function, counting a function once per stack even when it recurses,
 * so a handler's share covers everything it calls (fastify, undici, SQLite) on its behalf.
 */
function tollgateInclusive(profile, self) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map();
  const onStack = new Map();
  function visit(node) {
    const isOurs = /\/dist\//.test(node.callFrame.url) && !/node_modules/.test(node.callFrame.url);
    const key = functionKey(node.callFrame);
    const depth = onStack.get(key) ?? 0;
    if (isOurs) onStack.set(key, depth + 1);
    let inclusive = self.get(node.id) ?? 0;
    for (const child of node.children ?? []) inclusive += visit(byId.get(child));
    if (isOurs) {
      onStack.set(key, depth);
      if (depth === 0) totals.set(key, (totals.get(key) ?? 0) + inclusive);
    }
    return inclusive;
  }
  visit(profile.nodes[0]);
  return totals;
}

function top(map, n) {
  return [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
}

/**
 * Shares are of sampled wall time, which on a busy machine includes waiting for a CPU; so per-request
 * figures come from the share × the CPU per request the benchmark measured, not from dividing by requests.
 */
function printRows(title, rows, busy, cpuMs) {
  console.log(`\n${title}`);
  for (const [name, us] of rows) {
    const perRequest = cpuMs ? `  ${(((us / busy) * cpuMs) * 1000).toFixed(1).padStart(6)} µs/req` : '';
    console.log(`  ${((us / busy) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms${perRequest}  ${name}`);
  }
}

function main() {
  const opts = parseOptions(process.argv.slice(2));
  const profile = JSON.parse(readFileSync(opts.file, 'utf8'));
  const self = selfTimes(profile);
  const byFunction = new Map();
  const byModule = new Map();
  let busy = 0;
  let idle = 0;
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    if (us === 0) continue;
    if (NOT_BUSY.has(node.callFrame.functionName) && !node.callFrame.url) {
      idle += us;
      continue;
    }
    busy += us;
    const fn = functionKey(node.callFrame);
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    const mod = moduleOf(node.callFrame);
    byModule.set(mod, (byModule.get(mod) ?? 0) + us);
  }
  console.log(`${opts.file}\nsampled ${((busy + idle) / 1e6).toFixed(1)} s: busy ${(busy / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s; shares below are of busy time`);
  printRows(`top ${opts.top} functions by self time`, top(byFunction, opts.top), busy, opts.cpuMs);
  printRows('self time by module', top(byModule, 25), busy, opts.cpuMs);
  printRows(`top ${opts.top} Tollgate functions by inclusive time`, top(tollgateInclusive(profile, self), opts.top), busy, opts.cpuMs);
}

main();

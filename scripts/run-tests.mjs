// Runs test files with node:test through the tsx loader (Node 20's --test cannot glob .ts files itself, so
// the list is built here). Where a file lives says what it needs (test/unit/test-layout.test.ts checks it):
//   test/unit, test/contract   nothing but this process: no PostgreSQL, Redis, Chromium or spawned gateway
//   test/storage               a real PostgreSQL or Redis
//   test/e2e                   the built gateway (dist/, so `npm run build` first), spawned as processes
//
//   node scripts/run-tests.mjs                every file (npm test, after the build): the three sets below in turn,
//                                             each at its own concurrency
//   node scripts/run-tests.mjs --unit         test/unit + test/contract, one file per core at a time
//   node scripts/run-tests.mjs --storage      test/storage
//   node scripts/run-tests.mjs --e2e          test/e2e, one at a time (their timing tests assume it)
//   … [path-substring ...]                    only the files whose path contains one of them
//   … --concurrency=N                         N files at a time instead
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

const CORES = availableParallelism();
/** Folders, and how many of their files run at once by default. */
const SETS = {
  '--unit': { dirs: ['test/unit', 'test/contract'], concurrency: CORES },
  // Each test has its own schema or key prefix: they may run beside one another (docs/adr/0035-fast-tests.md).
  '--storage': { dirs: ['test/storage'], concurrency: CORES },
  '--e2e': { dirs: ['test/e2e'], concurrency: 1 },
};

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const args = process.argv.slice(2);
const sets = args.filter((a) => a in SETS).map((a) => SETS[a]);
const concurrencyArg = args.find((a) => a.startsWith('--concurrency='));
const unknown = args.filter((a) => a.startsWith('--') && !(a in SETS) && a !== concurrencyArg);
if (unknown.length > 0) {
  console.error(`unknown option ${unknown.join(' ')} (known: ${Object.keys(SETS).join(' ')} --concurrency=N)`);
  process.exit(2);
}
const filters = args.filter((a) => !a.startsWith('--'));
const forced = concurrencyArg ? Number(concurrencyArg.slice('--concurrency='.length)) : undefined;
if (forced !== undefined && (!Number.isInteger(forced) || forced < 1)) {
  console.error(`bad ${concurrencyArg}: a whole number of files at a time, at least 1`);
  process.exit(2);
}
/**
 * End-to-end files that spend most of their time waiting — for a 60 s rate window to pass, a 65 s rolling
 * window across three gateways — with little CPU: they run in a lane of their own beside the other
 * end-to-end files, so the waiting overlaps the others' work (about 160 s off `npm test`). Their
 * assertions count admissions, never durations, so the other lane's load does not change what they see.
 */
const E2E_WAITING = ['test/e2e/limits-rate.test.ts', 'test/e2e/limits-shared.test.ts'];

const matching = (set) =>
  set.dirs
    .flatMap(find)
    .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
    .sort();

/** One node:test run of `files`, `concurrency` at a time; resolves with its exit status. `buffered`: its output is printed when it ends. */
function run(files, concurrency, buffered = false) {
  const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${concurrency}`, ...files], {
    stdio: buffered ? ['ignore', 'pipe', 'pipe'] : 'inherit',
  });
  const output = [];
  if (buffered) {
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
  }
  return new Promise((resolve) => {
    child.on('close', (code) => {
      if (buffered) {
        process.stdout.write(`\n── ${files.join(', ')} (run beside the others) ──\n`);
        process.stdout.write(Buffer.concat(output));
      }
      resolve(code ?? 1);
    });
  });
}

/** A phase's files; end-to-end files that mostly wait go in a second lane beside the rest when both lanes have files. */
async function runPhase(phase) {
  const concurrency = forced ?? phase.concurrency;
  const waiting = concurrency === 1 ? phase.files.filter((f) => E2E_WAITING.includes(f.replaceAll('\\', '/'))) : [];
  const rest = phase.files.filter((f) => !waiting.includes(f));
  if (waiting.length === 0 || rest.length === 0) return run(phase.files, concurrency);
  const [a, b] = await Promise.all([run(rest, concurrency), run(waiting, 1, true)]);
  return a || b;
}

// Sets named on the line run together, at the lowest of their concurrencies. Without one (npm test), each
// set runs in turn at its own: the files that need nothing but their process and those with their own
// schema run side by side, the end-to-end files one at a time — and every set runs even if one failed.
const phases = sets.length > 0 ? [{ files: sets.flatMap(matching), concurrency: Math.min(...sets.map((s) => s.concurrency)) }] : Object.values(SETS).map((set) => ({ files: matching(set), concurrency: set.concurrency }));
if (phases.every((phase) => phase.files.length === 0)) {
  console.error('no test files matched', args);
  process.exit(1);
}
let status = 0;
for (const phase of phases) if (phase.files.length > 0) status = (await runPhase(phase)) || status;
process.exit(status);

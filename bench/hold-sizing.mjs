// Micro-benchmark of hold sizing: how long countChatInput (the hold's input estimate) takes for a prompt of
// about 100k tokens of realistic mixed text — English prose (the READMEs in node_modules), TypeScript
// (src/) and JSON (the OpenAPI description) — and, for comparison, gpt-tokenizer counting the same
// segments (what the gateway used before docs/adr/0024-tokenizer-memory.md).
// Run: npm run build && node bench/hold-sizing.mjs [--runs 40] [--tokens 100000] [--no-reference]
// Every run sizes a different window of the corpus, so no run is a repeat of the one before; the
// first (cold: the vocabulary is read then) is reported apart. Wall and CPU times are medians.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { nextCut } from '../dist/tokens/bounded-count.js';
import { countO200k } from '../dist/tokens/o200k-count.js';
import { countChatInput } from '../dist/api/openai-chat/count-input.js';
import { median, round } from './numbers.mjs';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '40' },
    tokens: { type: 'string', default: '100000' },
    'no-reference': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const RUNS = Number(values.runs);
const TARGET_TOKENS = Number(values.tokens);
const ROOT = fileURLToPath(new URL('..', import.meta.url));

function files(dir, suffix) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : files(path, suffix);
    return name.endsWith(suffix) ? [path] : [];
  });
}

const modules = join(ROOT, 'node_modules');
const prose = readdirSync(modules)
  .flatMap((name) => (name.startsWith('@') ? readdirSync(join(modules, name)).map((sub) => join(name, sub)) : [name]))
  .flatMap((name) => {
    try {
      return [readFileSync(join(modules, name, 'README.md'), 'utf8')];
    } catch {
      return [];
    }
  })
  .join('\n\n');
const code = files(join(ROOT, 'src'), '.ts').map((path) => readFileSync(path, 'utf8')).join('\n');
const json = readFileSync(join(ROOT, 'test', 'fixtures', 'openai-openapi.json'), 'utf8');

/** About 4 KB of prose, 1.2 KB of code and 1.6 KB of JSON per step, from offsets that move with `run`. */
function prompt(run, chars) {
  const parts = [];
  let length = 0;
  for (let step = 0; length < chars; step++) {
    const at = (run * 7_919 + step) * 4_093;
    for (const [text, size] of [[prose, 4_000], [code, 1_200], [json, 1_600]]) {
      const from = at % Math.max(1, text.length - size);
      const part = text.slice(from, from + size);
      parts.push(part);
      length += part.length;
    }
  }
  return parts.join('\n');
}

/** The old path: the same bounded segments, each counted by gpt-tokenizer. */
function referenceCount(text) {
  let tokens = 0;
  for (let at = 0; at < text.length; ) {
    const end = nextCut(text, at, true);
    tokens += countTokens(text.slice(at, end), { disallowedSpecial: new Set() });
    at = end;
  }
  return tokens;
}

async function time(fn) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await fn();
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1000, result };
}

// Size the prompt: characters for about TARGET_TOKENS tokens of this mix.
let chars = 400_000;
for (let pass = 0; pass < 2; pass++) chars = Math.round((chars * TARGET_TOKENS) / countO200k(prompt(0, chars)));

const rows = [];
for (const [name, run] of [
  ['countChatInput (compact o200k)', (text) => countChatInput({ messages: [{ role: 'user', content: text }] })],
  ...(values['no-reference'] ? [] : [['gpt-tokenizer, same segments', async (text) => referenceCount(text)]]),
]) {
  const cold = await time(() => run(prompt(RUNS + 1, chars)));
  const samples = [];
  for (let r = 1; r <= RUNS; r++) {
    const text = prompt(r, chars);
    samples.push({ ...(await time(() => run(text))), chars: text.length });
  }
  const walls = samples.map((s) => s.wall);
  rows.push({
    name,
    tokens: median(samples.map((s) => s.result)),
    chars: median(samples.map((s) => s.chars)),
    wallMs: { median: round(median(walls), 2), min: round(Math.min(...walls), 2), max: round(Math.max(...walls), 2) },
    cpuMs: round(median(samples.map((s) => s.cpu)), 2),
    coldMs: round(cold.wall, 1),
  });
}

if (values.json) console.log(JSON.stringify({ runs: RUNS, loadavg: loadavg(), rows }, null, 2));
else {
  console.log(`hold sizing of a ~${TARGET_TOKENS}-token prompt (prose, code, JSON), ${RUNS} runs; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  for (const r of rows) {
    console.log(`  ${r.name.padEnd(32)} ${r.tokens} tokens / ${r.chars} chars: median ${r.wallMs.median} ms (min ${r.wallMs.min}, max ${r.wallMs.max}), CPU ${r.cpuMs} ms; first run ${r.coldMs} ms`);
  }
}

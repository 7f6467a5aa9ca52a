// The hold of a recorded coding-agent request (test/fixtures/agents/), as the gateway sizes it, against the
// input the model actually reads: for each recorded body (Claude Code and Codex, turns 1 and 2) its input
// estimate (what the hold is sized from), the cache-write part of it, the output reserved, the hold in USD
// at the benchmark's prices (bench/processes.mjs), the o200k_base count of what the model reads and the
// ratio estimate ÷ that count; then how long the estimate takes, cold and warm. See bench/README.md.
// Run: npm run build && node bench/agent-hold-sizing.mjs [--warm-runs 300] [--processes 5] [--json]
//
// Everything goes through the gateway's own code in dist/: the body is read as the server reads it
// (api/body-by-members.ts, the raw text kept with it), the model's config comes from the config
// loader, the estimate from the client API's countInput (api/anthropic-messages, api/openai-responses), the
// output budget from its outputBudget, the hold from billing/pricing.ts's sizeChatHold.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { anthropicMessages } from '../dist/api/anthropic-messages/index.js';
import { openaiResponses } from '../dist/api/openai-responses/index.js';
import { BY_MEMBERS_MIN_BYTES, parseByMembers } from '../dist/api/body-by-members.js';
import { withRawText } from '../dist/api/raw-body.js';
import { sizeChatHold } from '../dist/billing/pricing.js';
import { loadConfig } from '../dist/config/load.js';
import { resolveRoute } from '../dist/routing/resolve-route.js';
import { asRead, jsonBytes } from '../dist/http/json-bytes.js';
import { loadTokenizer } from '../dist/tokens/bounded-count.js';
import { countO200k } from '../dist/tokens/o200k-count.js';
import { median, round } from './numbers.mjs';
import { AGENT_MODELS, agentProviders } from './processes.mjs';

const FIXTURES = fileURLToPath(new URL('../test/fixtures/agents/', import.meta.url));
const BODIES = [
  { file: 'claude-code-2.1.197-turn1.json', api: anthropicMessages, model: 'claude-sonnet-4-5' },
  { file: 'claude-code-2.1.197-turn2.json', api: anthropicMessages, model: 'claude-sonnet-4-5', after: 'claude-code-2.1.197-turn1.json' },
  { file: 'codex-0.171.0-turn1.json', api: openaiResponses, model: 'gpt-5-codex' },
  { file: 'codex-0.171.0-turn2.json', api: openaiResponses, model: 'gpt-5-codex', after: 'codex-0.171.0-turn1.json' },
];

const { values } = parseArgs({
  options: {
    'warm-runs': { type: 'string', default: '300' },
    processes: { type: 'string', default: '5' },
    json: { type: 'boolean', default: false },
    // Internal: time one body in a fresh process (so "cold" is cold).
    child: { type: 'string' },
  },
});

/**
 * The benchmark's config, through the gateway's own config loader (prices, max_output_tokens, tool overhead),
 * and each model's route as a key allowed every model has it (countInput sees the route: whether any of its
 * cells is native decides, for Messages, whether server tools are refused).
 */
function benchConfig() {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-hold-sizing-'));
  try {
    const path = join(dir, 'tollgate.yaml');
    writeFileSync(path, `database: "sqlite:${join(dir, 'unused.db')}"\nproviders:${agentProviders('http://127.0.0.1:9/v1')}\nmodels:${AGENT_MODELS}\n`);
    return loadConfig(path, {});
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const CONFIG = benchConfig();
const benchModels = () => CONFIG.models;
const routes = new Map();
const routeOf = (model) => {
  if (!routes.has(model)) routes.set(model, resolveRoute(CONFIG, '*', model.id, 'chat'));
  return routes.get(model);
};

/**
 * A body as the server has it: an agent's large body parsed member by member (its repeated blocks from
 * memory on a warm run: api/body-by-members.ts), a small one whole; its raw text and bytes kept with it.
 */
function received(bytes) {
  const laid = bytes.length >= BY_MEMBERS_MIN_BYTES ? parseByMembers(bytes) : undefined;
  if (laid) return withRawText(laid.value, laid.text, asRead(bytes), laid.members);
  const { text, read } = jsonBytes(bytes);
  return withRawText(JSON.parse(text), text, read);
}

/** The estimate the hold is sized from: countInput, plus (Responses) the stored context a bind adds (none here: store is false). */
async function estimate(api, body, model) {
  const counted = await api.countInput(body, model, routeOf(model));
  return typeof counted === 'number' ? { tokens: counted } : counted;
}

// ---------------------------------------------------------------- what the model reads, in o200k tokens

const o200k = (text) => (typeof text === 'string' && text.length > 0 ? countO200k(text) : 0);

/** The text of a Messages content (a string or blocks): text, thinking, tool-use name and input, tool results. */
function messagesContentText(content) {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((block) => {
    if (block.type === 'text') return [block.text];
    if (block.type === 'thinking') return [block.thinking];
    if (block.type === 'tool_use') return [block.name, JSON.stringify(block.input)];
    if (block.type === 'tool_result') return messagesContentText(block.content);
    return [];
  });
}

/**
 * Claude Code: the system blocks' text, each message's text (text, thinking — never its signature —,
 * tool-use name and input as JSON, tool results' text) and each tool definition as its JSON text (name,
 * description, input_schema; no cache_control) — each counted on its own with the o200k_base BPE.
 */
function messagesRead(body) {
  const texts = [...messagesContentText(body.system), ...body.messages.flatMap((m) => messagesContentText(m.content))];
  const tools = (body.tools ?? []).map((tool) => JSON.stringify({ ...tool, cache_control: undefined }));
  return { texts, tools };
}

/** The text of a Responses input item: message parts' text, a call's name and arguments, a call output, reasoning summaries. */
function responsesItemText(item) {
  switch (item.type ?? 'message') {
    case 'message':
      return typeof item.content === 'string' ? [item.content] : item.content.map((part) => part.text ?? '');
    case 'function_call':
      return [item.name, item.arguments];
    case 'function_call_output':
      return [typeof item.output === 'string' ? item.output : JSON.stringify(item.output)];
    case 'reasoning':
      return (item.summary ?? []).map((part) => part.text);
    default:
      return [JSON.stringify(item)];
  }
}

/**
 * Codex: `instructions` (none in these recordings: Codex sends its prompt as developer messages), every
 * input item's text (message parts, function-call name and arguments, function-call output) and each tool
 * definition as its JSON text — each counted on its own with the o200k_base BPE.
 */
function responsesRead(body) {
  const input = typeof body.input === 'string' ? [body.input] : body.input.flatMap(responsesItemText);
  return { texts: [body.instructions ?? '', ...input], tools: (body.tools ?? []).map((tool) => JSON.stringify(tool)) };
}

function actualInput(api, body) {
  const read = api === anthropicMessages ? messagesRead(body) : responsesRead(body);
  const text = read.texts.reduce((n, t) => n + o200k(t), 0);
  const tools = read.tools.reduce((n, t) => n + o200k(t), 0);
  return { text, tools, total: text + tools };
}

// ---------------------------------------------------------------- timing, in fresh processes

function specOf(file) {
  return BODIES.find((b) => b.file === file);
}

async function timeEstimate(spec, model, body) {
  const start = performance.now();
  await estimate(spec.api, body, model);
  return performance.now() - start;
}

/**
 * One fresh process's figures for `file`: the first estimate with the vocabulary still to read (cold), or
 * with it read (first), or — a turn 2 — after its turn 1 on a warm process (its turn 1 estimated many times
 * first, so the code is compiled and the repeated blocks remembered: the next turn of a session on a
 * running gateway); or the warm median of many estimates, each of a freshly parsed copy.
 */
async function childFigures(kind, file) {
  const spec = specOf(file);
  const model = benchModels().get(spec.model);
  const bytes = readFileSync(join(FIXTURES, file));
  if (kind === 'cold') return { ms: await timeEstimate(spec, model, received(bytes)) };
  const t0 = performance.now();
  loadTokenizer();
  const vocabularyMs = performance.now() - t0;
  if (kind === 'first') return { ms: await timeEstimate(spec, model, received(bytes)), vocabularyMs };
  if (kind === 'next') {
    const previous = readFileSync(join(FIXTURES, spec.after));
    for (let i = 0; i < 200; i++) await estimate(spec.api, received(previous), model);
    return { ms: await timeEstimate(spec, model, received(bytes)) };
  }
  const warm = [];
  for (let i = 0; i < Number(values['warm-runs']); i++) warm.push(await timeEstimate(spec, model, received(bytes)));
  return { ms: median(warm), minMs: Math.min(...warm) };
}

function child(kind, file) {
  return JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', `${kind}:${file}`, '--warm-runs', values['warm-runs']], { encoding: 'utf8' }));
}

/** The median over `processes` fresh processes. */
function medianOf(kind, file) {
  const runs = Array.from({ length: Number(values.processes) }, () => child(kind, file));
  return { ms: median(runs.map((r) => r.ms)), vocabularyMs: runs[0].vocabularyMs === undefined ? undefined : median(runs.map((r) => r.vocabularyMs)) };
}

// ---------------------------------------------------------------- the report

const usd = (nano) => nano / 1e9;

async function main() {
  const models = benchModels();
  const rows = [];
  for (const spec of BODIES) {
    const model = models.get(spec.model);
    const bytes = readFileSync(join(FIXTURES, spec.file));
    const body = received(bytes);
    const counted = await estimate(spec.api, body, model);
    const budget = spec.api.outputBudget(body, model.maxOutputTokens);
    const holdNano = sizeChatHold(model.rates, counted.tokens, budget.maxOutput, budget.choices, counted.cacheWrite);
    const actual = actualInput(spec.api, JSON.parse(bytes.toString('utf8')));
    const cold = medianOf('cold', spec.file);
    const first = medianOf('first', spec.file);
    const next = spec.after ? medianOf('next', spec.file) : undefined;
    const warm = child('warm', spec.file);
    rows.push({
      body: spec.file.replace(/\.json$/, ''),
      kb: round(bytes.length / 1024, 1),
      estimate: counted.tokens,
      cacheWrite: counted.cacheWrite ? `${counted.cacheWrite.tokens}${counted.cacheWrite.oneHour ? ' (1 h)' : ''}` : '–',
      toolOverhead: spec.api === anthropicMessages && Array.isArray(body.tools) && body.tools.length > 0 ? model.toolOverheadTokens : 0,
      output: budget.maxOutput,
      holdUsd: round(usd(holdNano), 4),
      o200k: actual.total,
      o200kTools: actual.tools,
      ratio: round(counted.tokens / actual.total, 3),
      ratioWithoutOverhead: round((counted.tokens - (spec.api === anthropicMessages && body.tools?.length ? model.toolOverheadTokens : 0)) / actual.total, 3),
      coldProcessMs: round(cold.ms, 2),
      vocabularyMs: round(first.vocabularyMs, 1),
      firstMs: round(first.ms, 2),
      afterPreviousTurnMs: next === undefined ? null : round(next.ms, 3),
      warmMedianMs: round(warm.ms, 3),
      warmMinMs: round(warm.minMs, 3),
    });
  }
  if (values.json) {
    console.log(JSON.stringify(rows, null, 2));
    return;
  }
  const table = (headers, cells) => {
    const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => String(r[i]).length)));
    const line = (r) => r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
    return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
  };
  console.log('Hold sizing of the recorded agent requests (bench prices: Claude Sonnet 4.5 $3/$15, cache write $3.75; GPT-5-Codex $1.25/$10)\n');
  console.log(
    table(
      ['body', 'KB', 'estimate', 'of it cache write', 'tool overhead', 'output held', 'hold USD', 'o200k read', 'of it tools', 'estimate ÷ o200k', 'without overhead'],
      rows.map((r) => [r.body, r.kb, r.estimate, r.cacheWrite, r.toolOverhead, r.output, r.holdUsd.toFixed(4), r.o200k, r.o200kTools, r.ratio.toFixed(3), r.ratioWithoutOverhead.toFixed(3)]),
    ),
  );
  console.log(`
estimate: countInput's tokens (what the hold's input side is sized from; for Messages the tool overhead of the
model's tool_overhead_tokens is in it). o200k read: the o200k_base count (src/tokens/o200k-count.ts) of the text
the model reads — system / instructions, each message's or input item's text, each tool definition's JSON — with
no chat framing. For Codex (GPT-5 family, o200k_base) that is close to what OpenAI counts, less its framing and
its own rendering of the tool definitions. For Claude it is NOT Claude's count: Anthropic publishes no tokenizer,
Claude's own count is not available offline, and Anthropic documents the Claude 4.x tokenizers as producing more
tokens than earlier ones for the same text; the ratio is against o200k only.
`);
  console.log(
    table(
      ['body', 'cold process ms', 'vocabulary ms', 'first, vocabulary loaded', 'next turn, warm', `warm median (${values['warm-runs']})`, 'warm min'],
      rows.map((r) => [r.body, r.coldProcessMs, r.vocabularyMs, r.firstMs, r.afterPreviousTurnMs ?? '–', r.warmMedianMs, r.warmMinMs]),
    ),
  );
  console.log(`
Times are wall-clock ms of the estimate alone (countInput on a body already parsed), on this machine now,
medians over ${values.processes} fresh processes: cold process = the first estimate in a process, the vocabulary read on the
way (what a restarted gateway's first agent request pays); vocabulary = reading it alone; first = the first
estimate of this body once it is read (nothing remembered, code not yet compiled); next turn, warm = turn 2 on a
process that has estimated turn 1 200 times (compiled, turn 1's blocks remembered: the next turn of a session on
a running gateway); warm = the same body again, median of ${values['warm-runs']} in one process, each time freshly parsed.`);
}

if (values.child) {
  const [kind, file] = values.child.split(/:(.*)/s);
  process.stdout.write(JSON.stringify(await childFigures(kind, file)));
} else {
  await main();
}

// testing.md "Billing invariants": a seeded randomized history against the real server — top-ups through
// the CLI, chat (stream and not) with random max_tokens, embeddings, client aborts mid-stream and upstream
// faults scripted per request — run a few operations at a time, then the ledger is audited to the
// nano-dollar. The seed is printed in every assertion message: TOLLGATE_SEED=<seed> replays the history
// (the operations and their scripted replies; which requests win admission can vary with timing).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { startE2E, stopE2E, waitFor } from '../support/e2e.js';
import type { CreatedKey, GatewayProcess } from '../support/gateway-process.js';
import { ledgerTrail, startLedgerSampler, usageRows, type SamplerReport, type UsageRow } from '../support/ledger-check.js';
import { chatChunks, chatCompletion, embeddingList, errorReply, makeUsage, sseFromChunks, type MockUpstream, type ReplySource } from '../support/mock-upstream.js';
import { nanoToUsdString, TEST_PRICES, usdToNano } from '../support/money.js';
import { seededRng, type Rng } from '../support/seeded-random.js';

const SEED = process.env.TOLLGATE_SEED !== undefined && process.env.TOLLGATE_SEED !== '' ? Number(process.env.TOLLGATE_SEED) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
const OP_COUNT = Number(process.env.TOLLGATE_HISTORY_OPS || '150');
/** Nano-dollars per token at TEST_PRICES (USD per 1M tokens × 1000). */
const NANO = { input: TEST_PRICES.input * 1000, output: TEST_PRICES.output * 1000, embedding: Math.round(TEST_PRICES.embedding * 1000) };
const MODEL_MAX_OUTPUT = 1000;

const tagged = (text: string) => `[TOLLGATE_SEED=${SEED}] ${text}`;

// ---------------------------------------------------------------- the plan (drawn from the seed up front)

type ChatFault = 'none' | 'http-500' | 'http-429' | 'cut-after-content' | 'cut-before-content' | 'no-usage' | 'abort' | 'abort-json' | 'overdraft';
type EmbedFault = 'none' | 'http-500' | 'no-usage';

interface ChatOp {
  kind: 'chat';
  index: number;
  tag: string;
  label: string;
  stream: boolean;
  fault: ChatFault;
  messages: Array<{ role: string; content: string }>;
  limit: { field: 'max_tokens' | 'max_completion_tokens'; value: number } | undefined;
  /** Choices asked for (the hold reserves max_out for each); the mock always answers with one. */
  n: number | undefined;
  /** The reply's content pieces (one stream chunk each). */
  pieces: string[];
  /** Scripted usage as fractions of the request's input estimate and max output (always within the hold). */
  promptFraction: number;
  completionFraction: number;
  /** Stream events the mock sends before cutting the connection. */
  cutAfter: number;
  /** For aborts: abort after the first content chunk (else after the very first chunk). */
  abortAfterContent: boolean;
}

interface EmbedOp {
  kind: 'embed';
  index: number;
  tag: string;
  label: string;
  fault: EmbedFault;
  input: string | string[];
  promptFraction: number;
}

interface TopupOp {
  kind: 'topup';
  index: number;
  label: string;
  amount: number;
}

type Op = ChatOp | EmbedOp | TopupOp;

const WORDS = ['ledger', 'balance', 'hold', 'capture', 'release', 'prepaid', 'gateway', 'stream', 'token', 'café', 'naïve', '東京', 'Zürich', 'nano', 'dollar', 'seed', 'replay', 'upstream', 'invariant', 'conserve', '🙂', 'quick', 'brown', 'fox', 'jumps', 'over', 'lazy', 'dog', '42', 'x7'];

function sentence(rng: Rng, min: number, max: number): string {
  return Array.from({ length: rng.int(min, max) }, () => rng.pick(WORDS)).join(' ');
}

function pieces(rng: Rng, min: number, max: number): string[] {
  return Array.from({ length: rng.int(min, max) }, (_, i) => (i === 0 ? '' : ' ') + rng.pick(WORDS));
}

const OP_WEIGHTS = {
  topup: 6,
  'chat-json': 11,
  'chat-stream': 13,
  'chat-big': 5,
  overdraft: 2,
  embed: 8,
  'embed-no-usage': 3,
  'embed-500': 3,
  abort: 9,
  'abort-json': 3,
  'http-500': 7,
  'http-429': 5,
  'cut-after-content': 8,
  'cut-before-content': 3,
  'stream-no-usage': 6,
  'json-no-usage': 6,
} as const;
type OpChoice = keyof typeof OP_WEIGHTS;

function drawLimit(rng: Rng, big: boolean): ChatOp['limit'] {
  const field = rng.chance(0.15) ? 'max_completion_tokens' : 'max_tokens';
  if (big) return rng.chance(0.5) ? undefined : { field, value: rng.int(MODEL_MAX_OUTPUT, 2 * MODEL_MAX_OUTPUT) };
  const roll = rng.next();
  if (roll < 0.6) return { field, value: rng.int(1, 300) };
  if (roll < 0.9) return { field, value: rng.int(301, MODEL_MAX_OUTPUT) };
  return undefined;
}

function drawOp(rng: Rng, index: number): Op {
  const choice: OpChoice = rng.weighted(OP_WEIGHTS);
  if (choice === 'topup') return { kind: 'topup', index, label: 'topup', amount: rng.int(400_000, 2_500_000) };
  const tag = `op${index}`;
  if (choice === 'embed' || choice === 'embed-no-usage' || choice === 'embed-500') {
    const input = rng.chance(0.5) ? sentence(rng, 1, 12) : Array.from({ length: rng.int(1, 3) }, () => sentence(rng, 1, 8));
    const fault: EmbedFault = choice === 'embed' ? 'none' : choice === 'embed-500' ? 'http-500' : 'no-usage';
    return { kind: 'embed', index, tag, label: choice, fault, input, promptFraction: rng.next() };
  }
  const messages = Array.from({ length: rng.int(1, 3) }, (_, i) => ({ role: i === 0 && rng.chance(0.4) ? 'system' : 'user', content: sentence(rng, 1, 25) }));
  const stream =
    choice === 'chat-json' || choice === 'json-no-usage' || choice === 'abort-json'
      ? false
      : choice === 'chat-big' || choice === 'http-500' || choice === 'http-429' || choice === 'overdraft'
        ? rng.chance(0.5)
        : true;
  const fault: ChatFault =
    choice === 'chat-json' || choice === 'chat-stream' || choice === 'chat-big'
      ? 'none'
      : choice === 'stream-no-usage' || choice === 'json-no-usage'
        ? 'no-usage'
        : choice;
  const content = pieces(rng, fault === 'abort' ? 8 : 1, fault === 'abort' ? 14 : 20);
  return {
    kind: 'chat',
    index,
    tag,
    label: choice,
    stream,
    fault,
    messages,
    limit:
      choice === 'overdraft'
        ? { field: 'max_tokens', value: MODEL_MAX_OUTPUT }
        : // Without usage, a tiny max_tokens makes the delivered output outgrow the hold: the estimate must stop at it.
          (fault === 'no-usage' || fault === 'cut-after-content' || fault === 'abort') && rng.chance(0.4)
          ? { field: 'max_tokens', value: rng.int(1, 8) }
          : drawLimit(rng, choice === 'chat-big'),
    n: choice === 'overdraft' ? 128 : fault === 'none' && rng.chance(0.15) ? 2 : undefined,
    pieces: content,
    promptFraction: rng.next(),
    completionFraction: rng.next(),
    // Role chunk, then content: cut after ≥1 content piece (never the finish chunk), or after the role alone.
    cutAfter: fault === 'cut-before-content' ? 1 : rng.int(2, content.length + 1),
    abortAfterContent: rng.chance(0.5),
  };
}

interface Plan {
  initialBalance: number;
  ops: Op[];
  batches: Op[][];
}

function drawPlan(seed: number, count: number): Plan {
  const rng = seededRng(seed);
  const initialBalance = rng.int(2_000_000, 5_000_000);
  const ops = Array.from({ length: count }, (_, i) => drawOp(rng, i));
  const batches: Op[][] = [];
  for (let i = 0; i < ops.length; ) {
    const size = rng.int(5, 10);
    batches.push(ops.slice(i, i + size));
    i += size;
  }
  return { initialBalance, ops, batches };
}

// ---------------------------------------------------------------- what happened

interface ErrorBody {
  error?: { message?: string; type?: string; param?: string | null; code?: string | null; metadata?: { hold: number; available: number; affordable_max_tokens: number } };
}

interface RequestResult {
  op: ChatOp | EmbedOp;
  /** 0 when the client aborted before any response (then requestId is null too). */
  status: number;
  requestId: string | null;
  /** The hold, from a 402 probe of the same body on a zero-balance key. */
  hold: number;
  /** The input estimate (derived from the hold) and the usage the mock was scripted to report. */
  inputEstimate: number;
  usage: { prompt: number; completion: number };
  json?: unknown;
  events?: string[];
  aborted?: boolean;
  /** Content the mock sent before a cut (known exactly for cuts; the whole content otherwise). */
  sentContent: string;
}

interface TopupResult {
  op: TopupOp;
  code: number | null;
  stderr: string;
}

type Result = RequestResult | TopupResult;

const isRequest = (r: Result): r is RequestResult => r.op.kind !== 'topup';

async function readSse(res: Response, controller: AbortController, stopAfter?: (data: string) => boolean): Promise<{ events: string[]; aborted: boolean }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: string[] = [];
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data === '') continue;
      events.push(data);
      if (stopAfter?.(data)) {
        controller.abort();
        await reader.cancel().catch(() => undefined);
        return { events, aborted: true };
      }
    }
  }
  return { events, aborted: false };
}

const hasContent = (data: string): boolean => {
  if (data === '[DONE]') return false;
  const chunk = JSON.parse(data) as { choices?: Array<{ delta?: { content?: string | null } }> };
  return (chunk.choices ?? []).some((c) => typeof c.delta?.content === 'string' && c.delta.content.length > 0);
};

// ---------------------------------------------------------------- the test

describe('a seeded random history of top-ups, calls, aborts and upstream faults', () => {
  let mock: MockUpstream | undefined;
  let gw: GatewayProcess | undefined;

  before(async () => {
    console.log(`ledger-random-history: TOLLGATE_SEED=${SEED} (${OP_COUNT} operations)`);
    // mockConfig keeps cool-down off, so a run of scripted failures never takes the only upstream out
    // of rotation; retries stay at their default (1).
    ({ mock, gw } = await startE2E());
  });

  after(async () => {
    await stopE2E({ mock, gw });
  });

  it('conserves every nano-dollar, settles each request exactly once, and leaves no trace of a 402', { timeout: 120_000 }, async (t) => {
    assert.ok(gw && mock);
    const started = Date.now();
    const plan = drawPlan(SEED, OP_COUNT);
    const key: CreatedKey = await gw.createKey({ name: `history-${SEED}`, balance: nanoToUsdString(plan.initialBalance), models: ['gpt-test', 'embed-test'] });
    const probeKey: CreatedKey = await gw.createKey({ name: `history-probe-${SEED}`, balance: '0' });
    assert.equal(gw.audit(key.id).balance, plan.initialBalance, tagged('the key starts with the initial balance'));

    const sampler = await startLedgerSampler(gw.dbPath, key.id, { busyMs: 1, idleMs: 4 });
    let samplerReport: SamplerReport | undefined = undefined;
    t.after(async () => {
      if (!samplerReport) await sampler.stop().catch(() => undefined);
    });

    // The mock answers each request by its tag (the `user` field, forwarded unchanged).
    const replies = new Map<string, ReplySource>();
    const upstreamCalls = new Map<string, number>();
    mock.reset();
    mock.handle((req, res) => {
      const tag = String(req.body?.user);
      upstreamCalls.set(tag, (upstreamCalls.get(tag) ?? 0) + 1);
      const reply = replies.get(tag) ?? errorReply(500, `the test scripted no reply for ${tag}`);
      return typeof reply === 'function' ? reply(req, res) : reply;
    });

    const baseURL = gw.baseURL;
    const post = (path: string, secret: string, body: unknown, signal?: AbortSignal) =>
      fetch(`${baseURL}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });

    /** The hold of a body, learned from the 402 a zero-balance key gets for it. */
    const probeHold = async (path: string, body: Record<string, unknown>, op: ChatOp | EmbedOp): Promise<number> => {
      const res = await post(path, probeKey.key, { ...body, user: `${op.tag}-probe` });
      const json = (await res.json()) as ErrorBody;
      assert.equal(res.status, 402, tagged(`op ${op.index} (${op.label}): the probe on a zero-balance key must get 402, got ${res.status} ${JSON.stringify(json)}`));
      assert.ok(json.error?.metadata, tagged(`op ${op.index}: the probe's 402 carries metadata`));
      return usdToNano(json.error.metadata.hold);
    };

    const runChat = async (op: ChatOp): Promise<RequestResult> => {
      const body: Record<string, unknown> = { model: 'gpt-test', messages: op.messages, user: op.tag };
      if (op.limit) body[op.limit.field] = op.limit.value;
      if (op.n !== undefined) body.n = op.n;
      if (op.stream) body.stream = true;
      const hold = await probeHold('/chat/completions', body, op);
      const maxOut = Math.min(op.limit?.value ?? MODEL_MAX_OUTPUT, MODEL_MAX_OUTPUT);
      const inputEstimate = (hold - maxOut * (op.n ?? 1) * NANO.output) / NANO.input;
      assert.ok(
        Number.isInteger(inputEstimate) && inputEstimate >= 3 + 4 * op.messages.length && inputEstimate <= 3 + op.messages.reduce((s, m) => s + 6 + Buffer.byteLength(m.content), 0),
        tagged(`op ${op.index} (${op.label}): hold ${hold} nano implies an input estimate of ${inputEstimate} tokens for ${JSON.stringify(op.messages)} with max_out ${maxOut}`),
      );
      const usage = { prompt: Math.max(1, Math.ceil(op.promptFraction * inputEstimate)), completion: Math.floor(op.completionFraction * maxOut) };
      const reported = makeUsage(usage.prompt, usage.completion);
      const content = op.pieces.join('');
      let reply: ReplySource;
      let sentContent = content;
      switch (op.fault) {
        case 'http-500':
          reply = errorReply(500, 'The server had an error while processing your request.');
          break;
        case 'http-429':
          reply = { ...errorReply(429, 'Rate limit reached for requests.'), headers: { 'retry-after': '1' } };
          break;
        case 'no-usage':
          reply = op.stream ? sseFromChunks(chatChunks({ content: op.pieces, usage: null })) : { json: chatCompletion({ content, usage: null }) };
          break;
        case 'cut-after-content':
        case 'cut-before-content':
          reply = { ...sseFromChunks(chatChunks({ content: op.pieces, usage: reported })), cutAfter: op.cutAfter };
          sentContent = op.pieces.slice(0, op.cutAfter - 1).join('');
          break;
        case 'abort':
          reply = { ...sseFromChunks(chatChunks({ content: op.pieces, usage: reported })), delayMs: 100 };
          break;
        case 'abort-json':
          // The upstream "thinks" until the gateway hangs up (or 3 s pass: then the abort never reached it).
          reply = async (_req, res) => {
            await new Promise<void>((resolve) => {
              res.once('close', () => resolve());
              setTimeout(resolve, 3_000);
            });
            return res.destroyed ? undefined : { json: chatCompletion({ content, usage: reported }) };
          };
          sentContent = '';
          break;
        default:
          reply = op.stream ? sseFromChunks(chatChunks({ content: op.pieces, usage: reported })) : { json: chatCompletion({ content, usage: reported }) };
      }
      replies.set(op.tag, reply);

      const controller = new AbortController();
      if (op.fault === 'abort-json') {
        // Abort once the call is waiting at the upstream; then no response (and no x-request-id) ever arrives.
        const pending = post('/chat/completions', key.key, body, controller.signal);
        pending.catch(() => undefined);
        const atUpstream = waitFor(() => upstreamCalls.has(op.tag), 5_000, 5);
        const first = await Promise.race([pending.then(() => 'answered' as const, () => 'answered' as const), atUpstream.then(() => 'at-upstream' as const)]);
        if (first === 'at-upstream') controller.abort();
        try {
          const res = await pending;
          return { op, status: res.status, requestId: res.headers.get('x-request-id'), hold, inputEstimate, usage, json: await res.json(), sentContent };
        } catch (error) {
          assert.ok(controller.signal.aborted, tagged(`op ${op.index} (${op.label}): the call failed without an abort: ${String(error)}`));
          return { op, status: 0, requestId: null, hold, inputEstimate, usage, aborted: true, sentContent };
        }
      }
      const res = await post('/chat/completions', key.key, body, controller.signal);
      const result: RequestResult = { op, status: res.status, requestId: res.headers.get('x-request-id'), hold, inputEstimate, usage, sentContent };
      if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        const stop = op.fault === 'abort' ? (data: string) => !op.abortAfterContent || hasContent(data) : undefined;
        const { events, aborted } = await readSse(res, controller, stop);
        result.events = events;
        result.aborted = aborted;
      } else {
        result.json = await res.json();
      }
      return result;
    };

    const runEmbed = async (op: EmbedOp): Promise<RequestResult> => {
      const body = { model: 'embed-test', input: op.input, user: op.tag };
      const hold = await probeHold('/embeddings', body, op);
      assert.equal(hold % NANO.embedding, 0, tagged(`op ${op.index}: embedding hold ${hold} is whole tokens`));
      const inputEstimate = hold / NANO.embedding;
      const usage = { prompt: Math.max(1, Math.ceil(op.promptFraction * inputEstimate)), completion: 0 };
      const count = Array.isArray(op.input) ? op.input.length : 1;
      const vectors = Array.from({ length: count }, (_, i) => [0.25, -0.5, i]);
      const list = embeddingList(vectors, { model: 'text-embedding-3-small', promptTokens: usage.prompt });
      replies.set(
        op.tag,
        op.fault === 'http-500'
          ? errorReply(500, 'The server had an error while processing your request.')
          : op.fault === 'no-usage'
            ? { json: { object: list.object, data: list.data, model: list.model } }
            : { json: list },
      );
      const res = await post('/embeddings', key.key, body);
      return { op, status: res.status, requestId: res.headers.get('x-request-id'), hold, inputEstimate, usage, json: await res.json(), sentContent: '' };
    };

    const runTopup = async (op: TopupOp): Promise<TopupResult> => {
      const out = await gw!.cli(['keys', 'topup', key.id, nanoToUsdString(op.amount), '--json']);
      return { op, code: out.code, stderr: out.stderr };
    };

    // Requests run a batch at a time; a top-up (a CLI process, slow to start) runs beside the following
    // batches, at most MAX_TOPUPS_IN_FLIGHT at once, so its credit lands while requests are being admitted.
    const MAX_TOPUPS_IN_FLIGHT = 4;
    const results: Result[] = [];
    const topupsInFlight: Array<Promise<TopupResult>> = [];
    for (const batch of plan.batches) {
      const calls: Array<Promise<Result>> = [];
      for (const op of batch) {
        if (op.kind === 'topup') {
          if (topupsInFlight.length >= MAX_TOPUPS_IN_FLIGHT) results.push(await topupsInFlight.shift()!);
          topupsInFlight.push(runTopup(op));
        } else calls.push(op.kind === 'chat' ? runChat(op) : runEmbed(op));
      }
      results.push(...(await Promise.all(calls)));
    }
    results.push(...(await Promise.all(topupsInFlight)));
    const requests = results.filter(isRequest);
    const refused = requests.filter((r) => r.status === 402);
    const admitted = requests.filter((r) => r.status !== 402);

    // Settle: every hold closed (aborted streams settle a moment after the client leaves).
    const drained = await waitFor(() => gw!.audit(key.id).activeHolds === 0, 5_000);
    samplerReport = await sampler.stop();
    const final = gw.audit(key.id);
    const allRows = await usageRows(gw, key.id);
    const trail = ledgerTrail(gw.dbPath, key.id);
    const rowById = new Map<string, UsageRow>(allRows.map((row) => [row.request_id, row]));
    // The rows that go with money; a request refused before any hold (a 402, a client gone first) has a
    // row of its own that moves none (usage_source 'none').
    const rows = allRows.filter((row) => row.usage_source !== 'none');

    // A call the client aborted before any response has no x-request-id: find its usage row among the
    // rows no response named, by its input estimate and hold (it must be there: the call reached the upstream).
    const namedIds = new Set(requests.map((r) => r.requestId).filter((id): id is string => id !== null));
    const unnamedRows = rows.filter((row) => !namedIds.has(row.request_id));
    for (const r of requests.filter((q) => q.status === 0)) {
      const i = unnamedRows.findIndex((row) => row.input_tokens === r.inputEstimate && trail.holds.get(row.request_id)?.amount === r.hold);
      assert.ok(i >= 0, tagged(`op ${r.op.index} (${r.op.label}, hold ${r.hold}): no usage row for a call aborted at the upstream; unnamed rows ${JSON.stringify(unnamedRows)}`));
      r.requestId = unnamedRows.splice(i, 1)[0]!.request_id;
    }
    assert.deepEqual(unnamedRows, [], tagged('every usage row belongs to a request of the history'));

    // ---- every operation, one by one
    const maxEverBalance = plan.initialBalance + plan.ops.reduce((sum, op) => sum + (op.kind === 'topup' ? op.amount : 0), 0);
    for (const r of results) {
      if (!isRequest(r)) {
        assert.equal(r.code, 0, tagged(`op ${r.op.index} (topup ${nanoToUsdString(r.op.amount)}): the CLI failed: ${r.stderr}`));
        continue;
      }
      const what = (s: string) => tagged(`op ${r.op.index} (${r.op.label}${r.op.kind === 'chat' ? `, ${r.op.stream ? 'stream' : 'json'}` : ''}, request ${r.requestId}, hold ${r.hold}): ${s}`);
      assert.ok(r.requestId, what('every response carries x-request-id'));
      if (r.status === 0) assert.equal(r.op.kind === 'chat' && r.op.fault, 'abort-json', what('only a deliberate abort goes without a response'));
      const id = r.requestId;
      const calls = upstreamCalls.get(r.op.tag) ?? 0;
      const entries = trail.entries.get(id) ?? [];
      const holdRow = trail.holds.get(id);
      const row = rowById.get(id);

      if (r.status === 402) {
        const body = r.json as ErrorBody;
        assert.equal(body.error?.code, 'insufficient_balance', what(`402 code: ${JSON.stringify(body)}`));
        assert.ok(body.error.metadata, what('a 402 carries metadata'));
        assert.equal(usdToNano(body.error.metadata.hold), r.hold, what('metadata.hold is the hold the probe saw'));
        assert.ok(usdToNano(body.error.metadata.available) < r.hold, what(`metadata.available ${body.error.metadata.available} USD must be below the hold`));
        assert.equal(calls, 0, what('a refused request never reaches the upstream'));
        assert.deepEqual(entries, [], what('a 402 left ledger entries'));
        assert.equal(holdRow, undefined, what('a 402 left a hold'));
        assert.equal(trail.usageRequestIds.has(id), false, what('a 402 left a billed usage row'));
        const refusalRow = rowById.get(id);
        assert.ok(refusalRow, what('a 402 leaves its outcome row'));
        assert.deepEqual([refusalRow.status, refusalRow.cost, refusalRow.usage_source], [402, 0, 'none'], what('the 402 row moves no money'));
        continue;
      }
      if (r.op.kind === 'chat' && r.op.fault === 'overdraft' && r.hold > maxEverBalance) {
        assert.fail(what(`a hold of ${r.hold} nano exceeds every balance the key ever had (${maxEverBalance}), yet the request got ${r.status}`));
      }

      // Admitted: exactly one hold of the probed size, closed exactly once; one usage row.
      assert.ok(row, what(`an admitted request has a usage row (status ${r.status})`));
      assert.ok(holdRow, what('an admitted request has a hold row'));
      assert.equal(holdRow.amount, r.hold, what('the hold placed is the hold the 402 probe named'));
      const kinds = entries.map((e) => e.kind).sort();
      const holdEntries = entries.filter((e) => e.kind === 'hold');
      const releaseEntries = entries.filter((e) => e.kind === 'release');
      const captureEntries = entries.filter((e) => e.kind === 'capture');
      assert.equal(holdEntries.length, 1, what(`exactly one hold entry: ${JSON.stringify(entries)}`));
      assert.equal(releaseEntries.length, 1, what(`exactly one release entry: ${JSON.stringify(entries)}`));
      assert.equal(releaseEntries[0]!.amount, r.hold, what('the release frees the whole hold'));
      assert.ok(captureEntries.length <= 1, what(`at most one capture: ${JSON.stringify(kinds)}`));
      const cost = usdToNano(row.cost);
      assert.ok(calls >= 1, what('an admitted request reached the upstream'));
      assert.equal(row.attempts.length, calls, what(`usage row attempts ${JSON.stringify(row.attempts)} vs ${calls} upstream calls`));

      const expectReleased = (status: number) => {
        assert.equal(cost, 0, what('a failure before any output is charged nothing'));
        assert.equal(captureEntries.length, 0, what('a failure before any output has no capture'));
        assert.equal(holdRow.status, 'released', what('hold status'));
        assert.equal(row.status, status, what('usage row status'));
      };
      const expectCaptured = () => {
        assert.equal(captureEntries.length, 1, what('a settled request has one capture'));
        assert.equal(captureEntries[0]!.amount, cost, what('the capture equals the usage row cost'));
        assert.equal(holdRow.status, 'captured', what('hold status'));
      };
      const expectExact = (price: number) => {
        expectCaptured();
        assert.equal(row.usage_source, 'upstream', what('usage source'));
        assert.equal(row.input_tokens, r.usage.prompt, what('input tokens from the upstream'));
        assert.equal(row.output_tokens, r.usage.completion, what('output tokens from the upstream'));
        assert.equal(cost, price, what(`charge == price(usage) exactly (${r.usage.prompt} in, ${r.usage.completion} out)`));
        assert.ok(cost <= r.hold, what('the scripted usage fits the hold'));
        assert.equal(calls, 1, what('one upstream call'));
      };
      /** Estimated: input estimate + output tokens, capped at the hold. */
      const expectEstimated = (status: number, outputTokens: number | undefined) => {
        expectCaptured();
        assert.equal(row.usage_source, 'estimated', what('usage source'));
        assert.equal(row.status, status, what('usage row status'));
        assert.equal(row.input_tokens, r.inputEstimate, what('an estimate charges the input estimate the hold was sized on'));
        if (outputTokens !== undefined) assert.equal(row.output_tokens, outputTokens, what(`output tokens = tokenizer count of what was delivered (${JSON.stringify(r.sentContent)})`));
        const rate = r.op.kind === 'chat' ? { in: NANO.input, out: NANO.output } : { in: NANO.embedding, out: 0 };
        assert.equal(cost, Math.min(row.input_tokens * rate.in + row.output_tokens * rate.out, r.hold), what('estimated cost = min(input × in + output × out, hold)'));
        assert.ok(cost <= r.hold, what(`estimated charge ${cost} exceeds its hold ${r.hold}`));
      };
      const sseTail = () => {
        const events = r.events ?? [];
        assert.equal(events.at(-1), '[DONE]', what(`the stream ends with [DONE]: ${JSON.stringify(events.slice(-2))}`));
        return JSON.parse(events.at(-2) ?? 'null') as { choices?: unknown[]; usage?: { cost?: number }; error?: { code?: string } } | null;
      };
      const clientCost = (usage: { cost?: number } | undefined) => {
        assert.ok(usage && typeof usage.cost === 'number', what(`the client's usage carries cost: ${JSON.stringify(usage)}`));
        assert.equal(usdToNano(usage.cost), cost, what("the client's usage.cost equals the charge"));
      };

      if (r.op.kind === 'embed') {
        if (r.op.fault === 'http-500') {
          assert.equal(r.status, 502, what(`an upstream 500 becomes 502: ${JSON.stringify(r.json)}`));
          expectReleased(502);
        } else {
          assert.equal(r.status, 200, what(`embeddings status: ${JSON.stringify(r.json)}`));
          if (r.op.fault === 'none') expectExact(r.usage.prompt * NANO.embedding);
          else {
            expectEstimated(200, 0);
            assert.equal(cost, r.hold, what('embeddings without upstream usage charge their counted input'));
          }
          clientCost((r.json as { usage?: { cost?: number } }).usage);
        }
        continue;
      }

      const op = r.op;
      const exactPrice = r.usage.prompt * NANO.input + r.usage.completion * NANO.output;
      switch (op.fault) {
        case 'none':
        case 'overdraft':
          assert.equal(r.status, 200, what(`status: ${JSON.stringify(r.json ?? r.events?.slice(-2))}`));
          expectExact(exactPrice);
          assert.equal(row.status, 200);
          if (op.stream) {
            const last = sseTail();
            assert.deepEqual(last?.choices, [], what('the final chunk has no choices'));
            clientCost(last?.usage);
            const text = (r.events ?? [])
              .slice(0, -1)
              .map((e) => JSON.parse(e) as { choices?: Array<{ delta?: { content?: string | null } }> })
              .map((c) => c.choices?.[0]?.delta?.content ?? '')
              .join('');
            assert.equal(text, op.pieces.join(''), what('the streamed text'));
          } else {
            clientCost((r.json as { usage?: { cost?: number } }).usage);
          }
          break;
        case 'http-500':
        case 'http-429': {
          const status = op.fault === 'http-500' ? 502 : 429;
          assert.equal(r.status, status, what(`an upstream ${op.fault} before any output: ${JSON.stringify(r.json ?? r.events)}`));
          assert.equal((r.json as ErrorBody).error?.code, status === 502 ? 'upstream_error' : 'upstream_rate_limited', what('error code'));
          expectReleased(status);
          break;
        }
        case 'cut-before-content':
          // A bare role chunk is held back until output arrives, so the cut is still retryable and,
          // every attempt being cut the same way, ends as a plain 502 with nothing sent.
          assert.equal(r.status, 502, what('a stream cut before any output answers 502'));
          assert.equal((r.json as ErrorBody).error?.code, 'upstream_error', what('error code'));
          expectReleased(502);
          break;
        case 'cut-after-content':
          assert.equal(r.status, 200, what('the stream had started before the cut'));
          assert.ok(sseTail()?.error, what('a cut stream ends with an error event'));
          expectEstimated(502, countTokens(r.sentContent));
          break;
        case 'no-usage':
          assert.equal(r.status, 200, what(`status: ${JSON.stringify(r.json ?? r.events?.slice(-2))}`));
          expectEstimated(200, countTokens(r.sentContent));
          clientCost(op.stream ? sseTail()?.usage : (r.json as { usage?: { cost?: number } }).usage);
          break;
        case 'abort-json': {
          assert.equal(r.status, 0, what(`the client aborted while the upstream was thinking, yet got ${r.status} ${JSON.stringify(r.json)}`));
          // Nothing was delivered: the input estimate alone, as for a stream abort before any output.
          expectEstimated(499, 0);
          const upstream = mock.requests.find((q) => q.body?.user === op.tag);
          const left = await waitFor(() => upstream?.abortedAt !== undefined, 2_000);
          assert.ok(left, what('the gateway aborted the upstream call when the client left'));
          break;
        }
        case 'abort': {
          assert.equal(r.status, 200, what('the stream started before the client aborted'));
          assert.equal(r.aborted, true, what(`the client aborted mid-stream (received ${JSON.stringify(r.events)})`));
          expectEstimated(499, undefined);
          assert.ok(row.output_tokens <= countTokens(r.sentContent), what(`output ${row.output_tokens} tokens exceeds the whole reply`));
          const upstream = mock.requests.find((q) => q.body?.user === op.tag);
          const left = await waitFor(() => upstream?.abortedAt !== undefined, 2_000);
          assert.ok(left, what('the gateway aborted the upstream call when the client left'));
          break;
        }
      }
    }

    // ---- the whole key
    const topups = results.filter((r): r is TopupResult => !isRequest(r));
    const sumTopups = topups.reduce((s, r) => s + r.op.amount, 0);
    const charges = rows.map((row) => usdToNano(row.cost));
    const sumCharges = charges.reduce((a, b) => a + b, 0);
    const summary = `initial ${plan.initialBalance}, Σtopups ${sumTopups}, Σcharges ${sumCharges}, final ${JSON.stringify(final)}`;
    assert.ok(drained, tagged(`holds still active 5 s after the history ended: ${summary}`));
    assert.equal(final.activeHolds, 0, tagged('no active hold'));
    assert.equal(final.held, 0, tagged('nothing held'));
    assert.deepEqual({ balance: final.balance, held: final.held, spent: final.spent }, final.derived, tagged(`cached == derived: ${summary}`));
    assert.equal(sumCharges, final.spent, tagged(`Σ usage-row costs == audit.spent: ${summary}`));
    assert.equal(plan.initialBalance + sumTopups, final.balance + sumCharges, tagged(`conservation: initial + Σtopups == final + Σcharges: ${summary}`));
    const topupEntries = [...trail.entries.values()].flat().filter((e) => e.kind === 'topup');
    assert.equal(topupEntries.reduce((s, e) => s + e.amount, 0), plan.initialBalance + sumTopups, tagged('the topup entries are the initial balance plus every CLI top-up'));
    assert.equal(rows.length, admitted.length, tagged(`one usage row per admitted request (${rows.length} rows, ${admitted.length} admitted)`));
    assert.equal(final.usageRows, admitted.length);
    assert.equal(final.captures, rows.filter((row) => trail.holds.get(row.request_id)?.status === 'captured').length, tagged('one capture per settled request'));
    assert.equal(trail.holds.size, admitted.length, tagged('one hold per admitted request'));
    for (const row of rows.filter((r) => r.usage_source === 'estimated')) {
      const heldFor = trail.holds.get(row.request_id)?.amount ?? -1;
      assert.ok(usdToNano(row.cost) <= heldFor, tagged(`estimated row ${row.request_id} charged ${usdToNano(row.cost)} > its hold ${heldFor}`));
    }
    for (const [id, h] of trail.holds) assert.notEqual(h.status, 'active', tagged(`hold ${id} still active`));
    assert.deepEqual(samplerReport.violations, [], tagged('every ledger snapshot during the history: available ≥ 0, cached == derived, held == Σ active holds'));
    const probe = gw.audit(probeKey.id);
    assert.deepEqual([probe.balance, probe.held, probe.spent, probe.usageRows, probe.captures], [0, 0, 0, 0, 0], tagged('the probe key (all 402s) has no trace'));
    assert.deepEqual(
      [...upstreamCalls.keys()].filter((tag) => tag.endsWith('-probe')),
      [],
      tagged('no probe request reached the upstream'),
    );

    const byLabel = new Map<string, { admitted: number; refused: number }>();
    for (const r of requests) {
      const entry = byLabel.get(r.op.label) ?? { admitted: 0, refused: 0 };
      if (r.status === 402) entry.refused += 1;
      else entry.admitted += 1;
      byLabel.set(r.op.label, entry);
    }
    const wallMs = Date.now() - started;
    console.log(
      `ledger-random-history TOLLGATE_SEED=${SEED}: ${plan.ops.length} ops in ${plan.batches.length} batches, ${topups.length} top-ups, ` +
        `${admitted.length} admitted, ${refused.length} refused (402); initial ${plan.initialBalance} + topups ${sumTopups} = final ${final.balance} + charges ${sumCharges} nano; ` +
        `estimated rows ${rows.filter((row) => row.usage_source === 'estimated').length}, zero-cost rows ${charges.filter((c) => c === 0).length}; ` +
        `min available ${samplerReport.minAvailable} over ${samplerReport.samples} snapshots; ${wallMs} ms`,
    );
    console.log(`  by kind: ${[...byLabel].map(([label, c]) => `${label} ${c.admitted}/${c.admitted + c.refused}`).join(', ')}`);
    assert.ok(wallMs < 60_000, tagged(`the history took ${wallMs} ms`));
  });
});

// A streamed answer through the one flow (chat completions, a scripted upstream, no network): what the
// client receives at the end of a stream, and what the ledger charged, for each way an upstream stream can end.
import { DrainSlots } from '../../../src/pipeline/drain-slots.js';
import { UpstreamHealth } from '../../../src/routing/upstream-health.js';
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { pino } from 'pino';
import { Ledger } from '../../../src/billing/ledger.js';
import { priceUsage, sizeChatHold } from '../../../src/billing/pricing.js';
import { countChatInput } from '../../../src/api/openai-chat/count-input.js';
import { openaiChat } from '../../../src/api/openai-chat/index.js';
import { OutputMeter } from '../../../src/api/openai-chat/output-meter.js';
import { parseConfig } from '../../../src/config/load.js';
import type { FlowResult } from '../../../src/pipeline/flow.js';
import { runRequest } from '../../../src/pipeline/run.js';
import type { ClientRequest, PipelineDeps, SseSink } from '../../../src/pipeline/deps.js';
import type { ChatRequestBody, UpstreamRequest } from '../../../src/providers/types.js';
import { SseDecoder } from '../../../src/providers/framing/sse.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../../src/storage/types.js';
import type { UpstreamTransport } from '../../../src/upstream/transport.js';
import { testNewKey } from '../../support/key-fixture.js';

const CONFIG = parseConfig(
  `providers:
  vllm:
    kind: openai-compatible
    base_url: http://127.0.0.1:9/v1
models:
  llama:
    upstreams: [{ provider: vllm, model: meta-llama/Llama-3.1-8B-Instruct }]
    price: { input: 1, output: 2 }
    max_output_tokens: 1000
`,
  '/tmp/tollgate-unit.yaml',
  {},
);
const RATES = CONFIG.models.get('llama')!.rates;
const BALANCE = 1_000_000_000;
const MAX_TOKENS = 100;

/** A sink that records what the client would receive. */
class RecordingSink implements SseSink {
  started = false;
  text = '';
  ended = false;
  write(text: string): undefined {
    this.started = true;
    this.text += text;
    return undefined;
  }
  end(text: string): void {
    this.started = true;
    this.text += text;
    this.ended = true;
  }
  /** The data of every event the client received. */
  events(): string[] {
    const decoder = new SseDecoder();
    return [...decoder.push(this.text), ...decoder.end()].map((e) => e.data);
  }
}

function sse(...payloads: unknown[]): string {
  return payloads.map((p) => `data: ${typeof p === 'string' ? p : JSON.stringify(p)}\n\n`).join('');
}

function chunk(delta: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    id: 'chatcmpl-up',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'meta-llama/Llama-3.1-8B-Instruct',
    choices: [{ index: 0, delta, finish_reason: null }],
    ...extra,
  };
}

let store: Store;
let sent: UpstreamRequest[];

beforeEach(async () => {
  store = openSqliteStore(':memory:');
  sent = [];
  await store.keys.create(testNewKey('key_a', { initialBalance: BALANCE, now: Date.now() }));
});
afterEach(async () => {
  await store.close();
});

/** Runs one streamed chat request against an upstream that answers 200 with `body`. */
async function streamOnce(body: string): Promise<{ sink: RecordingSink; events: string[] }> {
  const sink = new RecordingSink();
  const result = await runStream(body, sink);
  assert.ok(result.ok);
  assert.deepEqual(result.answer, { kind: 'streamed' });
  return { sink, events: sink.events() };
}

/** Runs one streamed chat request (max_tokens MAX_TOKENS) against an upstream that answers 200 with `body`. */
async function runStream(body: string, sink: RecordingSink): Promise<FlowResult> {
  const log = pino({ level: 'silent' });
  const transport = {
    async send(_provider: unknown, request: UpstreamRequest) {
      sent.push(request);
      return { status: 200, headers: { 'content-type': 'text/event-stream' }, body: Readable.from([Buffer.from(body)]) };
    },
  } as unknown as UpstreamTransport;
  const deps: PipelineDeps = {
    config: CONFIG,
    ledger: new Ledger(store.ledger, CONFIG.billing, CONFIG.limits, log),
    transport,
    log,
    health: new UpstreamHealth(),
    drains: new DrainSlots(),
    limiter: { admit: () => Promise.reject(new Error('no limits in this test')), peek: async () => ({}), close: async () => {} },
  };
  const client: ClientRequest = {
    requestId: 'req-1',
    key: (await store.keys.get('key_a'))!,
    signal: new AbortController().signal,
    setHeader: () => {},
    dryRun: false,
    clamp: false,
    headers: {},
    endpoint: 'chat',
    sessionId: null,
    startedAt: performance.now(),
  };
  const request = { model: 'llama', messages: [{ role: 'user', content: 'Hi' }], stream: true, max_tokens: MAX_TOKENS } as ChatRequestBody;
  return runRequest(openaiChat, deps, client, request, () => sink);
}

async function settled() {
  const [row] = await store.usage.list({ keyId: 'key_a', limit: 10 });
  const audit = await store.ledger.audit('key_a');
  assert.deepEqual(audit.cached, audit.derived);
  assert.equal(audit.activeHolds, 0, 'the hold is closed');
  return { row: row!, audit };
}

describe('a streamed answer', () => {
  test('relays the chunks, then one usage chunk with the exact cost, then [DONE]', async () => {
    const { sink, events } = await streamOnce(
      sse(
        chunk({ role: 'assistant', content: '' }),
        chunk({ content: 'Hello' }),
        { ...chunk({}), choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
        { ...chunk({}), choices: [], usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } },
        '[DONE]',
      ),
    );
    assert.equal(sink.ended, true);
    assert.equal(events.at(-1), '[DONE]');
    const final = JSON.parse(events.at(-2)!) as { choices: unknown[]; usage: Record<string, unknown>; model: string; id: string };
    const cost = priceUsage(RATES, { input: 12, cachedInput: 0, output: 3, reasoning: 0 });
    assert.deepEqual(final.choices, []);
    assert.equal(final.model, 'llama');
    assert.equal(final.id, 'chatcmpl-up');
    assert.deepEqual(final.usage, { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15, cost: cost / 1e9 });
    const { row, audit } = await settled();
    assert.equal(row.usageSource, 'upstream');
    assert.equal(row.cost, cost);
    assert.equal(audit.cached.balance, BALANCE - cost);
    const upstreamBody = JSON.parse(sent[0]!.body as string) as Record<string, unknown>;
    assert.deepEqual(upstreamBody.stream_options, { include_usage: true });
  });

  test('ends a stream that breaks off in an error event with that error, then [DONE]', async () => {
    const { events } = await streamOnce(
      sse(chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' }), { error: { message: 'engine died', type: 'server_error', code: null } }),
    );
    assert.equal(events.at(-1), '[DONE]');
    const last = JSON.parse(events.at(-2)!) as { error?: { code: unknown; message: unknown } };
    assert.equal(last.error?.code, 'upstream_error');
    await settled();
  });

  test('ends a running-totals (vLLM) stream that breaks off in an error event with that error, then [DONE]', async () => {
    // Usage on every chunk must not make a failed stream look complete.
    const { events } = await streamOnce(
      sse(
        chunk({ role: 'assistant', content: '' }, { usage: { prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 } }),
        chunk({ content: 'Hel' }, { usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 } }),
        { error: { message: 'engine died', type: 'server_error', code: null } },
      ),
    );
    assert.equal(events.at(-1), '[DONE]');
    const last = JSON.parse(events.at(-2)!) as { error?: { code: unknown } };
    assert.equal(last.error?.code, 'upstream_error', `the client got ${events.at(-2)}`);
    const { row } = await settled();
    assert.notEqual(row.status, 200, 'the usage row records the failure');
  });

  test('ends a running-totals (vLLM) stream that is cut before finishing with an error, then [DONE]', async () => {
    const { events } = await streamOnce(
      sse(
        chunk({ role: 'assistant', content: '' }, { usage: { prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 } }),
        chunk({ content: 'Hel' }, { usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 } }),
      ),
    );
    assert.equal(events.at(-1), '[DONE]');
    const last = JSON.parse(events.at(-2)!) as { error?: { code: unknown } };
    assert.equal(last.error?.code, 'upstream_error', `the client got ${events.at(-2)}`);
    await settled();
  });

  test('treats a finish chunk carrying usage without [DONE] (DeepSeek / Mistral) as complete', async () => {
    const { events } = await streamOnce(
      sse(chunk({ content: 'Hi' }), {
        ...chunk({}),
        choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
        usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 },
      }),
    );
    assert.equal(events.at(-1), '[DONE]');
    const final = JSON.parse(events.at(-2)!) as { usage?: { completion_tokens: unknown } };
    assert.equal(final.usage?.completion_tokens, 1);
    const { row } = await settled();
    assert.equal(row.usageSource, 'upstream');
    assert.equal(row.status, 200);
  });

  test('a settlement that throws after output went out (the meter failing, as a 1.4 GB join did) charges the hold, never $0', async (t) => {
    t.mock.method(OutputMeter.prototype, 'tokens', () => {
      throw new RangeError('Invalid string length');
    });
    const sink = new RecordingSink();
    const body = sse(chunk({ content: 'Hello' }), { ...chunk({}), choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }, '[DONE]');
    const result = await runStream(body, sink);
    assert.ok(result.ok, 'the stream had started: it ends with an error event, not an error answer');
    const events = sink.events();
    assert.equal(events.at(-1), '[DONE]');
    assert.equal((JSON.parse(events.at(-2)!) as { error: { code: string } }).error.code, 'internal_error');
    const { row, audit } = await settled();
    const hold = sizeChatHold(RATES, await countChatInput({ messages: [{ role: 'user', content: 'Hi' }] }), MAX_TOKENS, 1);
    assert.equal(row.cost, hold, 'the whole hold is captured');
    assert.equal(row.usageSource, 'estimated');
    assert.equal(row.status, 500);
    assert.equal(audit.cached.balance, BALANCE - hold);
  });
});


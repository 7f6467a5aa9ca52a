// A committed stream whose upstream goes silent gets the API's keep-alive frame from the relay (Messages'
// `ping` in a translated cell), between the frames the upstream sent, and none once the stream has ended
// (the sink refuses a write after its end).
// Run through the one flow with a scripted upstream that pauses until the client has seen a ping; the
// stream's 15 s wait is shortened for the test (nothing here measures time).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { pino } from 'pino';
import { anthropicMessages } from '../../../src/api/anthropic-messages/index.js';
import type { MessagesRequestBody } from '../../../src/api/anthropic-messages/validate.js';
import { Ledger } from '../../../src/billing/ledger.js';
import { parseConfig } from '../../../src/config/load.js';
import type { ClientApi } from '../../../src/pipeline/client-api.js';
import type { ClientRequest, PipelineDeps, SseSink } from '../../../src/pipeline/deps.js';
import { DrainSlots } from '../../../src/pipeline/drain-slots.js';
import { runRequest } from '../../../src/pipeline/run.js';
import { UpstreamHealth } from '../../../src/routing/upstream-health.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
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

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'up', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

test('a silent upstream: the relay writes pings between the upstream frames, and none after the end', async () => {
  const store = openSqliteStore(':memory:');
  await store.keys.create(testNewKey('key_a', { initialBalance: 1_000_000_000, now: Date.now() }));
  let release!: () => void;
  const heardPing = new Promise<void>((resolve) => (release = resolve));
  async function* upstream() {
    yield Buffer.from(chunk({ role: 'assistant', content: '' }) + chunk({ content: 'Thinking it over' }));
    await heardPing;
    yield Buffer.from(chunk({ content: '... done.' }, 'stop') + `data: ${JSON.stringify({ id: 'chatcmpl-up', choices: [], usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 } })}\n\ndata: [DONE]\n\n`);
  }
  const transport = {
    send: async () => ({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: Readable.from(upstream()) }),
  } as unknown as UpstreamTransport;
  const log = pino({ level: 'silent' });
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
    endpoint: 'messages',
    sessionId: null,
    startedAt: performance.now(),
  };
  let text = '';
  let ended = false;
  const sink: SseSink = {
    started: true,
    write(frames: string) {
      assert.equal(ended, false, 'nothing after the end');
      text += frames;
      if (frames.includes('event: ping')) release();
      return undefined;
    },
    end(frames: string) {
      text += frames;
      ended = true;
    },
  };
  // The translated cell's stream, its 15 s wait shortened.
  const api: ClientApi<MessagesRequestBody> = {
    ...anthropicMessages,
    openStream(body, candidate, requestId, inputTokens) {
      const stream = anthropicMessages.openStream(body, candidate, requestId, inputTokens);
      assert.equal(stream.keepAlive?.afterMs, 15_000);
      Object.defineProperty(stream, 'keepAlive', { value: { ...stream.keepAlive!, afterMs: 5 } });
      return stream;
    },
  };
  const body = anthropicMessages.validate({ model: 'llama', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
  const result = await runRequest(api, deps, client, body, () => sink);
  assert.ok(result.ok);
  const names = [...text.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
  const firstPing = names.indexOf('ping');
  assert.ok(firstPing > names.indexOf('content_block_delta'), names.join(' '));
  assert.ok(firstPing < names.lastIndexOf('content_block_delta'), 'the upstream went on after the ping');
  assert.deepEqual(names.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
  assert.match(text, /event: ping\ndata: \{"type":"ping"\}\n\n/);
  await store.close();
});

// End to end across provider kinds. ONE suite body runs four times: the same client code (the real openai
// SDK, maxRetries 0, model IDs chat-model / chat-reasoning / embed-model) against a real gateway process
// whose tollgate.yaml routes those IDs to an upstream of kind openai, anthropic, gemini or azure-openai —
// each a mock speaking that provider's native wire format (test/support/mock-upstream.ts,
// mock-anthropic.ts, mock-gemini.ts). Only the config and the per-kind expectations below differ.
//
// Every successful request is charged exactly price(usage), where usage is what the mock reported in its
// own format, priced natively (Anthropic: (input + cache_creation) × input + cache_read × cached_input +
// output × output; Gemini: (prompt − cached) × input + cached × cached_input + (candidates + thoughts) ×
// output; OpenAI: (prompt − cached) × input + cached × cached_input + completion × output): checked against
// the ledger (spent delta), the response's usage.cost and the usage row (`tollgate usage --json`).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { costOf, finalUsageChunk, ssePayloads, stopE2E, validateStreamEvents, assertErrorResponse, type Json, type RawResponse } from '../support/e2e.js';
import { startGateway, type CreatedKey, type GatewayProcess, type KeyAudit } from '../support/gateway-process.js';
import { assertLedgerSettled, UsageExpectations, type UsageRow } from '../support/ledger-check.js';
import {
  ANTHROPIC_TEXT,
  ANTHROPIC_THINKING,
  anthropicError,
  anthropicErrorEvent,
  anthropicStreamEvents,
  anthropicUsageFor,
  signatureFor,
  startMockAnthropic,
} from '../support/mock-anthropic.js';
import {
  GEMINI_TEXT,
  GEMINI_THOUGHT,
  geminiUsageFor,
  googleError,
  googleErrorChunk,
  googleRateLimited,
  startMockGemini,
  thoughtSignatureFor,
} from '../support/mock-gemini.js';
import {
  DEFAULT_TEXT,
  defaultEmbeddingFor,
  defaultEmbeddingUsageFor,
  defaultReply,
  defaultUsageFor,
  errorReply,
  startMockUpstream,
  toolResultText,
  type MockHandler,
  type MockReply,
  type MockUpstream,
  type ReceivedRequest,
  type ReplySource,
} from '../support/mock-upstream.js';
import { TEST_PRICES, usdToNano } from '../support/money.js';
import { assertMatchesSchema } from '../support/openapi.js';

/** Nano-dollars per token at the test prices (USD per 1M tokens × 1000). */
const RATE = {
  input: Math.round(TEST_PRICES.input * 1000),
  cached: Math.round(TEST_PRICES.cachedInput * 1000),
  output: Math.round(TEST_PRICES.output * 1000),
  embedding: Math.round(TEST_PRICES.embedding * 1000),
};
const PROVIDER = 'upstream';
const OPENAI_KEY = 'sk-openai-mock-secret';
const AZURE_KEY = 'azure-mock-api-key';

const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};
const TOOL_RESULT = '{"temp_c":21}';
const ANSWER_SCHEMA = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'], additionalProperties: false };

// ---------------------------------------------------------------- what differs per kind

/** Token classes and the exact charge of one request, from the usage the mock reported natively. */
interface Expected {
  nano: number;
  input: number;
  cached: number;
  output: number;
  /** Undefined where the provider reports no reasoning count (Anthropic: the gateway estimates it). */
  reasoning: number | undefined;
}

type Operation = 'chat' | 'stream' | 'embeddings';

interface Upstream {
  /** Every mock has the shared server core and a url (the provider's base_url, or its origin). */
  readonly mock: MockUpstream;
  readonly config: string;
  /** The text of a plain reply. */
  readonly text: string;
  /** The reasoning text the client should see, where the provider sends one. */
  readonly reasoningText: string | undefined;
  reset(): void;
  /** The usage the mock reported for this (recorded) request, priced. */
  expected(req: ReceivedRequest): Expected;
  /** Makes later replies report cached input tokens. */
  reportCachedInput(tokens: number): void;
  /** Path, query, auth headers and model of one upstream call. */
  checkCall(req: ReceivedRequest, op: Operation, upstreamModel: string): void;
  /** Turn 2 of a tool round trip carries the call and its result natively. */
  checkToolResult(req: ReceivedRequest, call: Json, result: string): void;
  /** reasoning_effort 'low' with max_tokens 2000 became the provider's own setting (budget 1024). */
  checkReasoningRequest(req: ReceivedRequest): void;
  /** A reply with reasoning carries the provider's opaque state, and turn 2 sent it back. */
  checkReasoningState(message: Json, turn2?: ReceivedRequest): void;
  checkJsonModeRequest(req: ReceivedRequest, format: Json): void;
  /** Refuse the gateway's configured key from now on (kinds whose mock checks keys). */
  rotateKey(): void;
  readonly errors: {
    badRequest(message: string): MockReply;
    rateLimited(): MockReply;
    /** The Retry-After the client must get for rateLimited(). */
    retryAfter: string;
    overloaded(): MockReply;
    overloadedStatus: number;
    authRefused(): MockReply;
    /** A 200 stream whose first event is an error. */
    streamError: ReplySource;
    streamErrorStatus: number;
  };
}

interface Kind {
  readonly kind: 'openai' | 'anthropic' | 'gemini' | 'azure-openai';
  readonly models: { chat: string; reasoning: string; embed: string | undefined };
  /** The mock checks the provider key itself (so rotateKey() makes the gateway's key wrong). */
  readonly checksKey: boolean;
  /** Where embedding usage comes from: the upstream, or the gateway's own count (Gemini reports none). */
  readonly embeddingUsage: 'upstream' | 'estimated' | undefined;
  start(): Promise<Upstream>;
}

function gatewayConfig(kind: string, baseUrl: string, apiKey: string, models: Kind['models']): string {
  const price = `price: { input: ${TEST_PRICES.input}, output: ${TEST_PRICES.output}, cached_input: ${TEST_PRICES.cachedInput} }`;
  const chat = (id: string, upstream: string, maxOut: number) =>
    `  ${id}:\n    type: chat\n    upstreams: [{ provider: ${PROVIDER}, model: ${upstream} }]\n    ${price}\n    context_window: 16000\n    max_output_tokens: ${maxOut}\n`;
  const embed = models.embed
    ? `  embed-model:\n    type: embedding\n    upstreams: [{ provider: ${PROVIDER}, model: ${models.embed} }]\n    price: { input: ${TEST_PRICES.embedding} }\n`
    : '';
  return `
server:
  host: 127.0.0.1
  port: 0
database: "{{DB}}"
providers:
  ${PROVIDER}:
    kind: ${kind}
    base_url: ${baseUrl}
    api_key: ${apiKey}
    retries: 1
    timeouts: { connect_ms: 2000, first_byte_ms: 5000, idle_ms: 5000, total_ms: 30000 }
    # Tests provoke failures on purpose; a cool-down would leak from one test into the next.
    cooldown: { failures: 1000000, seconds: 1 }
models:
${chat('chat-model', models.chat, 1000)}${chat('chat-reasoning', models.reasoning, 4000)}${embed}`;
}

const price = (uncached: number, cached: number, output: number) => uncached * RATE.input + cached * RATE.cached + output * RATE.output;
const query = (req: ReceivedRequest) => new URLSearchParams(req.url.split('?')[1] ?? '');

/** The OpenAI mock's default reply with `cached` cached prompt tokens in its usage (JSON or stream). */
const withCachedTokens =
  (cached: number): MockHandler =>
  (req) => {
    const reply = defaultReply(req);
    const patch = (body: Json) => {
      if (body?.usage?.prompt_tokens_details) body.usage.prompt_tokens_details.cached_tokens = cached;
      return body;
    };
    if ('json' in reply) return { ...reply, json: patch(reply.json) };
    if ('sse' in reply) return { ...reply, sse: reply.sse.map((e) => (typeof e === 'string' && e.startsWith('{') ? JSON.stringify(patch(JSON.parse(e))) : e)) };
    return reply;
  };

function openaiFamily(kind: 'openai' | 'azure-openai'): Kind {
  const azure = kind === 'azure-openai';
  const key = azure ? AZURE_KEY : OPENAI_KEY;
  const models = { chat: 'gpt-4o-mini', reasoning: 'o3-mini-reasoning', embed: 'text-embedding-3-small' };
  return {
    kind,
    models,
    checksKey: false,
    embeddingUsage: 'upstream',
    async start() {
      const mock = await startMockUpstream();
      let cached = 0;
      return {
        mock,
        // openai: base_url ends in /v1; azure-openai: the resource's origin.
        config: gatewayConfig(kind, azure ? mock.origin : mock.url, key, models),
        text: DEFAULT_TEXT,
        reasoningText: undefined,
        reset() {
          cached = 0;
          mock.reset();
        },
        expected(req) {
          const usage = defaultUsageFor(req.body);
          return {
            nano: price(usage.prompt_tokens - cached, cached, usage.completion_tokens),
            input: usage.prompt_tokens,
            cached,
            output: usage.completion_tokens,
            reasoning: usage.completion_tokens_details?.reasoning_tokens ?? 0,
          };
        },
        reportCachedInput(tokens) {
          cached = tokens;
          mock.handle(withCachedTokens(tokens));
        },
        checkCall(req, op, upstreamModel) {
          assert.equal(req.method, 'POST');
          const operation = op === 'embeddings' ? 'embeddings' : 'chat/completions';
          if (azure) {
            assert.equal(req.path, `/openai/deployments/${encodeURIComponent(upstreamModel)}/${operation}`);
            assert.deepEqual([...query(req)], [['api-version', '2024-10-21']]);
            assert.equal(req.headers['api-key'], key, 'Azure authenticates with an api-key header');
            assert.equal(req.headers.authorization, undefined, 'no Authorization header goes to Azure');
          } else {
            assert.equal(req.url, `/v1/${operation}`);
            assert.equal(req.headers.authorization, `Bearer ${key}`);
          }
          assert.equal(req.body.model, upstreamModel);
          if (op === 'stream') assert.equal(req.body.stream_options?.include_usage, true, 'the gateway asks for usage');
        },
        checkToolResult(req, call, result) {
          const messages = req.body.messages as Json[];
          assert.deepEqual(messages.at(-2).tool_calls, [{ id: call.id, type: 'function', function: call.function }]);
          assert.deepEqual(messages.at(-1), { role: 'tool', tool_call_id: call.id, content: result });
        },
        checkReasoningRequest(req) {
          assert.equal(req.body.reasoning_effort, 'low', 'reasoning_effort goes to OpenAI-style upstreams unchanged');
          assert.equal(req.body.max_tokens, 2000);
        },
        checkReasoningState(message) {
          assert.equal(message.reasoning_content, undefined, 'OpenAI sends no reasoning text');
          assert.equal(message.thinking_blocks, undefined);
        },
        checkJsonModeRequest(req, format) {
          assert.deepEqual(req.body.response_format, format, 'response_format is forwarded unchanged');
        },
        rotateKey() {
          throw new Error('the OpenAI mock does not check keys');
        },
        errors: {
          badRequest: (message) => errorReply(400, message, { param: 'messages', code: 'invalid_value' }),
          rateLimited: () => ({ ...errorReply(429, 'Rate limit reached for requests. Please try again in 20s.'), headers: { 'retry-after': '20' } }),
          retryAfter: '20',
          overloaded: () => errorReply(500, 'The server had an error while processing your request. Sorry about that!'),
          overloadedStatus: 500,
          authRefused: () => errorReply(401, 'Incorrect API key provided: sk-opena***cret.', { code: 'invalid_api_key' }),
          streamError: { sse: [JSON.stringify({ error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } })] },
          // An error event has no HTTP status of its own: the attempt is recorded as 502.
          streamErrorStatus: 502,
        },
      };
    },
  };
}

const anthropicKind: Kind = {
  kind: 'anthropic',
  models: { chat: 'claude-sonnet-4-5', reasoning: 'claude-sonnet-4-5', embed: undefined },
  checksKey: true,
  embeddingUsage: undefined,
  async start() {
    const mock = await startMockAnthropic();
    const thinkingBlock = { type: 'thinking', thinking: ANTHROPIC_THINKING, signature: signatureFor(ANTHROPIC_THINKING) };
    return {
      mock,
      config: gatewayConfig('anthropic', mock.url, mock.apiKey, this.models),
      text: ANTHROPIC_TEXT,
      reasoningText: ANTHROPIC_THINKING,
      reset: () => mock.reset(),
      expected(req) {
        const u = anthropicUsageFor(req.body, mock.cache);
        return {
          nano: price(u.input_tokens + u.cache_creation_input_tokens, u.cache_read_input_tokens, u.output_tokens),
          input: u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens,
          cached: u.cache_read_input_tokens,
          output: u.output_tokens,
          reasoning: undefined,
        };
      },
      reportCachedInput(tokens) {
        mock.cache = { read: tokens, creation: 5 };
      },
      checkCall(req, op, upstreamModel) {
        assert.equal(req.method, 'POST');
        assert.equal(req.url, '/v1/messages');
        assert.equal(req.headers['x-api-key'], mock.apiKey);
        assert.equal(req.headers['anthropic-version'], '2023-06-01');
        assert.equal(req.headers.authorization, undefined);
        assert.equal(req.body.model, upstreamModel);
        assert.equal(req.body.stream, op === 'stream' ? true : undefined);
      },
      checkToolResult(req, call, result) {
        assert.match(call.id, /^toolu_/, "Anthropic's tool_use id is kept");
        const messages = req.body.messages as Json[];
        const assistant = messages.at(-2);
        assert.equal(assistant.role, 'assistant');
        assert.deepEqual(
          assistant.content.find((b: Json) => b.type === 'tool_use'),
          { type: 'tool_use', id: call.id, name: 'get_weather', input: { location: 'Paris' } },
        );
        assert.deepEqual(messages.at(-1), { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: result }] });
      },
      checkReasoningRequest(req) {
        assert.deepEqual(req.body.thinking, { type: 'enabled', budget_tokens: 1024 });
        assert.equal(req.body.max_tokens, 2000);
      },
      checkReasoningState(message, turn2) {
        assert.deepEqual(message.thinking_blocks, [thinkingBlock], 'thinking_blocks carry the signed thinking');
        if (!turn2) return;
        const assistant = (turn2.body.messages as Json[]).at(-2);
        assert.deepEqual(assistant.content[0], thinkingBlock, 'the signed thinking block leads the assistant turn sent back');
        assert.deepEqual(turn2.body.thinking, { type: 'enabled', budget_tokens: 1024 }, 'thinking stays on for turn 2');
      },
      checkJsonModeRequest(req, format) {
        const schema = format.type === 'json_schema' ? format.json_schema.schema : { type: 'object' };
        const tool = (req.body.tools as Json[]).find((t) => t.name === 'json_response');
        assert.deepEqual(tool?.input_schema, schema, 'JSON mode arrives as the json_response tool');
        assert.deepEqual(req.body.tool_choice, { type: 'tool', name: 'json_response' });
      },
      rotateKey() {
        mock.apiKey = 'sk-ant-rotated-key';
      },
      errors: {
        badRequest: (message) => anthropicError(400, 'invalid_request_error', message),
        rateLimited: () => anthropicError(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.', { 'retry-after': '20' }),
        retryAfter: '20',
        overloaded: () => anthropicError(529, 'overloaded_error', 'Overloaded'),
        overloadedStatus: 529,
        authRefused: () => anthropicError(401, 'authentication_error', 'invalid x-api-key'),
        streamError: (req) => ({ sse: [anthropicStreamEvents(req.body)[0]!, anthropicErrorEvent('overloaded_error', 'Overloaded')] }),
        streamErrorStatus: 529,
      },
    };
  },
};

const geminiKind: Kind = {
  kind: 'gemini',
  models: { chat: 'gemini-2.5-flash', reasoning: 'gemini-2.5-pro', embed: 'gemini-embedding-001' },
  checksKey: true,
  embeddingUsage: 'estimated',
  async start() {
    const mock = await startMockGemini();
    const signature = thoughtSignatureFor('get_weather');
    return {
      mock,
      config: gatewayConfig('gemini', mock.url, mock.apiKey, this.models),
      text: GEMINI_TEXT,
      reasoningText: GEMINI_THOUGHT,
      reset: () => mock.reset(),
      expected(req) {
        const u = geminiUsageFor(req.body, mock.cachedTokens);
        const cached = u.cachedContentTokenCount ?? 0;
        const output = u.candidatesTokenCount + (u.thoughtsTokenCount ?? 0);
        return { nano: price(u.promptTokenCount - cached, cached, output), input: u.promptTokenCount, cached, output, reasoning: u.thoughtsTokenCount ?? 0 };
      },
      reportCachedInput(tokens) {
        mock.cachedTokens = tokens;
      },
      checkCall(req, op, upstreamModel) {
        assert.equal(req.method, 'POST');
        const method = { chat: 'generateContent', stream: 'streamGenerateContent?alt=sse', embeddings: 'batchEmbedContents' }[op];
        assert.equal(req.url, `/v1beta/models/${upstreamModel}:${method}`);
        assert.equal(req.headers['x-goog-api-key'], mock.apiKey);
        assert.equal(req.headers.authorization, undefined);
      },
      checkToolResult(req, call, result) {
        assert.equal(call.extra_content?.google?.thought_signature, signature, 'the thought signature reaches the client');
        const contents = req.body.contents as Json[];
        assert.deepEqual(contents.at(-2), {
          role: 'model',
          parts: [{ functionCall: { name: 'get_weather', args: { location: 'Paris' } }, thoughtSignature: signature }],
        });
        assert.deepEqual(contents.at(-1), { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: JSON.parse(result) as Json } }] });
      },
      checkReasoningRequest(req) {
        assert.deepEqual(req.body.generationConfig?.thinkingConfig, { thinkingBudget: 1024, includeThoughts: true });
        assert.equal(req.body.generationConfig?.maxOutputTokens, 2000);
      },
      checkReasoningState(message, turn2) {
        assert.equal(message.thinking_blocks, undefined);
        if (turn2) assert.deepEqual(turn2.body.generationConfig?.thinkingConfig, { thinkingBudget: 1024, includeThoughts: true });
      },
      checkJsonModeRequest(req, format) {
        assert.equal(req.body.generationConfig?.responseMimeType, 'application/json');
        if (format.type === 'json_schema') assert.ok(req.body.generationConfig?.responseSchema?.properties?.answer, 'the schema goes along as responseSchema');
        else assert.equal(req.body.generationConfig?.responseSchema, undefined);
      },
      rotateKey() {
        mock.apiKey = 'AIza-rotated-key';
      },
      errors: {
        badRequest: (message) => googleError(400, message),
        rateLimited: () => googleRateLimited('34.4s'),
        retryAfter: '35', // RetryInfo's 34.4s, rounded up to whole seconds
        overloaded: () => googleError(500, 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting'),
        overloadedStatus: 500,
        authRefused: () => googleError(401, 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.'),
        streamError: { rawSse: [googleErrorChunk(503, 'The model is overloaded. Please try again later.')] },
        streamErrorStatus: 503,
      },
    };
  },
};

const KINDS: readonly Kind[] = [openaiFamily('openai'), anthropicKind, geminiKind, openaiFamily('azure-openai')];

// ---------------------------------------------------------------- client-side helpers (kind-independent)

/** Rebuilds the assistant message from stream deltas as an OpenAI client does, keeping extra fields. */
function assembleMessage(chunks: Json[]): Json {
  let content: string | null = null;
  let reasoning: string | undefined;
  const thinkingBlocks: Json[] = [];
  const calls: Json[] = [];
  for (const chunk of chunks) {
    for (const choice of chunk.choices as Json[]) {
      const delta = choice.delta ?? {};
      if (typeof delta.content === 'string' && delta.content !== '') content = (content ?? '') + delta.content;
      if (typeof delta.reasoning_content === 'string') reasoning = (reasoning ?? '') + delta.reasoning_content;
      if (Array.isArray(delta.thinking_blocks)) thinkingBlocks.push(...delta.thinking_blocks);
      for (const part of (delta.tool_calls ?? []) as Json[]) {
        const call = (calls[part.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
        for (const [field, value] of Object.entries(part as Record<string, Json>)) {
          if (field === 'index') continue;
          if (field === 'function') {
            if (value.name) call.function.name = value.name;
            if (typeof value.arguments === 'string') call.function.arguments += value.arguments;
          } else {
            call[field] = value; // id, type, and extras such as Gemini's extra_content
          }
        }
      }
    }
  }
  const message: Json = { role: 'assistant', content };
  if (reasoning !== undefined) message.reasoning_content = reasoning;
  if (thinkingBlocks.length > 0) message.thinking_blocks = thinkingBlocks;
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

/** The finish_reasons of a stream, in order. */
const finishReasons = (chunks: Json[]): string[] => chunks.flatMap((c) => (c.choices as Json[]).flatMap((ch) => (ch.finish_reason ? [ch.finish_reason] : [])));

const weatherQuestion = [{ role: 'user', content: 'What is the weather in Paris?' }];

// ---------------------------------------------------------------- the suite, once per kind

for (const k of KINDS) {
  const upstreamModel: Record<string, string | undefined> = { 'chat-model': k.models.chat, 'chat-reasoning': k.models.reasoning, 'embed-model': k.models.embed };

  describe(`the same client code against a gateway whose upstream is of kind ${k.kind}`, () => {
    let up: Upstream | undefined;
    let gw: GatewayProcess | undefined;
    let key: CreatedKey;
    let client: OpenAI;
    /** A clone of the last HTTP response the SDK received, to read the raw bytes (SSE framing, error bodies). */
    let lastResponse: Response | undefined;
    const rows = new UsageExpectations();

    before(async () => {
      up = await k.start();
      gw = await startGateway({ config: up.config });
      key = await gw.createKey({ name: k.kind, balance: 10 });
      client = new OpenAI({
        apiKey: key.key,
        baseURL: gw.baseURL,
        maxRetries: 0,
        timeout: 20_000,
        fetch: async (input, init) => {
          const res = await fetch(input, init);
          lastResponse = res.clone();
          return res;
        },
      });
    });
    after(() => stopE2E({ mock: up?.mock, gw }));
    beforeEach(() => up!.reset());

    const U = () => up!;
    const G = () => gw!;

    /** Checks the charge of one settled request three ways and records its usage-row expectation. */
    function assertCharged(label: string, requestId: string, before: KeyAudit, exp: Expected, usage: Json, model: string): void {
      const after = assertLedgerSettled(G(), key.id);
      assert.equal(after.spent - before.spent, exp.nano, `${label}: the ledger charged exactly price(native usage)`);
      assert.equal(before.balance - after.balance, exp.nano, `${label}: the balance moved by the charge`);
      assert.equal(after.captures - before.captures, 1, `${label}: one capture`);
      assert.equal(costOf(usage), exp.nano, `${label}: usage.cost is exactly price(native usage)`);
      assert.equal(usage.prompt_tokens, exp.input, `${label}: prompt_tokens`);
      assert.equal(usage.completion_tokens, exp.output, `${label}: completion_tokens`);
      assert.equal(usage.total_tokens, exp.input + exp.output, `${label}: total_tokens`);
      assert.equal(usage.prompt_tokens_details?.cached_tokens ?? 0, exp.cached, `${label}: cached_tokens`);
      const reasoning = usage.completion_tokens_details?.reasoning_tokens ?? 0;
      if (exp.reasoning !== undefined) assert.equal(reasoning, exp.reasoning, `${label}: reasoning_tokens`);
      else assert.ok(reasoning >= 0 && reasoning <= exp.output, `${label}: estimated reasoning_tokens ${reasoning} within the output`);
      rows.add({
        label: `${k.kind}: ${label}`,
        requestId,
        keyId: key.id,
        model,
        upstreamModel: upstreamModel[model]!,
        provider: PROVIDER,
        input: exp.input,
        output: exp.output,
        cached: exp.cached,
        reasoning,
        costNano: exp.nano,
      });
    }

    /** One non-stream completion: schema, one upstream call of the right shape, exact charge. */
    async function complete(label: string, params: Json): Promise<{ message: Json; finishReason: string; upstream: ReceivedRequest; usage: Json }> {
      const before = G().audit(key.id);
      const calls = U().mock.requests.length;
      const { data, response } = await client.chat.completions.create(params).withResponse();
      const body = data as Json;
      assertMatchesSchema('CreateChatCompletionResponse', body);
      assert.equal(body.model, params.model, 'the response names the client model');
      assert.equal(body.object, 'chat.completion');
      assert.equal(body.prompt_filter_results, undefined, 'no provider annotations reach the client');
      assert.equal(body.choices.length, 1);
      assert.equal(body.choices[0].content_filter_results, undefined);
      const requestId = response.headers.get('x-request-id');
      assert.ok(requestId, 'x-request-id');
      assert.equal(U().mock.requests.length, calls + 1, 'one upstream call');
      const upstream = U().mock.requests.at(-1)!;
      U().checkCall(upstream, 'chat', upstreamModel[params.model]!);
      assertCharged(label, requestId, before, U().expected(upstream), body.usage, params.model);
      return { message: body.choices[0].message, finishReason: body.choices[0].finish_reason, upstream, usage: body.usage };
    }

    /** One streamed completion through the SDK, with the raw SSE checked: framing, schema, one final usage chunk, exact charge. */
    async function stream(label: string, params: Json): Promise<{ message: Json; finishReason: string; upstream: ReceivedRequest; usage: Json }> {
      const before = G().audit(key.id);
      const calls = U().mock.requests.length;
      const { data, response } = await client.chat.completions.create({ ...params, stream: true } as ChatCompletionCreateParamsStreaming).withResponse();
      const sdkChunks: Json[] = [];
      for await (const chunk of data) sdkChunks.push(chunk);
      const requestId = response.headers.get('x-request-id');
      assert.ok(requestId, 'x-request-id');
      assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
      const { chunks, error } = validateStreamEvents(ssePayloads(await lastResponse!.text()));
      assert.equal(error, undefined, 'no error event');
      assert.equal(sdkChunks.length, chunks.length, 'the SDK saw every chunk');
      const final = finalUsageChunk(chunks, params.model);
      const reasons = finishReasons(chunks);
      assert.equal(reasons.length, 1, `one finish_reason: ${JSON.stringify(reasons)}`);
      assert.equal(U().mock.requests.length, calls + 1, 'one upstream call');
      const upstream = U().mock.requests.at(-1)!;
      U().checkCall(upstream, 'stream', upstreamModel[params.model]!);
      assertCharged(label, requestId, before, U().expected(upstream), final.usage, params.model);
      return { message: assembleMessage(chunks), finishReason: reasons[0]!, upstream, usage: final.usage };
    }

    const send = (streamed: boolean, label: string, params: Json) => (streamed ? stream(label, params) : complete(label, params));

    /** A request the upstream fails: the client's error, the upstream calls made, and no charge. */
    async function failing(
      label: string,
      reply: ReplySource,
      params: Json,
      exp: { status: number; code: string | RegExp; upstreamCalls: number; attempts: number[]; message?: string; retryAfter?: string },
    ): Promise<void> {
      U().mock.handle(reply);
      const before = G().audit(key.id);
      const error = await client.chat.completions.create(params).then(
        () => assert.fail('the request should fail'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof OpenAI.APIError, `an APIError: ${String(error)}`);
      assert.equal(error.status, exp.status, `${label}: status`);
      const raw = lastResponse!;
      const text = await raw.text();
      const res: RawResponse = { status: raw.status, headers: raw.headers, text, json: JSON.parse(text) as Json };
      const body = assertErrorResponse(res, exp.status, exp.code);
      if (exp.message !== undefined) assert.equal(body.message, exp.message, `${label}: the upstream's message is kept`);
      if (exp.retryAfter !== undefined) assert.equal(res.headers.get('retry-after'), exp.retryAfter, `${label}: Retry-After`);
      assert.equal(U().mock.requests.length, exp.upstreamCalls, `${label}: upstream calls`);
      for (const req of U().mock.requests) U().checkCall(req, params.stream ? 'stream' : 'chat', upstreamModel[params.model]!);
      const after = assertLedgerSettled(G(), key.id);
      assert.equal(after.spent, before.spent, `${label}: nothing charged`);
      assert.equal(after.balance, before.balance, `${label}: balance unchanged`);
      assert.equal(after.captures, before.captures, `${label}: no capture`);
      rows.add({
        label: `${k.kind}: ${label}`,
        requestId: res.headers.get('x-request-id')!,
        keyId: key.id,
        model: params.model,
        upstreamModel: upstreamModel[params.model]!,
        provider: PROVIDER,
        status: exp.status,
        costNano: 0,
        source: 'any',
        attempts: exp.attempts,
      });
    }

    // ------------------------------------------------------------ chat

    test('answers a chat completion with the upstream’s text and charges exactly the price of its native usage', async () => {
      const { message, finishReason } = await complete('plain chat', {
        model: 'chat-model',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Say hello' },
        ],
      });
      assert.equal(message.role, 'assistant');
      assert.equal(message.content, U().text);
      assert.equal(finishReason, 'stop');
    });

    test('streams a chat completion: valid chunks, one final choices: [] chunk with usage and cost, then [DONE]', async () => {
      const { message, finishReason } = await stream('streamed chat', { model: 'chat-model', messages: [{ role: 'user', content: 'Say hello' }] });
      assert.equal(message.content, U().text);
      assert.equal(finishReason, 'stop');
    });

    test('prices cached input tokens at the cached_input rate', async () => {
      U().reportCachedInput(6);
      const { message } = await complete('cached input', { model: 'chat-model', messages: [{ role: 'user', content: 'Say hello again' }] });
      assert.equal(message.content, U().text);
    });

    for (const streamed of [false, true]) {
      const how = streamed ? 'streamed' : 'non-stream';
      test(`round-trips a tool call over two ${how} turns, the upstream receiving the result natively`, async () => {
        const params = { model: 'chat-model', tools: [WEATHER_TOOL], tool_choice: 'auto' };
        const turn1 = await send(streamed, `${how} tool call, turn 1`, { ...params, messages: weatherQuestion });
        assert.equal(turn1.finishReason, 'tool_calls');
        const calls = turn1.message.tool_calls as Json[];
        assert.equal(calls.length, 1);
        const call = calls[0];
        assert.ok(typeof call.id === 'string' && call.id !== '', 'the call has an id');
        assert.equal(call.type, 'function');
        assert.equal(call.function.name, 'get_weather');
        assert.deepEqual(JSON.parse(call.function.arguments), { location: 'Paris' }, 'the arguments are JSON text');

        // Turn 2: the assistant message exactly as received, then the tool result.
        const messages = [...weatherQuestion, turn1.message, { role: 'tool', tool_call_id: call.id, content: TOOL_RESULT }];
        const turn2 = await send(streamed, `${how} tool call, turn 2`, { ...params, messages });
        U().checkToolResult(turn2.upstream, call, TOOL_RESULT);
        assert.equal(turn2.message.content, toolResultText(TOOL_RESULT), 'the reply answers from the tool result');
        assert.equal(turn2.message.tool_calls, undefined);
        assert.equal(turn2.finishReason, 'stop');
      });
    }

    test('JSON mode with json_object answers JSON text and finishes with stop', async () => {
      const format = { type: 'json_object' };
      const { message, finishReason, upstream } = await complete('json_object', {
        model: 'chat-model',
        messages: [{ role: 'user', content: 'Answer in JSON: what is six times seven?' }],
        response_format: format,
      });
      U().checkJsonModeRequest(upstream, format);
      assert.deepEqual(JSON.parse(message.content), { answer: 42 });
      assert.equal(message.tool_calls, undefined, 'JSON mode is no tool call for the client');
      assert.equal(finishReason, 'stop');
    });

    test('JSON mode with json_schema, streamed, answers JSON text and finishes with stop', async () => {
      const format = { type: 'json_schema', json_schema: { name: 'answer', schema: ANSWER_SCHEMA, strict: true } };
      const { message, finishReason, upstream } = await stream('json_schema streamed', {
        model: 'chat-model',
        messages: [{ role: 'user', content: 'Answer in JSON: what is six times seven?' }],
        response_format: format,
      });
      U().checkJsonModeRequest(upstream, format);
      assert.deepEqual(JSON.parse(message.content), { answer: 42 });
      assert.equal(message.tool_calls, undefined);
      assert.equal(finishReason, 'stop');
    });

    // ------------------------------------------------------------ reasoning

    const reasoningParams = { model: 'chat-reasoning', reasoning_effort: 'low', max_tokens: 2000 };

    for (const streamed of [false, true]) {
      const how = streamed ? 'streamed' : 'non-stream';
      test(`reasoning_effort low (${how}) maps to the provider's thinking budget of 1024 and reports reasoning`, async () => {
        const { message, finishReason, upstream, usage } = await send(streamed, `${how} reasoning`, { ...reasoningParams, messages: [{ role: 'user', content: 'Say hello, thoughtfully' }] });
        U().checkReasoningRequest(upstream);
        // Exact where the provider counts them (OpenAI, Gemini), the gateway's estimate of the thinking text for Anthropic.
        assert.ok(usage.completion_tokens_details?.reasoning_tokens > 0, 'reasoning tokens reported');
        assert.equal(message.content, U().text);
        assert.equal(finishReason, 'stop');
        if (U().reasoningText !== undefined) assert.equal(message.reasoning_content, U().reasoningText, 'reasoning text as reasoning_content');
        U().checkReasoningState(message);
      });
    }

    for (const streamed of [false, true]) {
      const how = streamed ? 'streamed' : 'non-stream';
      test(`JSON mode with reasoning on (${how}) still answers JSON text only, and finishes with stop`, async () => {
        const { message, finishReason, upstream } = await send(streamed, `${how} json_object with reasoning`, {
          ...reasoningParams,
          messages: [{ role: 'user', content: 'Answer in JSON: what is six times seven?' }],
          response_format: { type: 'json_object' },
        });
        U().checkReasoningRequest(upstream);
        assert.doesNotThrow(() => JSON.parse(message.content), `content is JSON: ${JSON.stringify(message.content)}`);
        assert.deepEqual(JSON.parse(message.content), { answer: 42 });
        assert.equal(message.tool_calls, undefined);
        assert.equal(finishReason, 'stop');
      });
    }

    for (const streamed of [false, true]) {
      const how = streamed ? 'streamed' : 'non-stream';
      test(`keeps tool use with reasoning working across two ${how} turns: the opaque state goes back upstream`, async () => {
        const params = { ...reasoningParams, tools: [WEATHER_TOOL], tool_choice: 'auto' };
        const turn1 = await send(streamed, `${how} reasoning tool call, turn 1`, { ...params, messages: weatherQuestion });
        assert.equal(turn1.finishReason, 'tool_calls');
        U().checkReasoningRequest(turn1.upstream);
        U().checkReasoningState(turn1.message);
        const call = (turn1.message.tool_calls as Json[])[0];
        const messages = [...weatherQuestion, turn1.message, { role: 'tool', tool_call_id: call.id, content: TOOL_RESULT }];
        const turn2 = await send(streamed, `${how} reasoning tool call, turn 2`, { ...params, messages });
        U().checkToolResult(turn2.upstream, call, TOOL_RESULT);
        U().checkReasoningState(turn1.message, turn2.upstream);
        assert.equal(turn2.message.content, toolResultText(TOOL_RESULT));
        assert.equal(turn2.finishReason, 'stop');
      });
    }

    // ------------------------------------------------------------ embeddings

    if (k.models.embed) {
      test(`embeddings return the upstream's vectors, charged from ${k.embeddingUsage === 'estimated' ? 'the gateway’s own token count (usage_source estimated)' : 'the upstream’s usage'}`, async () => {
        const inputs = ['The quick brown fox', 'jumps over the lazy dog today'];
        const before = G().audit(key.id);
        const { data, response } = await client.embeddings.create({ model: 'embed-model', input: inputs }).withResponse();
        const raw = JSON.parse(await lastResponse!.text()) as Json;
        assert.deepEqual(
          raw.data.map((d: Json) => typeof d.embedding),
          ['string', 'string'],
          'vectors in base64, the SDK’s default encoding_format',
        );
        assertMatchesSchema('CreateEmbeddingResponse', data);
        assert.equal(data.model, 'embed-model');
        assert.deepEqual(
          data.data.map((d) => d.embedding),
          inputs.map((text) => defaultEmbeddingFor(text)),
          'the SDK decodes the upstream’s vectors from base64',
        );
        assert.equal(U().mock.requests.length, 1);
        const upstream = U().mock.requests[0]!;
        U().checkCall(upstream, 'embeddings', k.models.embed!);
        const after = assertLedgerSettled(G(), key.id);
        const charged = after.spent - before.spent;
        assert.equal(costOf(data.usage), charged, 'usage.cost is what the ledger charged');
        const tokens = data.usage.prompt_tokens;
        assert.equal(charged, tokens * RATE.embedding, 'the charge is prompt_tokens × the embedding price');
        const requestId = response.headers.get('x-request-id')!;
        const row = { label: `${k.kind}: embeddings`, requestId, keyId: key.id, model: 'embed-model', upstreamModel: k.models.embed!, provider: PROVIDER, output: 0, costNano: charged };
        if (k.embeddingUsage === 'upstream') {
          assert.equal(tokens, defaultEmbeddingUsageFor(upstream.body).prompt_tokens, 'the upstream’s token count');
          rows.add({ ...row, input: tokens });
        } else {
          assert.ok(tokens > 0);
          rows.add({ ...row, source: 'estimated' }, (r: UsageRow) => {
            assert.equal(r.input_tokens, tokens, 'the row holds the gateway’s own count');
            assert.equal(usdToNano(r.cost), r.input_tokens * RATE.embedding, 'the row is priced from its own count');
          });
        }
      });
    }

    // ------------------------------------------------------------ upstream errors

    const hello: Json = { model: 'chat-model', messages: [{ role: 'user', content: 'Say hello' }] };

    test('an upstream 400 keeps its status and message, and charges nothing', async () => {
      const message = 'messages.0.content: the upstream rejected this request (mock)';
      // The code is the upstream's own (invalid_value, invalid_request_error, INVALID_ARGUMENT).
      await failing('upstream 400', U().errors.badRequest(message), hello, { status: 400, code: /^\S+$/, upstreamCalls: 1, attempts: [400], message });
    });

    test('an upstream 429 becomes 429 upstream_rate_limited with the upstream’s Retry-After, and charges nothing', async () => {
      await failing('upstream 429', U().errors.rateLimited(), hello, {
        status: 429,
        code: 'upstream_rate_limited',
        upstreamCalls: 1,
        attempts: [429],
        retryAfter: U().errors.retryAfter,
      });
    });

    test('an overloaded upstream (500 / 529) is retried once, then answered 502 upstream_error, and charges nothing', async () => {
      const status = U().errors.overloadedStatus;
      await failing(`upstream ${status}`, U().errors.overloaded(), hello, { status: 502, code: 'upstream_error', upstreamCalls: 2, attempts: [status, status] });
    });

    test('an error event opening a 200 stream is retried once, then answered 502 upstream_error, and charges nothing', async () => {
      const status = U().errors.streamErrorStatus;
      await failing('error event in a 200 stream', U().errors.streamError, { ...hello, stream: true }, { status: 502, code: 'upstream_error', upstreamCalls: 2, attempts: [status, status] });
    });

    test('an upstream 401 becomes 502 upstream_auth_failed, never a 401, and charges nothing', async () => {
      await failing('upstream 401', U().errors.authRefused(), hello, { status: 502, code: 'upstream_auth_failed', upstreamCalls: 1, attempts: [401] });
    });

    if (k.checksKey) {
      test('a provider key the upstream refuses (its own check, its own error shape) becomes 502 upstream_auth_failed', async () => {
        U().rotateKey();
        // No handler: the mock answers from its own key check (Anthropic 401 authentication_error, Google 400 API_KEY_INVALID).
        const before = G().audit(key.id);
        const error = await client.chat.completions.create(hello).then(
          () => assert.fail('the request should fail'),
          (e: unknown) => e,
        );
        assert.ok(error instanceof OpenAI.APIError, String(error));
        const text = await lastResponse!.text();
        const res: RawResponse = { status: lastResponse!.status, headers: lastResponse!.headers, text, json: JSON.parse(text) as Json };
        assertErrorResponse(res, 502, 'upstream_auth_failed');
        assert.doesNotMatch(text, /API key not valid|x-api-key/i, 'the upstream’s complaint about the gateway’s own key is not passed on as the client’s');
        const after = assertLedgerSettled(G(), key.id);
        assert.equal(after.spent, before.spent, 'nothing charged');
        rows.add({
          label: `${k.kind}: refused provider key`,
          requestId: res.headers.get('x-request-id')!,
          keyId: key.id,
          model: 'chat-model',
          upstreamModel: k.models.chat,
          provider: PROVIDER,
          status: 502,
          costNano: 0,
          source: 'any',
          attempts: 'any',
        });
      });
    }

    // ------------------------------------------------------------ the books

    test('leaves no active hold, cached balances equal to the ledger-derived ones, and a matching usage row per request', async () => {
      const audit = assertLedgerSettled(G(), key.id);
      assert.equal(audit.activeHolds, 0);
      assert.deepEqual({ balance: audit.balance, held: audit.held, spent: audit.spent }, audit.derived);
      assert.equal(audit.balance + audit.spent, usdToNano(10), 'conservation: balance + spent = the top-up');
      await rows.verify(G(), [key.id], ['embed-model']);
    });
  });
}

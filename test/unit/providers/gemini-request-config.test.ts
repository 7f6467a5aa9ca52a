// OpenAI sampling, output and reasoning fields → Gemini generationConfig; dropped and native fields.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { CHAT_CONVENTION_FIELDS } from '../../../src/providers/convention-fields.js';
import { geminiAdapter } from '../../../src/providers/gemini/index.js';
import type { ChatRequestBody, JsonObject, UpstreamTarget } from '../../../src/providers/types.js';
import { testProvider, testTarget } from '../../support/provider-fixture.js';

const PROVIDER = testProvider({ id: 'google', kind: 'gemini', baseUrl: 'https://g.test', origin: 'https://g.test', basePath: '', apiKey: 'k' });

function target(maxOutputTokens: number | undefined = 65_536): UpstreamTarget {
  return testTarget({ provider: PROVIDER, upstreamModel: 'gemini-2.5-pro', clientModel: 'pro', maxOutputTokens });
}

function build(extra: JsonObject = {}, t: UpstreamTarget = target()): { sent: JsonObject; config: JsonObject | undefined; dropped: readonly string[] } {
  const body = { model: 'pro', messages: [{ role: 'user', content: 'Hi' }], ...extra } as ChatRequestBody;
  const request = geminiAdapter.buildChatRequest(body, t);
  const sent = JSON.parse(request.body!) as JsonObject;
  return { sent, config: sent.generationConfig as JsonObject | undefined, dropped: request.dropped ?? [] };
}

void describe('gemini chat request: generationConfig', () => {
  test('sends no generationConfig when the client set nothing that maps to one', () => {
    assert.equal(build().config, undefined);
  });

  test('maps the sampling and output fields to their Gemini names (top_k too, not forwarded beside them)', () => {
    const { config, sent } = build({
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      max_tokens: 500,
      stop: ['END', 'STOP'],
      n: 2,
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      logprobs: true,
      top_logprobs: 3,
    });
    assert.deepEqual(config, {
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      candidateCount: 2,
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      logprobs: 3,
      maxOutputTokens: 500,
      stopSequences: ['END', 'STOP'],
      responseLogprobs: true,
    });
    assert.equal(sent.top_k, undefined);
  });

  test('prefers max_completion_tokens over max_tokens, wraps a single stop string, skips nulls', () => {
    assert.deepEqual(build({ max_completion_tokens: 100, max_tokens: 900, stop: 'END', temperature: null }).config, {
      maxOutputTokens: 100,
      stopSequences: ['END'],
    });
  });

  test('turns json_object into responseMimeType application/json', () => {
    assert.deepEqual(build({ response_format: { type: 'json_object' } }).config, { responseMimeType: 'application/json' });
  });

  test('turns json_schema into responseMimeType plus a sanitised responseSchema', () => {
    const schema = { type: 'object', properties: { n: { type: ['integer', 'null'] } }, required: ['n'], additionalProperties: false };
    assert.deepEqual(build({ response_format: { type: 'json_schema', json_schema: { name: 'x', strict: true, schema } } }).config, {
      responseMimeType: 'application/json',
      responseSchema: { type: 'object', properties: { n: { type: 'integer', nullable: true } }, required: ['n'] },
    });
  });

  test('sends nothing for response_format text and drops a format it does not know', () => {
    assert.equal(build({ response_format: { type: 'text' } }).config, undefined);
    const unknown = build({ response_format: { type: 'grammar' } });
    assert.equal(unknown.config, undefined);
    assert.deepEqual(unknown.dropped, ['response_format']);
  });

  test('merges a native generationConfig over the mapped one, its keys winning', () => {
    const { config, sent } = build({ temperature: 0.2, max_tokens: 100, generationConfig: { temperature: 1, responseModalities: ['TEXT'] } });
    assert.deepEqual(config, { temperature: 1, maxOutputTokens: 100, responseModalities: ['TEXT'] });
    assert.equal(Object.keys(sent).filter((k) => k === 'generationConfig').length, 1);
  });
});

void describe('gemini chat request: reasoning_effort → thinkingConfig', () => {
  test('maps low / medium / high to 1024 / 4096 / 16384 thinking tokens with thoughts included', () => {
    for (const [effort, budget] of [['low', 1024], ['medium', 4096], ['high', 16384]] as const) {
      assert.deepEqual(build({ reasoning_effort: effort }).config, { thinkingConfig: { thinkingBudget: budget, includeThoughts: true } }, effort);
    }
  });

  test('caps the budget at max_out − 1, taking max_completion_tokens, then max_tokens, then the model limit', () => {
    assert.equal((build({ reasoning_effort: 'high', max_completion_tokens: 5000 }).config?.thinkingConfig as JsonObject).thinkingBudget, 4999);
    assert.equal((build({ reasoning_effort: 'high', max_tokens: 3000 }).config?.thinkingConfig as JsonObject).thinkingBudget, 2999);
    assert.equal((build({ reasoning_effort: 'high' }, target(8192)).config?.thinkingConfig as JsonObject).thinkingBudget, 8191);
    assert.equal((build({ reasoning_effort: 'high' }, target(undefined)).config?.thinkingConfig as JsonObject).thinkingBudget, 16384);
  });

  test('sends no thinkingConfig below 1025 output tokens or for an unknown effort, and lists it as dropped', () => {
    const small = build({ reasoning_effort: 'low', max_tokens: 1024 });
    assert.deepEqual(small.config, { maxOutputTokens: 1024 });
    assert.deepEqual(small.dropped, ['reasoning_effort']);
    assert.equal(build({ reasoning_effort: 'minimal' }).config, undefined);
  });

  test("lets the client's own thinkingConfig win over reasoning_effort", () => {
    const { config } = build({ reasoning_effort: 'high', generationConfig: { thinkingConfig: { thinkingLevel: 'low' } } });
    assert.deepEqual(config, { thinkingConfig: { thinkingLevel: 'low' } });
  });
});

void describe('gemini chat request: dropped and native fields', () => {
  const droppedFields: JsonObject = {
    audio: { voice: 'alloy', format: 'mp3' },
    function_call: 'auto',
    functions: [{ name: 'f' }],
    logit_bias: { '1': 2 },
    metadata: { a: 'b' },
    modalities: ['text'],
    moderation: true,
    parallel_tool_calls: false,
    prediction: { type: 'content', content: 'x' },
    prompt_cache_key: 'k',
    prompt_cache_options: {},
    prompt_cache_retention: '24h',
    safety_identifier: 'u',
    service_tier: 'flex',
    store: true,
    stream_options: { include_usage: true },
    user: 'u-1',
    verbosity: 'low',
    web_search_options: {},
  };

  test('drops the convention fields Gemini has no place for and lists each one', () => {
    const { sent, dropped } = build(droppedFields);
    assert.deepEqual([...dropped].sort(), Object.keys(droppedFields).sort());
    for (const field of Object.keys(droppedFields)) assert.equal(sent[field], undefined, field);
  });

  test('decides every convention field: mapped, or dropped (none is forwarded raw)', () => {
    const mapped = ['messages', 'model', 'stream', 'temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop', 'n', 'seed',
      'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'response_format', 'reasoning_effort', 'tools', 'tool_choice'];
    assert.deepEqual([...CHAT_CONVENTION_FIELDS].sort(), [...mapped, ...Object.keys(droppedFields)].sort());
  });

  test('forwards native Gemini fields unchanged (safetySettings, cachedContent, labels, ...)', () => {
    const native = {
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
      cachedContent: 'cachedContents/abc',
      labels: { team: 'x' },
    };
    const { sent, dropped } = build(native);
    assert.deepEqual(sent, { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }], ...native });
    assert.deepEqual(dropped, []);
  });

  test('does not modify the body it is given', () => {
    const body = { model: 'pro', messages: [{ role: 'user', content: 'Hi' }], temperature: 0.5, generationConfig: { topK: 3 }, tools: [] } as ChatRequestBody;
    const copy = structuredClone(body);
    geminiAdapter.buildChatRequest(body, target());
    assert.deepEqual(body, copy);
  });
});

// Gemini generateContent bodies → OpenAI chat completions: text, thoughts, function calls, finish reasons.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { geminiAdapter } from '../../../src/providers/gemini/index.js';
import { mapFinishReason } from '../../../src/providers/gemini/response.js';
import { UpstreamFailureError, type JsonObject } from '../../../src/providers/types.js';
import { testProvider, testTarget } from '../../support/provider-fixture.js';

const TARGET = testTarget({ provider: testProvider({ kind: 'gemini' }), upstreamModel: 'gemini-2.5-pro', clientModel: 'pro' });

function parse(json: unknown): { body: JsonObject; choices: JsonObject[] } {
  const { body } = geminiAdapter.parseChatResponse(json, TARGET);
  return { body, choices: body.choices as JsonObject[] };
}

function candidate(parts: JsonObject[], finishReason = 'STOP', extra: JsonObject = {}): JsonObject {
  return { content: { role: 'model', parts }, finishReason, ...extra };
}

void describe('parseGeminiChatResponse', () => {
  test('puts thought parts in reasoning_content and the other text in content', () => {
    const { body, choices } = parse({
      responseId: 'resp-1',
      candidates: [candidate([{ text: 'Let me think. ', thought: true }, { text: 'Hmm.', thought: true }, { text: 'Four' }, { text: '.' }])],
    });
    assert.equal(body.id, 'chatcmpl-resp-1');
    assert.equal(body.object, 'chat.completion');
    assert.equal(body.model, 'pro');
    assert.ok(Number.isInteger(body.created));
    assert.deepEqual(choices, [
      { index: 0, message: { role: 'assistant', content: 'Four.', refusal: null, reasoning_content: 'Let me think. Hmm.' }, logprobs: null, finish_reason: 'stop' },
    ]);
  });

  test('turns function calls into tool_calls with generated call_ ids, JSON arguments and thought signatures', () => {
    const { choices } = parse({
      candidates: [
        candidate([
          { functionCall: { name: 'a', args: { x: 1, y: ['z'] } }, thoughtSignature: 'SIG' },
          { functionCall: { name: 'b' } },
        ]),
      ],
    });
    const message = choices[0]!.message as { content: unknown; tool_calls: JsonObject[] };
    assert.equal(message.content, null);
    assert.equal(choices[0]!.finish_reason, 'tool_calls');
    const [first, second] = message.tool_calls;
    assert.match(String(first!.id), /^call_[0-9a-f]{32}$/);
    assert.notEqual(first!.id, second!.id);
    assert.deepEqual({ ...first, id: 'x' }, { id: 'x', type: 'function', function: { name: 'a', arguments: '{"x":1,"y":["z"]}' }, extra_content: { google: { thought_signature: 'SIG' } } });
    assert.deepEqual({ ...second, id: 'x' }, { id: 'x', type: 'function', function: { name: 'b', arguments: '{}' } });
  });

  test('maps finish reasons: MAX_TOKENS → length, the safety family → content_filter, anything else → stop', () => {
    const expected: Record<string, string> = {
      STOP: 'stop',
      MAX_TOKENS: 'length',
      SAFETY: 'content_filter',
      RECITATION: 'content_filter',
      BLOCKLIST: 'content_filter',
      PROHIBITED_CONTENT: 'content_filter',
      SPII: 'content_filter',
      IMAGE_SAFETY: 'content_filter',
      MALFORMED_FUNCTION_CALL: 'stop',
      OTHER: 'stop',
      LANGUAGE: 'stop',
    };
    for (const [reason, mapped] of Object.entries(expected)) assert.equal(mapFinishReason(reason, false), mapped, reason);
    assert.equal(mapFinishReason(undefined, false), 'stop');
  });

  test("says tool_calls for a reply with function calls unless it was cut off or filtered", () => {
    assert.equal(mapFinishReason('STOP', true), 'tool_calls');
    assert.equal(mapFinishReason('OTHER', true), 'tool_calls');
    assert.equal(mapFinishReason('MAX_TOKENS', true), 'length');
    assert.equal(mapFinishReason('SAFETY', true), 'content_filter');
  });

  test('answers a prompt blocked by promptFeedback with an empty content_filter choice', () => {
    const { choices } = parse({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 } });
    assert.deepEqual(choices, [{ index: 0, message: { role: 'assistant', content: null, refusal: null }, logprobs: null, finish_reason: 'content_filter' }]);
  });

  test('gives one choice per candidate, with its own index and finish reason', () => {
    const { choices } = parse({ candidates: [candidate([{ text: 'A' }], 'STOP', { index: 0 }), candidate([{ text: 'B' }], 'MAX_TOKENS', { index: 1 })] });
    assert.deepEqual(choices.map((c) => [c.index, (c.message as JsonObject).content, c.finish_reason]), [[0, 'A', 'stop'], [1, 'B', 'length']]);
  });

  test('reports usage from usageMetadata, and null usage when it has no counts', () => {
    const parsed = geminiAdapter.parseChatResponse(
      { candidates: [candidate([{ text: 'x' }])], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 3, thoughtsTokenCount: 7 } },
      TARGET,
    );
    assert.deepEqual(parsed.usage?.tokens, { input: 10, cachedInput: 0, output: 10, reasoning: 7 });
    assert.deepEqual(parsed.body.usage, parsed.usage?.openai);
    assert.equal(geminiAdapter.parseChatResponse({ candidates: [candidate([{ text: 'x' }])] }, TARGET).usage, null);
  });

  test('maps logprobsResult to the convention’s logprobs.content', () => {
    const { choices } = parse({
      candidates: [
        candidate([{ text: 'Hi' }], 'STOP', {
          logprobsResult: {
            chosenCandidates: [{ token: 'Hi', logProbability: -0.1 }],
            topCandidates: [{ candidates: [{ token: 'Hi', logProbability: -0.1 }, { token: 'Yo', logProbability: -2.5 }] }],
          },
        }),
      ],
    });
    assert.deepEqual(choices[0]!.logprobs, {
      content: [
        {
          token: 'Hi',
          logprob: -0.1,
          bytes: [72, 105],
          top_logprobs: [
            { token: 'Hi', logprob: -0.1, bytes: [72, 105] },
            { token: 'Yo', logprob: -2.5, bytes: [89, 111] },
          ],
        },
      ],
      refusal: null,
    });
  });

  test('throws an UpstreamFailureError for an error body or something that is not a response', () => {
    assert.throws(() => parse({ error: { code: 500, message: 'Internal', status: 'INTERNAL' } }), (e: unknown) => e instanceof UpstreamFailureError && e.failure.message === 'Internal');
    assert.throws(() => parse('nope'), (e: unknown) => e instanceof UpstreamFailureError && e.failure.status === 502);
  });
});

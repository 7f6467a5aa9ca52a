// OpenAI chat requests → Gemini generateContent requests: the endpoint, messages → contents, the tool round trip.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../../src/errors.js';
import { geminiAdapter } from '../../../src/providers/gemini/index.js';
import type { ChatRequestBody, JsonObject, UpstreamTarget } from '../../../src/providers/types.js';
import { testProvider, testTarget } from '../../support/provider-fixture.js';

const PROVIDER = testProvider({
  id: 'google',
  kind: 'gemini',
  baseUrl: 'https://generativelanguage.googleapis.com',
  origin: 'https://generativelanguage.googleapis.com',
  basePath: '',
  apiKey: 'goog-secret',
});

function target(overrides: Partial<UpstreamTarget> = {}): UpstreamTarget {
  return testTarget({ provider: PROVIDER, upstreamModel: 'gemini-2.5-flash', clientModel: 'flash', maxOutputTokens: 65_536, ...overrides });
}

function chat(extra: JsonObject = {}): ChatRequestBody {
  return { model: 'flash', messages: [{ role: 'user', content: 'Hi' }], ...extra } as ChatRequestBody;
}

function build(extra: JsonObject = {}, t: UpstreamTarget = target()): { sent: JsonObject; dropped: readonly string[]; path: string; headers: Record<string, string> } {
  const request = geminiAdapter.buildChatRequest(chat(extra), t);
  return { sent: JSON.parse(request.body!) as JsonObject, dropped: request.dropped ?? [], path: request.path, headers: request.headers };
}

function assertInvalid(fn: () => unknown, param: string): void {
  assert.throws(fn, (error: unknown) => error instanceof GatewayError && error.code === 'invalid_request' && error.param === param);
}

void describe('gemini chat request: endpoint', () => {
  test('posts to /v1beta/models/{model}:generateContent with JSON and no credential (the transport signs it)', () => {
    const request = geminiAdapter.buildChatRequest(chat(), target());
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.deepEqual(request.headers, { 'content-type': 'application/json', accept: 'application/json' });
  });

  test('streams from :streamGenerateContent?alt=sse', () => {
    const { path, headers } = build({ stream: true });
    assert.equal(path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    assert.equal(headers.accept, 'text/event-stream');
  });

  test('keeps a base path, drops a models/ prefix and encodes a model name that could escape its segment', () => {
    const withBase = target({ provider: { ...PROVIDER, basePath: '/proxy' }, upstreamModel: 'models/gemini-2.5-pro' });
    assert.equal(build({}, withBase).path, '/proxy/v1beta/models/gemini-2.5-pro:generateContent');
    assert.equal(build({}, target({ upstreamModel: '../x?y:z#w' })).path, '/v1beta/models/..%2Fx%3Fy%3Az%23w:generateContent');
    assert.equal(build({}, target({ upstreamModel: 'tuned@001' })).path, '/v1beta/models/tuned@001:generateContent');
  });
});

void describe('gemini chat request: messages', () => {
  test('puts system and developer messages into systemInstruction, user → user and assistant → model', () => {
    const { sent } = build({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use metric.' }] },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      ],
    });
    assert.deepEqual(sent.systemInstruction, { parts: [{ text: 'Be brief.' }, { text: 'Use metric.' }] });
    assert.deepEqual(sent.contents, [
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'model', parts: [{ text: 'Hello!' }] },
      { role: 'user', parts: [{ text: 'Weather?' }] },
    ]);
  });

  test('merges consecutive turns of one role and skips empty messages', () => {
    const { sent } = build({
      messages: [
        { role: 'user', content: 'a' },
        { role: 'user', content: '' },
        { role: 'user', content: [{ type: 'text', text: 'b' }, { type: 'text', text: '' }] },
        { role: 'assistant', content: null },
        { role: 'assistant', content: 'c' },
      ],
    });
    assert.deepEqual(sent.contents, [
      { role: 'user', parts: [{ text: 'a' }, { text: 'b' }] },
      { role: 'model', parts: [{ text: 'c' }] },
    ]);
  });

  test('sends images: data URLs inline, http(s) URLs as fileData with a MIME type guessed from the extension', () => {
    const { sent } = build({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.WEBP?size=large#x' } },
            { type: 'image_url', image_url: { url: 'https://example.com/photo' } },
            { type: 'image_url', image_url: 'https://example.com/doc.pdf' },
          ],
        },
      ],
    });
    assert.deepEqual((sent.contents as JsonObject[])[0]!.parts, [
      { text: 'Compare' },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0K' } },
      { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.WEBP?size=large#x' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/photo' } },
      { fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/doc.pdf' } },
    ]);
  });

  test('sends file parts with data URLs and input_audio inline, and lists the parts it cannot send as dropped', () => {
    const { sent, dropped } = build({
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'S' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } }] },
        {
          role: 'user',
          content: [
            { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0x' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'file', file: { file_id: 'file-123' } },
            { type: 'image_url', image_url: { url: 'ftp://example.com/x.png' } },
            { type: 'video_url', video_url: { url: 'https://example.com/v.mp4' } },
          ],
        },
      ],
    });
    assert.deepEqual(sent.systemInstruction, { parts: [{ text: 'S' }] });
    assert.deepEqual((sent.contents as JsonObject[])[0]!.parts, [
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0x' } },
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
    ]);
    assert.deepEqual(dropped, ['messages[0].content[1]', 'messages[1].content[2]', 'messages[1].content[3]', 'messages[1].content[4]']);
  });

  test('rejects a role Gemini has no place for with a 400 naming it', () => {
    assertInvalid(() => build({ messages: [{ role: 'narrator', content: 'x' }] }), 'messages[0].role');
  });
});

void describe('gemini chat request: tool round trip', () => {
  const conversation = [
    { role: 'user', content: 'Weather in Boston and Paris?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_7c3b10e8cfcc42d0993c7e7e65f5582a',
          type: 'function',
          function: { name: 'getWeather', arguments: '{"location":"Boston"}' },
          extra_content: { google: { thought_signature: 'SIG-1' } },
        },
        { id: 'call_2', type: 'function', function: { name: 'getTime', arguments: '' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_7c3b10e8cfcc42d0993c7e7e65f5582a', content: '{"temp":21,"unit":"C"}' },
    { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '10:00' }] },
    { role: 'user', content: 'Thanks' },
  ];

  test('sends assistant tool calls as functionCall parts with their thought signatures', () => {
    const { sent } = build({ messages: conversation });
    assert.deepEqual((sent.contents as JsonObject[])[1], {
      role: 'model',
      parts: [
        { functionCall: { name: 'getWeather', args: { location: 'Boston' } }, thoughtSignature: 'SIG-1' },
        { functionCall: { name: 'getTime', args: {} } },
      ],
    });
  });

  test('sends tool results as functionResponse parts named after the call with that id, in one user turn', () => {
    const { sent } = build({ messages: conversation });
    assert.deepEqual((sent.contents as JsonObject[])[2], {
      role: 'user',
      parts: [
        { functionResponse: { name: 'getWeather', response: { temp: 21, unit: 'C' } } },
        { functionResponse: { name: 'getTime', response: { content: '10:00' } } },
        { text: 'Thanks' },
      ],
    });
  });

  test('returns a parsed Gemini reply, sent back unchanged, with its signature and the names behind the generated ids', () => {
    const reply = geminiAdapter.parseChatResponse(
      { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Oslo' } }, thoughtSignature: 'SIG-X' }] }, finishReason: 'STOP' }] },
      target(),
    );
    const message = ((reply.body.choices as JsonObject[])[0]!.message) as JsonObject & { tool_calls: { id: string }[] };
    const { sent } = build({ messages: [{ role: 'user', content: 'Oslo?' }, message, { role: 'tool', tool_call_id: message.tool_calls[0]!.id, content: 'sunny' }] });
    assert.deepEqual(sent.contents, [
      { role: 'user', parts: [{ text: 'Oslo?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Oslo' } }, thoughtSignature: 'SIG-X' }] },
      { role: 'user', parts: [{ functionResponse: { name: 'weather', response: { content: 'sunny' } } }] },
    ]);
  });

  test('wraps tool results that are not a JSON object, including JSON arrays and numbers', () => {
    const messages = (content: string): JsonObject[] => [conversation[0]!, conversation[1]!, { role: 'tool', tool_call_id: 'call_2', content }];
    for (const content of ['[1,2]', '42', 'not json', '']) {
      const { sent } = build({ messages: messages(content) });
      assert.deepEqual(((sent.contents as JsonObject[])[2]!.parts as JsonObject[])[0], { functionResponse: { name: 'getTime', response: { content } } });
    }
  });

  test('rejects a tool result whose id matches no earlier tool call, naming messages[i].tool_call_id', () => {
    assertInvalid(() => build({ messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'call_unknown', content: 'r' }] }), 'messages[1].tool_call_id');
    // The call must come earlier in the conversation, not later.
    assertInvalid(() => build({ messages: [{ role: 'tool', tool_call_id: 'call_2', content: 'r' }, conversation[1]!] }), 'messages[0].tool_call_id');
  });

  test('rejects tool-call arguments that are not a JSON object with a 400 before any hold', () => {
    const bad = { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"a":' } }] };
    assertInvalid(() => build({ messages: [{ role: 'user', content: 'x' }, bad] }), 'messages[1].tool_calls[0].function.arguments');
  });

  test('maps a legacy function-role message by its name', () => {
    const { sent } = build({ messages: [{ role: 'function', name: 'lookup', content: 'found' }] });
    assert.deepEqual(sent.contents, [{ role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { content: 'found' } } }] }]);
  });
});

// OpenAI tools and tool_choice → Gemini functionDeclarations and toolConfig.functionCallingConfig.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { geminiAdapter } from '../../../src/providers/gemini/index.js';
import type { ChatRequestBody, JsonObject } from '../../../src/providers/types.js';
import { testProvider, testTarget } from '../../support/provider-fixture.js';

const TARGET = testTarget({ provider: testProvider({ kind: 'gemini', basePath: '', apiKey: 'k' }), upstreamModel: 'gemini-2.5-flash', clientModel: 'flash' });

function build(extra: JsonObject): { sent: JsonObject; dropped: readonly string[] } {
  const body = { model: 'flash', messages: [{ role: 'user', content: 'Hi' }], ...extra } as ChatRequestBody;
  const request = geminiAdapter.buildChatRequest(body, TARGET);
  return { sent: JSON.parse(request.body!) as JsonObject, dropped: request.dropped ?? [] };
}

void describe('gemini chat request: tools and tool_choice', () => {
  const tools = [
    {
      type: 'function',
      function: {
        name: 'getWeather',
        description: 'Weather for a city',
        parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false },
        strict: true,
      },
    },
    { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } },
    { type: 'function', function: { name: 'ping' } },
  ];

  test('declares functions with sanitised parameters, omitting empty or absent parameter schemas', () => {
    const { sent } = build({ tools });
    assert.deepEqual(sent.tools, [
      {
        functionDeclarations: [
          { name: 'getWeather', description: 'Weather for a city', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } },
          { name: 'now' },
          { name: 'ping' },
        ],
      },
    ]);
  });

  test('passes typeless entries through as Gemini tools and drops tool types it does not know', () => {
    const { sent, dropped } = build({ tools: [tools[2], { googleSearch: {} }, { type: 'custom', custom: { name: 'x' } }] });
    assert.deepEqual(sent.tools, [{ functionDeclarations: [{ name: 'ping' }] }, { googleSearch: {} }]);
    assert.deepEqual(dropped, ['tools[2]']);
  });

  test('maps tool_choice auto / none / required / a named function to functionCallingConfig', () => {
    const cases: [unknown, JsonObject][] = [
      ['auto', { mode: 'AUTO' }],
      ['none', { mode: 'NONE' }],
      ['required', { mode: 'ANY' }],
      [{ type: 'function', function: { name: 'getWeather' } }, { mode: 'ANY', allowedFunctionNames: ['getWeather'] }],
    ];
    for (const [choice, config] of cases) {
      assert.deepEqual(build({ tools, tool_choice: choice }).sent.toolConfig, { functionCallingConfig: config }, JSON.stringify(choice));
    }
  });

  test('expresses allowed_tools: required as ANY over the names, auto by declaring only those functions', () => {
    const allowed = (mode: string): JsonObject => ({ type: 'allowed_tools', allowed_tools: { mode, tools: [{ type: 'function', function: { name: 'now' } }] } });
    assert.deepEqual(build({ tools, tool_choice: allowed('required') }).sent.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['now'] } });
    const auto = build({ tools, tool_choice: allowed('auto') }).sent;
    assert.deepEqual(auto.tools, [{ functionDeclarations: [{ name: 'now' }] }]);
    assert.deepEqual(auto.toolConfig, { functionCallingConfig: { mode: 'AUTO' } });
  });

  test('drops a tool_choice without tools, and merges a native toolConfig over the mapped one', () => {
    const none = build({ tool_choice: 'none' });
    assert.equal(none.sent.toolConfig, undefined);
    assert.deepEqual(none.dropped, ['tool_choice']);
    const merged = build({ tools, tool_choice: 'auto', toolConfig: { retrievalConfig: { languageCode: 'en' } } }).sent;
    assert.deepEqual(merged.toolConfig, { functionCallingConfig: { mode: 'AUTO' }, retrievalConfig: { languageCode: 'en' } });
  });
});

// Which cell the Responses API reaches each upstream kind in (to-chat/index.ts responsesCellFor): native
// where the provider serves Responses, translated where it serves only chat completions and its kind
// translates Responses (openai, azure-openai, openai-compatible), none for Anthropic and Gemini (for now);
// and fallback kept to the native cell when the history carries reasoning an upstream encrypted.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openaiResponses } from '../../../../src/api/openai-responses/index.js';
import { responsesCellFor } from '../../../../src/api/openai-responses/to-chat/index.js';
import type { ResponsesBody } from '../../../../src/api/openai-responses/validate.js';
import { adapterFor } from '../../../../src/providers/registry.js';
import type { Candidate } from '../../../../src/routing/resolve-route.js';
import { testAnthropicProvider, testCompatibleProvider, testProvider } from '../../../support/provider-fixture.js';

function candidate(provider = testProvider()): Candidate {
  return { provider, adapter: adapterFor(provider.kind), weight: 1, target: { provider, upstreamModel: 'up', clientModel: 'm', maxOutputTokens: 100 } };
}

describe('responsesCellFor', () => {
  test('native where Responses is served, translated where only chat is and the kind translates it, else none', () => {
    assert.equal(responsesCellFor(candidate()), 'native');
    assert.equal(responsesCellFor(candidate(testProvider({ serves: ['chat'] }))), 'translated');
    assert.equal(responsesCellFor(candidate(testCompatibleProvider())), 'translated');
    assert.equal(responsesCellFor(candidate(testCompatibleProvider({ serves: ['chat', 'responses'] }))), 'native');
    assert.equal(responsesCellFor(candidate(testAnthropicProvider())), undefined);
    assert.equal(responsesCellFor(candidate(testProvider({ kind: 'gemini', serves: ['chat'] }))), undefined);
  });

  test('a history with encrypted reasoning binds the request to the native cell', () => {
    const body = (encrypted: string | null) => ({ model: 'm', input: [{ type: 'reasoning', summary: [], encrypted_content: encrypted }] }) as ResponsesBody;
    assert.equal(openaiResponses.historyCell!(body('gAAAAB...')), 'native');
    assert.equal(openaiResponses.historyCell!(body(null)), undefined);
  });
});

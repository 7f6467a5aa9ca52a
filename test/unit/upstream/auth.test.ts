// Each upstream attempt is signed by the transport with its provider's credential, in its kind's header.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { UpstreamRequest } from '../../../src/providers/types.js';
import { signerFor } from '../../../src/upstream/auth.js';
import { testProvider } from '../../support/provider-fixture.js';

const REQUEST: UpstreamRequest = { method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: '{}' };

describe('signerFor', () => {
  test("puts the key in each kind's header: Bearer for OpenAI-style kinds, x-api-key, api-key and x-goog-api-key", () => {
    const cases: Array<[string, Record<string, string>]> = [
      ['openai', { authorization: 'Bearer k-123' }],
      ['openai-compatible', { authorization: 'Bearer k-123' }],
      ['anthropic', { 'x-api-key': 'k-123' }],
      ['azure-openai', { 'api-key': 'k-123' }],
      ['gemini', { 'x-goog-api-key': 'k-123' }],
    ];
    for (const [kind, headers] of cases) assert.deepEqual(signerFor(testProvider({ kind, apiKey: 'k-123' })).sign(REQUEST), headers, kind);
  });

  test('signs nothing for a provider without a key (a local server that needs none)', () => {
    assert.deepEqual(signerFor(testProvider({ kind: 'openai-compatible', apiKey: '' })).sign(REQUEST), {});
  });
});

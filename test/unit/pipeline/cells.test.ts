// Which upstreams of a model a client API can reach, and the 400 when it can reach none.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../../src/errors.js';
import { routeFor } from '../../../src/pipeline/cells.js';
import { adapterFor } from '../../../src/providers/registry.js';
import type { Candidate, Route } from '../../../src/routing/resolve-route.js';
import { testAnthropicProvider, testProvider } from '../../support/provider-fixture.js';

function candidate(provider = testProvider()): Candidate {
  return { provider, adapter: adapterFor(provider.kind), weight: 1, target: { provider, upstreamModel: 'up', clientModel: 'm', maxOutputTokens: 100 } };
}
const openai = candidate();
const anthropic = candidate(testAnthropicProvider());
const route = { model: { id: 'm' }, candidates: [openai, anthropic] } as unknown as Route;
const messagesOnly = { cellFor: (c: Candidate) => (c.provider.serves.includes('messages') ? ('native' as const) : undefined) };

describe('routeFor', () => {
  test('an API without cells (chat completions, embeddings) keeps every candidate', () => {
    assert.equal(routeFor(route, {}), route);
  });

  test('keeps the candidates the API can reach, in order', () => {
    assert.deepEqual(routeFor(route, messagesOnly).candidates, [anthropic]);
  });

  test("a history bound to one cell keeps to that cell's candidates when there are any, else any cell will do", () => {
    const both = {
      cellFor: (c: Candidate) => (c.provider.serves.includes('messages') ? ('native' as const) : ('translated' as const)),
      historyCell: (body: { signed?: boolean }) => (body.signed ? ('native' as const) : undefined),
    };
    assert.equal(routeFor(route, both, {}), route, 'an unbound history: every candidate');
    assert.deepEqual(routeFor(route, both, { signed: true }).candidates, [anthropic], 'bound: no fallback to the translated cell');
    assert.deepEqual(routeFor({ ...route, candidates: [openai] }, both, { signed: true }).candidates, [openai], 'no candidate in that cell: the others');
  });

  test('none reachable: 400 model_not_supported_on_endpoint naming the endpoints the model is served on', () => {
    assert.throws(
      () => routeFor({ ...route, candidates: [openai] }, messagesOnly),
      (error: unknown) =>
        error instanceof GatewayError &&
        error.code === 'model_not_supported_on_endpoint' &&
        error.status === 400 &&
        error.message.includes('/v1/chat/completions, /v1/responses'),
    );
  });
});

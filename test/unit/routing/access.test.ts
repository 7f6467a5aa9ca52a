// One allow-list function decides both what /v1/models lists and what a call may use.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../../src/config/load.js';
import { GatewayError } from '../../../src/errors.js';
import { findUsableModel, mayUseModel, visibleModels } from '../../../src/routing/access.js';
import { orderCandidates } from '../../../src/routing/order-candidates.js';
import { UpstreamHealth } from '../../../src/routing/upstream-health.js';
import { resolveRoute } from '../../../src/routing/resolve-route.js';

const CONFIG = parseConfig(
  `providers:
  openai-main:
    kind: openai
    api_key: sk-test
  no-key:
    kind: openai
  local:
    kind: openai-compatible
    base_url: http://127.0.0.1:11434/v1
models:
  gpt-4o-mini:
    upstreams:
      - { provider: openai-main, model: gpt-4o-mini-2024-07-18 }
      - { provider: local, model: llama3.2, weight: 3 }
    price: { input: 0.15, output: 0.6 }
    max_output_tokens: 16384
  keyless:
    upstreams: [{ provider: no-key, model: gpt-4o }]
    price: { input: 2.5, output: 10 }
    max_output_tokens: 16384
  local-llama:
    upstreams: [{ provider: local, model: llama3.2 }]
    price: { input: 0, output: 0 }
    max_output_tokens: 8192
  embed:
    type: embedding
    upstreams: [{ provider: openai-main, model: text-embedding-3-small }]
    price: { input: 0.02 }
`,
  '/tmp/tollgate.yaml',
  {},
);

function notFoundBody(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.status, 404);
    return error.toBody();
  }
  return assert.fail('expected model_not_found');
}

const model = (id: string) => CONFIG.models.get(id)!;

describe('mayUseModel and visibleModels', () => {
  test('"*" allows every model; a list allows only its members', () => {
    assert.equal(mayUseModel('*', model('embed')), true);
    assert.equal(mayUseModel(['gpt-4o-mini'], model('gpt-4o-mini')), true);
    assert.equal(mayUseModel(['gpt-4o-mini'], model('embed')), false);
    assert.equal(mayUseModel([], model('gpt-4o-mini')), false);
  });

  test('allows no key a model none of whose upstreams can be called, whatever its allow-list says', () => {
    assert.equal(mayUseModel('*', model('keyless')), false);
    assert.equal(mayUseModel(['keyless'], model('keyless')), false);
  });

  test('lists only the configured, callable models the key may use, in config order', () => {
    assert.deepEqual(visibleModels(CONFIG, '*').map((m) => m.id), ['gpt-4o-mini', 'local-llama', 'embed']);
    assert.deepEqual(visibleModels(CONFIG, ['embed', 'gpt-4o-mini', 'keyless', 'not-configured']).map((m) => m.id), ['gpt-4o-mini', 'embed']);
    assert.deepEqual(visibleModels(CONFIG, []), []);
  });
});

describe('findUsableModel', () => {
  test('returns a model the key may use', () => {
    assert.equal(findUsableModel(CONFIG, ['embed'], 'embed').id, 'embed');
  });

  test('answers a forbidden model exactly like an unknown one', () => {
    const forbidden = notFoundBody(() => findUsableModel(CONFIG, ['embed'], 'gpt-4o-mini'));
    const unknown = notFoundBody(() => findUsableModel(CONFIG, '*', 'gpt-4o-mini'.replace('mini', 'maxi')));
    assert.deepEqual(forbidden, {
      error: {
        message: "The model 'gpt-4o-mini' does not exist or you do not have access to it.",
        type: 'invalid_request_error',
        param: 'model',
        code: 'model_not_found',
      },
    });
    assert.deepEqual(unknown, {
      error: {
        message: "The model 'gpt-4o-maxi' does not exist or you do not have access to it.",
        type: 'invalid_request_error',
        param: 'model',
        code: 'model_not_found',
      },
    });
  });
});

describe('resolveRoute', () => {
  test('gives the candidates in config order with their adapters and targets', () => {
    const route = resolveRoute(CONFIG, '*', 'gpt-4o-mini', 'chat');
    assert.equal(route.model.id, 'gpt-4o-mini');
    assert.deepEqual(
      route.candidates.map((c) => [c.provider.id, c.adapter.kind, c.target.upstreamModel, c.target.clientModel]),
      [
        ['openai-main', 'openai', 'gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
        ['local', 'openai-compatible', 'llama3.2', 'gpt-4o-mini'],
      ],
    );
  });

  test('refuses a chat model on the embeddings endpoint and the reverse, naming the right endpoint', () => {
    assert.throws(
      () => resolveRoute(CONFIG, '*', 'gpt-4o-mini', 'embedding'),
      (error: unknown) =>
        error instanceof GatewayError && error.code === 'invalid_request' && error.param === 'model' && error.message.includes('/v1/chat/completions'),
    );
    assert.throws(
      () => resolveRoute(CONFIG, '*', 'embed', 'chat'),
      (error: unknown) => error instanceof GatewayError && error.code === 'invalid_request' && error.message.includes('/v1/embeddings'),
    );
  });

  test('checks access before the endpoint type', () => {
    assert.throws(
      () => resolveRoute(CONFIG, ['gpt-4o-mini'], 'embed', 'chat'),
      (error: unknown) => error instanceof GatewayError && error.code === 'model_not_found',
    );
  });
});

describe('a provider without credentials', () => {
  test('a model served only by a provider whose kind needs a key it does not have answers exactly as an unknown model', () => {
    const keyless = notFoundBody(() => resolveRoute(CONFIG, '*', 'keyless', 'chat'));
    const unknown = notFoundBody(() => resolveRoute(CONFIG, '*', 'keylesz', 'chat'));
    assert.deepEqual(JSON.stringify(keyless).replace('keyless', '<id>'), JSON.stringify(unknown).replace('keylesz', '<id>'));
    notFoundBody(() => findUsableModel(CONFIG, ['keyless'], 'keyless'));
  });

  test('a keyless upstream is no candidate: the model routes to its other upstreams only', () => {
    const config = parseConfig(
      `providers:
  keyed: { kind: openai, api_key: sk-test }
  no-key: { kind: anthropic }
models:
  mixed:
    routing: weighted
    upstreams: [{ provider: no-key, model: claude }, { provider: keyed, model: gpt-4o }]
    price: { input: 1, output: 2 }
    max_output_tokens: 100
`,
      '/tmp/tollgate.yaml',
      {},
    );
    const route = resolveRoute(config, '*', 'mixed', 'chat');
    assert.deepEqual(route.candidates.map((c) => c.provider.id), ['keyed']);
    assert.deepEqual(orderCandidates(route, new UpstreamHealth()).candidates.map((c) => c.provider.id), ['keyed']);
  });

  test('lets a keyless openai-compatible provider and a provider with a key through', () => {
    assert.deepEqual(orderCandidates(resolveRoute(CONFIG, '*', 'local-llama', 'chat'), new UpstreamHealth()).candidates.map((c) => c.provider.id), ['local']);
    assert.equal(orderCandidates(resolveRoute(CONFIG, '*', 'gpt-4o-mini', 'chat'), new UpstreamHealth()).candidates.length, 2);
  });
});

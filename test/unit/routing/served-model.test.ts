// Which prices an answer served by another model than the one asked is billed at (product.md §14): that
// model's, when the config knows it — a chat model calling that upstream model on the same provider, else
// a chat model with that id — and otherwise the requested model's (undefined here), never zero.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../../src/config/load.js';
import { servedModelRates } from '../../../src/routing/served-model.js';

const CONFIG = parseConfig(
  `providers:
  a: { kind: anthropic, api_key: sk-a }
  b: { kind: openai, api_key: sk-b }
models:
  sonnet:
    upstreams: [{ provider: a, model: claude-sonnet-4-5 }]
    price: { input: 3, output: 15 }
    max_output_tokens: 1000
  opus:
    upstreams: [{ provider: a, model: claude-opus-4-6 }]
    price: { input: 5, output: 25 }
    max_output_tokens: 1000
  opus-again:
    upstreams: [{ provider: a, model: claude-opus-4-6 }]
    price: { input: 50, output: 250 }
    max_output_tokens: 1000
  gpt-5:
    upstreams: [{ provider: b, model: gpt-5-2026 }]
    price: { input: 1.25, output: 10 }
    max_output_tokens: 1000
  embed:
    type: embedding
    upstreams: [{ provider: b, model: text-embedding-3-small }]
    price: { input: 0.1 }
`,
  '/tmp/tollgate-unit.yaml',
  {},
);
const resolve = servedModelRates(CONFIG);
const rates = (id: string) => CONFIG.models.get(id)!.rates;

test('another upstream model of the same provider: the first chat model that calls it, in config order', () => {
  assert.equal(resolve('a', 'claude-sonnet-4-5', 'claude-opus-4-6'), rates('opus'));
});

test('the model asked for, an empty name, or an unknown (dated) name: the requested model keeps its prices', () => {
  assert.equal(resolve('a', 'claude-sonnet-4-5', 'claude-sonnet-4-5'), undefined);
  assert.equal(resolve('a', 'claude-sonnet-4-5', ''), undefined);
  assert.equal(resolve('a', 'claude-sonnet-4-5', 'claude-sonnet-4-5-20250929'), undefined);
});

test('an upstream model of another provider is not matched by name; a configured model id is', () => {
  assert.equal(resolve('a', 'claude-sonnet-4-5', 'gpt-5-2026'), undefined);
  assert.equal(resolve('a', 'claude-sonnet-4-5', 'gpt-5'), rates('gpt-5'));
});

test('an embedding model is never the served model of a chat answer', () => {
  assert.equal(resolve('b', 'gpt-5-2026', 'text-embedding-3-small'), undefined);
  assert.equal(resolve('b', 'gpt-5-2026', 'embed'), undefined);
});

test('one resolver per loaded config', () => {
  assert.equal(servedModelRates(CONFIG), resolve);
});

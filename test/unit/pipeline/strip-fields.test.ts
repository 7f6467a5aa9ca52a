// The one exception to pass-through: credential and endpoint fields never reach an upstream.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_STRIP_FIELDS } from '../../../src/config/schema.js';
import { stripFields } from '../../../src/pipeline/strip-fields.js';

describe('stripFields', () => {
  test('returns the body itself, uncopied, when it carries none of the fields', () => {
    const body = { model: 'm', messages: [], temperature: 0.2 };
    const result = stripFields(body, DEFAULT_STRIP_FIELDS);
    assert.equal(result.body, body);
    assert.deepEqual(result.stripped, []);
  });

  test('removes every listed field present, keeps every other one, and leaves the client body untouched', () => {
    const body = {
      model: 'm',
      api_key: 'sk-other',
      api_base: 'http://evil.example',
      base_url: 'http://evil.example/v1',
      azure_endpoint: 'https://evil.openai.azure.com',
      extra_headers: { 'x-api-key': 'k' },
      headers: { authorization: 'Bearer k' },
      organization: 'org-x',
      temperature: 0.2,
      metadata: { api_key: 'nested is a value, not a field' },
    };
    const result = stripFields(body, DEFAULT_STRIP_FIELDS);
    assert.deepEqual(result.body, { model: 'm', temperature: 0.2, metadata: { api_key: 'nested is a value, not a field' } });
    assert.deepEqual([...result.stripped].sort(), ['api_base', 'api_key', 'azure_endpoint', 'base_url', 'extra_headers', 'headers', 'organization']);
    assert.equal(body.api_key, 'sk-other', 'the original is not mutated');
  });

  test('strips only what the list names: an empty list forwards everything', () => {
    const body = { model: 'm', api_key: 'x', custom_secret: 'y' };
    assert.deepEqual(stripFields(body, ['custom_secret']).body, { model: 'm', api_key: 'x' });
    assert.equal(stripFields(body, []).body, body);
  });

  test('the default list is the documented one', () => {
    assert.deepEqual(DEFAULT_STRIP_FIELDS, ['api_key', 'api_base', 'base_url', 'azure_endpoint', 'extra_headers', 'headers', 'organization']);
  });
});

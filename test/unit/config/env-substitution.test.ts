// ${VAR} and ${VAR:-default} inside every string of the parsed YAML tree.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { MissingVariableError, substituteEnv } from '../../../src/config/env-substitution.js';

describe('substituteEnv', () => {
  test('replaces ${VAR} with the variable', () => {
    assert.equal(substituteEnv('${KEY}', { KEY: 'sk-123' }), 'sk-123');
  });

  test('replaces every reference inside a longer string', () => {
    assert.equal(substituteEnv('http://${HOST}:${PORT}/v1', { HOST: 'localhost', PORT: '8000' }), 'http://localhost:8000/v1');
  });

  test('uses the default of ${VAR:-default} when the variable is unset', () => {
    assert.equal(substituteEnv('${PORT:-8080}', {}), '8080');
  });

  test('uses the default when the variable is set but empty (shell semantics)', () => {
    assert.equal(substituteEnv('${PORT:-8080}', { PORT: '' }), '8080');
  });

  test('prefers a non-empty variable over the default', () => {
    assert.equal(substituteEnv('${PORT:-8080}', { PORT: '9090' }), '9090');
  });

  test('allows an empty default', () => {
    assert.equal(substituteEnv('${OPENAI_API_KEY:-}', {}), '');
  });

  test('keeps a default that contains colons and slashes', () => {
    assert.equal(substituteEnv('${URL:-http://127.0.0.1:11434/v1}', {}), 'http://127.0.0.1:11434/v1');
  });

  test('substitutes an empty value for ${VAR} set to the empty string', () => {
    assert.equal(substituteEnv('[${EMPTY}]', { EMPTY: '' }), '[]');
  });

  test('throws MissingVariableError naming the variable and the path', () => {
    const tree = { providers: { openai: { api_key: '${OPENAI_API_KEY}' } } };
    assert.throws(
      () => substituteEnv(tree, {}),
      (error: unknown) => {
        assert.ok(error instanceof MissingVariableError);
        assert.equal(error.variable, 'OPENAI_API_KEY');
        assert.deepEqual(error.path, ['providers', 'openai', 'api_key']);
        return true;
      },
    );
  });

  test('records array indexes in the path', () => {
    const tree = { models: { m: { upstreams: [{ model: 'a' }, { model: '${MODEL_B}' }] } } };
    assert.throws(
      () => substituteEnv(tree, {}),
      (error: unknown) => error instanceof MissingVariableError && JSON.stringify(error.path) === '["models","m","upstreams",1,"model"]',
    );
  });

  test('walks nested objects and arrays and leaves non-strings untouched', () => {
    const tree = { a: ['${X}', 1, true, null, { b: '${Y:-y}' }], c: 2.5 };
    assert.deepEqual(substituteEnv(tree, { X: 'x' }), { a: ['x', 1, true, null, { b: 'y' }], c: 2.5 });
  });

  test('does not modify the input tree', () => {
    const tree = { a: '${X}' };
    substituteEnv(tree, { X: 'x' });
    assert.deepEqual(tree, { a: '${X}' });
  });

  test('leaves a lone dollar sign and $VAR without braces alone', () => {
    assert.equal(substituteEnv('costs $5 and $HOME', { HOME: '/root' }), 'costs $5 and $HOME');
  });

  test('does not substitute recursively into a value that itself looks like a reference', () => {
    assert.equal(substituteEnv('${A}', { A: '${B}', B: 'b' }), '${B}');
  });
});

// The operations keys of tollgate.yaml (product.md §10): server.cors_origins, server.trust_proxy,
// metrics.token and log.*, with their defaults and the errors that name them.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../../../src/config/load.js';

const BASE = `providers:
  p: { kind: openai, api_key: sk-test }
models:
  m:
    upstreams: [{ provider: p, model: x }]
    price: { input: 1, output: 2 }
    max_output_tokens: 100
`;

function problemsOf(yaml: string): readonly string[] {
  try {
    parseConfig(yaml, '/etc/tollgate/tollgate.yaml', {});
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.problems;
  }
  return assert.fail('expected a ConfigError');
}

describe('operations config keys', () => {
  test('read with their values', () => {
    const config = parseConfig(
      `${BASE}server:\n  cors_origins: [https://app.example.com, "http://localhost:5173"]\nmetrics:\n  token: \${TOKEN}\nlog:\n  level: warn\n  format: pretty\n  bodies: true\n`,
      '/etc/tollgate/tollgate.yaml',
      { TOKEN: 'a-metrics-token-of-32-characters' },
    );
    assert.deepEqual(config.server.corsOrigins, ['https://app.example.com', 'http://localhost:5173']);
    assert.deepEqual(config.metrics, { token: 'a-metrics-token-of-32-characters' });
    assert.deepEqual(config.log, { level: 'warn', format: 'pretty', bodies: true });
  });

  test('a CORS origin with a path, a trailing slash or a wildcard is refused, naming the entry', () => {
    for (const origin of ['https://app.example.com/', 'https://app.example.com/app', '*', 'https://*.example.com', 'app.example.com', 'ftp://x.example.com']) {
      const problems = problemsOf(`${BASE}server:\n  cors_origins: ["${origin}"]\n`);
      assert.equal(problems.length, 1, origin);
      assert.match(problems[0]!, /^server\.cors_origins\[0\]: expected an origin/, origin);
    }
  });

  test('a metrics token shorter than 16 characters, an unknown log level or format, an unknown key under log: are errors', () => {
    assert.match(problemsOf(`${BASE}metrics:\n  token: short\n`)[0]!, /^metrics\.token: must be at least 16 characters/);
    assert.match(problemsOf(`${BASE}log:\n  level: verbose\n`)[0]!, /^log\.level: /);
    assert.match(problemsOf(`${BASE}log:\n  format: xml\n`)[0]!, /^log\.format: /);
    assert.match(problemsOf(`${BASE}log:\n  bodys: true\n`).join('\n'), /log.*bodys/);
  });

  test('server.trust_proxy: off by default; true, a number of hops or proxy addresses, also from a variable', () => {
    const trustOf = (value: string | undefined, env: NodeJS.ProcessEnv = {}) =>
      parseConfig(value === undefined ? BASE : `${BASE}server:\n  trust_proxy: ${value}\n`, '/etc/tollgate/tollgate.yaml', env).server.trustProxy;
    assert.equal(trustOf(undefined), false);
    assert.equal(trustOf('false'), false);
    assert.equal(trustOf('true'), true);
    assert.equal(trustOf('2'), 2);
    assert.equal(trustOf('0'), false, 'no hop trusted: off');
    assert.equal(trustOf('[]'), false, 'no proxy listed: off');
    assert.deepEqual(trustOf('[10.0.0.0/8, 192.168.1.20, "fd00::/8", "::1", loopback, linklocal, uniquelocal]'), [
      '10.0.0.0/8',
      '192.168.1.20',
      'fd00::/8',
      '::1',
      'loopback',
      'linklocal',
      'uniquelocal',
    ]);
    // ${VAR} leaves a string: read as it would be written in the file.
    assert.deepEqual(trustOf('${TRUST}', { TRUST: '10.0.0.1, 10.0.0.2' }), ['10.0.0.1', '10.0.0.2']);
    assert.equal(trustOf('${TRUST}', { TRUST: 'true' }), true);
    assert.equal(trustOf('${TRUST}', { TRUST: '1' }), 1);
    assert.equal(trustOf('${TRUST:-}'), false, 'an unset variable with an empty default: off');
  });

  test('server.trust_proxy: anything else is refused, naming the key (and the entry of a list)', () => {
    for (const address of ['10.0.0.300', '10.0.0.0/33', '::1/129', 'fe80::1%eth0', 'proxy.internal', '10.0.0.0/8x']) {
      assert.deepEqual(problemsOf(`${BASE}server:\n  trust_proxy: ["${address}"]\n`), [
        'server.trust_proxy[0]: expected an IP address, a CIDR range such as 10.0.0.0/8, or loopback, linklocal or uniquelocal',
      ], address);
    }
    for (const value of ['maybe', '1.5', 'null', '{ hops: 1 }', '[1]']) {
      assert.deepEqual(problemsOf(`${BASE}server:\n  trust_proxy: ${value}\n`), [
        'server.trust_proxy: expected false, true, a number of proxy hops, or a list of proxy addresses (IP addresses, CIDR ranges such as 10.0.0.0/8, loopback, linklocal, uniquelocal)',
      ], value);
    }
    assert.deepEqual(problemsOf(`${BASE}server:\n  trust_proxy: -1\n`), ['server.trust_proxy: expected a number of proxy hops, 0 or more']);
  });
});

// The operations keys of tollgate.yaml (product.md §10): server.cors_origins, metrics.token and log.*,
// with their defaults and the errors that name them.
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
});

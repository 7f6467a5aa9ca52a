// tollgate.yaml → a frozen, typed Config; every error names its key path or missing variable.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, formatPath, loadConfig, parseConfig } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/types.js';
import { testProvider } from '../../support/provider-fixture.js';

const CONFIG_PATH = '/etc/tollgate/tollgate.yaml';
const EXAMPLE = fileURLToPath(new URL('../../../tollgate.example.yaml', import.meta.url));

const PROVIDERS = `providers:
  openai-main:
    kind: openai
    api_key: sk-test-key
`;

const CHAT_MODEL = `models:
  gpt-4o-mini:
    upstreams:
      - provider: openai-main
        model: gpt-4o-mini
    price: { input: 0.15, output: 0.60, cached_input: 0.075 }
    max_output_tokens: 16384
`;

const MINIMAL = PROVIDERS + CHAT_MODEL;

function parse(yaml: string, env: NodeJS.ProcessEnv = {}): Config {
  return parseConfig(yaml, CONFIG_PATH, env);
}

/** The problems a ConfigError lists (fails if the config parses). */
function problemsOf(yaml: string, env: NodeJS.ProcessEnv = {}): readonly string[] {
  try {
    parse(yaml, env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
    assert.equal(error.file, CONFIG_PATH);
    return error.problems;
  }
  assert.fail('expected a ConfigError');
}

describe('parseConfig: a valid file', () => {
  test('reads providers and models into typed maps', () => {
    const config = parse(MINIMAL);
    assert.deepEqual([...config.providers.keys()], ['openai-main']);
    assert.deepEqual([...config.models.keys()], ['gpt-4o-mini']);
    const model = config.models.get('gpt-4o-mini')!;
    assert.equal(model.type, 'chat');
    assert.equal(model.routing, 'fallback');
    assert.deepEqual(model.upstreams, [{ provider: 'openai-main', model: 'gpt-4o-mini', weight: 1 }]);
    assert.equal(model.maxOutputTokens, 16_384);
    assert.equal(model.contextWindow, undefined);
  });

  test('converts prices to exact nano-dollar rates per 1M tokens', () => {
    const model = parse(MINIMAL).models.get('gpt-4o-mini')!;
    // cache_write (and cache_write_1h after it) default to the input price.
    assert.deepEqual(model.rates, { input: 150_000_000n, output: 600_000_000n, cachedInput: 75_000_000n, cacheWrite: 150_000_000n, cacheWrite1h: 150_000_000n });
    assert.deepEqual(model.displayPrice, { input: 0.15, output: 0.6, cached_input: 0.075 });
  });

  test('prices cached input at the input price when cached_input is not given', () => {
    const yaml = MINIMAL.replace('price: { input: 0.15, output: 0.60, cached_input: 0.075 }', 'price: { input: 3, output: 15 }');
    assert.deepEqual(parse(yaml).models.get('gpt-4o-mini')!.rates, {
      input: 3_000_000_000n,
      output: 15_000_000_000n,
      cachedInput: 3_000_000_000n,
      cacheWrite: 3_000_000_000n,
      cacheWrite1h: 3_000_000_000n,
    });
  });

  test('accepts a price written as a decimal string with 9 decimals', () => {
    const yaml = MINIMAL.replace('input: 0.15,', 'input: "0.000000001",');
    assert.equal(parse(yaml).models.get('gpt-4o-mini')!.rates.input, 1n);
  });

  test('applies the documented defaults', () => {
    const config = parse(MINIMAL);
    assert.deepEqual(config.server, {
      host: '127.0.0.1',
      port: 8080,
      shutdownGraceSeconds: 30,
      maxBodyBytes: 33_554_432,
      maxUpstreamBodyBytes: 33_554_432,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 300_000,
      keepAliveTimeoutMs: 72_000,
      writeStallMs: 30_000,
      corsOrigins: [],
      trustProxy: false,
    });
    assert.deepEqual(config.billing, { holdTtlSeconds: 600, sweepIntervalSeconds: 30, holdMode: 'full', growingStepTokens: 1024, idempotencyMaxBytes: 1_048_576 });
    assert.deepEqual(config.metrics, { token: undefined });
    assert.deepEqual(config.log, { level: undefined, format: undefined, bodies: false });
    assert.equal(config.database, `sqlite:${resolve('/etc/tollgate', 'data/tollgate.db')}`);
    const provider = config.providers.get('openai-main')!;
    assert.deepEqual(provider, testProvider({ id: 'openai-main', kind: 'openai', apiKey: 'sk-test-key' }));
    assert.deepEqual(config.warnings, []);
    assert.equal(config.path, CONFIG_PATH);
  });

  test('reads explicit resilience settings', () => {
    const yaml = `providers:
  local:
    kind: openai-compatible
    base_url: http://10.0.0.5:8000/v1/
    retries: 3
    cooldown: { failures: 5, seconds: 10 }
    timeouts: { connect_ms: 100, first_byte_ms: 200, idle_ms: 300, total_ms: 400 }
    on_client_disconnect: drain
    drain_max_concurrent: 4
${CHAT_MODEL.replace('provider: openai-main', 'provider: local')}
server:
  host: 0.0.0.0
  port: 9000
  shutdown_grace_seconds: 5
  headers_timeout_ms: 2000
  request_timeout_ms: 60000
  keep_alive_timeout_ms: 5000
  write_stall_ms: 1500
billing:
  hold_ttl_seconds: 120
  sweep_interval_seconds: 7
`;
    const config = parse(yaml);
    const local = config.providers.get('local')!;
    assert.equal(local.baseUrl, 'http://10.0.0.5:8000/v1');
    assert.equal(local.origin, 'http://10.0.0.5:8000');
    assert.equal(local.basePath, '/v1');
    assert.equal(local.retries, 3);
    assert.deepEqual(local.cooldown, { failures: 5, seconds: 10 });
    assert.deepEqual(local.timeouts, { connectMs: 100, firstByteMs: 200, idleMs: 300, totalMs: 400 });
    assert.equal(local.onClientDisconnect, 'drain');
    assert.equal(local.drainMaxConcurrent, 4);
    assert.equal(config.server.host, '0.0.0.0');
    assert.equal(config.server.port, 9000);
    assert.equal(config.server.shutdownGraceSeconds, 5);
    assert.equal(config.server.headersTimeoutMs, 2000);
    assert.equal(config.server.requestTimeoutMs, 60_000);
    assert.equal(config.server.keepAliveTimeoutMs, 5000);
    assert.equal(config.server.writeStallMs, 1500);
    assert.deepEqual(config.billing, { holdTtlSeconds: 120, sweepIntervalSeconds: 7, holdMode: 'full', growingStepTokens: 1024, idempotencyMaxBytes: 1_048_576 });
  });

  test('returns a frozen config', () => {
    assert.ok(Object.isFrozen(parse(MINIMAL)));
  });
});

describe('parseConfig: ${VAR} substitution', () => {
  const WITH_KEY_VAR = MINIMAL.replace('api_key: sk-test-key', 'api_key: ${OPENAI_API_KEY}');

  test('replaces ${VAR} with the environment variable', () => {
    assert.equal(parse(WITH_KEY_VAR, { OPENAI_API_KEY: 'sk-from-env' }).providers.get('openai-main')!.apiKey, 'sk-from-env');
  });

  test('reports a missing variable by name and key path', () => {
    assert.deepEqual(problemsOf(WITH_KEY_VAR, {}), [
      'providers.openai-main.api_key: environment variable OPENAI_API_KEY is not set (write ${OPENAI_API_KEY:-} to allow it to be empty)',
    ]);
  });

  test('names the path of a missing variable under a model id containing dots', () => {
    const yaml = `${PROVIDERS}models:
  gpt-4.1:
    upstreams:
      - provider: openai-main
        model: \${UPSTREAM_MODEL}
    price: { input: 2, output: 8 }
    max_output_tokens: 32768
`;
    const problems = problemsOf(yaml, {});
    assert.equal(problems.length, 1);
    assert.ok(problems[0]!.startsWith('models["gpt-4.1"].upstreams[0].model: '), problems[0]);
    assert.ok(problems[0]!.includes('UPSTREAM_MODEL'), problems[0]);
  });

  test('uses the default of ${VAR:-default} when the variable is unset or empty', () => {
    const yaml = MINIMAL.replace('api_key: sk-test-key', 'api_key: ${OPENAI_API_KEY:-sk-default}');
    assert.equal(parse(yaml, {}).providers.get('openai-main')!.apiKey, 'sk-default');
    assert.equal(parse(yaml, { OPENAI_API_KEY: '' }).providers.get('openai-main')!.apiKey, 'sk-default');
    assert.equal(parse(yaml, { OPENAI_API_KEY: 'sk-set' }).providers.get('openai-main')!.apiKey, 'sk-set');
  });

  test('reads numbers that arrive as strings after substitution', () => {
    const yaml = `${MINIMAL}server:
  port: \${PORT:-8080}
  max_body_bytes: "\${MAX_BODY:-1024}"
billing:
  hold_ttl_seconds: \${HOLD_TTL}
`;
    const defaults = parse(yaml, { HOLD_TTL: '900' });
    assert.equal(defaults.server.port, 8080);
    assert.equal(defaults.server.maxBodyBytes, 1024);
    assert.equal(defaults.billing.holdTtlSeconds, 900);
    assert.equal(parse(yaml, { PORT: '9090', HOLD_TTL: '1' }).server.port, 9090);
  });

  test('reads max_output_tokens and a price from variables', () => {
    const yaml = MINIMAL.replace('max_output_tokens: 16384', 'max_output_tokens: ${MAX_OUT}').replace(
      'price: { input: 0.15, output: 0.60, cached_input: 0.075 }',
      'price: { input: "${IN_PRICE}", output: 0.6 }',
    );
    const model = parse(yaml, { MAX_OUT: '4096', IN_PRICE: '0.25' }).models.get('gpt-4o-mini')!;
    assert.equal(model.maxOutputTokens, 4096);
    assert.equal(model.rates.input, 250_000_000n);
  });

  test('rejects a variable that does not hold a number where one is needed', () => {
    const yaml = `${MINIMAL}server:
  port: \${PORT}
`;
    const problems = problemsOf(yaml, { PORT: 'eighty' });
    assert.equal(problems.length, 1);
    assert.ok(problems[0]!.startsWith('server.port: '), problems[0]);
  });
});

describe('parseConfig: unknown keys', () => {
  test('names an unknown top-level key', () => {
    assert.deepEqual(problemsOf(`${MINIMAL}telemetry: true\n`), ['telemetry: unknown key "telemetry"']);
  });

  test('names an unknown key under providers.X', () => {
    const yaml = MINIMAL.replace('api_key: sk-test-key', 'api_key: sk-test-key\n    apikey: typo');
    assert.deepEqual(problemsOf(yaml), ['providers.openai-main.apikey: unknown key "apikey"']);
  });

  test('names an unknown key under models["gpt-4.1"].price', () => {
    const yaml = `${PROVIDERS}models:
  gpt-4.1:
    upstreams: [{ provider: openai-main, model: gpt-4.1 }]
    price: { input: 2, output: 8, cache_read: 0.5 }
    max_output_tokens: 32768
`;
    assert.deepEqual(problemsOf(yaml), ['models["gpt-4.1"].price.cache_read: unknown key "cache_read"']);
  });

  test('names an unknown key inside an upstream list entry', () => {
    const yaml = MINIMAL.replace('model: gpt-4o-mini\n', 'model: gpt-4o-mini\n        priority: 1\n');
    assert.deepEqual(problemsOf(yaml), ['models.gpt-4o-mini.upstreams[0].priority: unknown key "priority"']);
  });

  test('names unknown keys in server, billing and timeouts', () => {
    const yaml = MINIMAL.replace('api_key: sk-test-key', 'api_key: sk-test-key\n    timeouts: { read_ms: 5 }') +
      'server: { hostname: x }\nbilling: { ttl: 5 }\n';
    assert.deepEqual([...problemsOf(yaml)].sort(), [
      'billing.ttl: unknown key "ttl"',
      'providers.openai-main.timeouts.read_ms: unknown key "read_ms"',
      'server.hostname: unknown key "hostname"',
    ]);
  });
});

describe('parseConfig: invalid values', () => {
  test('rejects an unknown provider kind, listing the known ones', () => {
    const yaml = MINIMAL.replace('kind: openai', 'kind: openia');
    assert.deepEqual(problemsOf(yaml), ['providers.openai-main.kind: unknown provider kind "openia" (one of: openai, openai-compatible, anthropic, gemini, azure-openai)']);
  });

  test('requires base_url for openai-compatible', () => {
    const yaml = MINIMAL.replace('kind: openai', 'kind: openai-compatible');
    assert.deepEqual(problemsOf(yaml), ['providers.openai-main.base_url: required for kind openai-compatible']);
  });

  test('rejects api_version on a kind that does not take one', () => {
    const yaml = MINIMAL.replace('api_key: sk-test-key', 'api_key: sk-test-key\n    api_version: 2024-10-21');
    assert.deepEqual(problemsOf(yaml), ['providers.openai-main.api_version: only applies to kind azure-openai']);
  });

  test('requires an output price and max_output_tokens for a chat model', () => {
    const yaml = MINIMAL.replace('price: { input: 0.15, output: 0.60, cached_input: 0.075 }', 'price: { input: 0.15 }').replace(
      '    max_output_tokens: 16384\n',
      '',
    );
    assert.deepEqual(problemsOf(yaml), [
      'models.gpt-4o-mini.price.output: required for chat models',
      'models.gpt-4o-mini.max_output_tokens: required for chat models (it sizes the hold when a request sets no max_tokens)',
    ]);
  });

  test('rejects an output price on an embedding model', () => {
    const yaml = `${PROVIDERS}models:
  text-embedding-3-small:
    type: embedding
    upstreams: [{ provider: openai-main, model: text-embedding-3-small }]
    price: { input: 0.02, output: 0.01 }
`;
    assert.deepEqual(problemsOf(yaml), ['models.text-embedding-3-small.price.output: embedding models have an input price (and an optional request fee) only']);
  });

  test('accepts an embedding model with an input price only', () => {
    const yaml = `${PROVIDERS}models:
  text-embedding-3-small:
    type: embedding
    upstreams: [{ provider: openai-main, model: text-embedding-3-small }]
    price: { input: 0.02 }
`;
    const model = parse(yaml).models.get('text-embedding-3-small')!;
    assert.equal(model.type, 'embedding');
    assert.equal(model.maxOutputTokens, undefined);
    assert.deepEqual(model.rates, { input: 20_000_000n, output: 0n, cachedInput: 20_000_000n, cacheWrite: 20_000_000n, cacheWrite1h: 20_000_000n });
    assert.deepEqual(model.displayPrice, { input: 0.02 });
  });

  test('rejects an upstream naming a provider that does not exist', () => {
    const yaml = MINIMAL.replace('- provider: openai-main', '- provider: openai-backup');
    assert.deepEqual(problemsOf(yaml), ['models.gpt-4o-mini.upstreams[0].provider: no provider "openai-backup" under providers:']);
  });

  test('rejects a price with 10 decimals, as a number or a string', () => {
    const asString = MINIMAL.replace('input: 0.15,', 'input: "0.1234567891",');
    assert.deepEqual(problemsOf(asString), [
      'models.gpt-4o-mini.price.input: must be a decimal with at most 9 decimal places (USD per 1M tokens)',
    ]);
    const asNumber = MINIMAL.replace('output: 0.60,', 'output: 0.0000000001,');
    assert.deepEqual(problemsOf(asNumber), [
      'models.gpt-4o-mini.price.output: must be a decimal with at most 9 decimal places (USD per 1M tokens)',
    ]);
  });

  test('reports a price with a huge exponent as a config problem, not a crash', () => {
    const problems = problemsOf(MINIMAL.replace('input: 0.15,', 'input: "1e999999999",'));
    assert.equal(problems.length, 1);
    assert.ok(problems[0]!.startsWith('models.gpt-4o-mini.price.input: '), problems[0]);
  });

  test('rejects a negative price', () => {
    const problems = problemsOf(MINIMAL.replace('input: 0.15,', 'input: -0.15,'));
    assert.equal(problems.length, 1);
    assert.ok(problems[0]!.startsWith('models.gpt-4o-mini.price.input: '), problems[0]);
  });

  test('rejects server timeouts that are zero, negative or fractional', () => {
    for (const key of ['headers_timeout_ms', 'request_timeout_ms', 'keep_alive_timeout_ms', 'write_stall_ms']) {
      for (const value of ['0', '-1', '1.5']) {
        const problems = problemsOf(`${MINIMAL}server:\n  ${key}: ${value}\n`);
        assert.equal(problems.length, 1, `${key}: ${value}`);
        assert.ok(problems[0]!.startsWith(`server.${key}: `), problems[0]);
      }
    }
  });

  test('rejects a headers timeout longer than the request timeout (the headers are part of the request)', () => {
    assert.deepEqual(problemsOf(`${MINIMAL}server:\n  headers_timeout_ms: 20000\n  request_timeout_ms: 15000\n`), [
      'server.headers_timeout_ms: must not exceed server.request_timeout_ms (15000)',
    ]);
    assert.equal(parse(`${MINIMAL}server:\n  headers_timeout_ms: 15000\n  request_timeout_ms: 15000\n`).server.headersTimeoutMs, 15_000);
  });

  test('rejects a model without upstreams', () => {
    const problems = problemsOf(MINIMAL.replace(/upstreams:\n(?: {6}.*\n)+/, 'upstreams: []\n'));
    assert.equal(problems.length, 1);
    assert.ok(problems[0]!.startsWith('models.gpt-4o-mini.upstreams: '), problems[0]);
  });

  test('reports schema problems before the cross-checks run', () => {
    const yaml = MINIMAL.replace('kind: openai', 'kind: nope').replace('input: 0.15,', 'input: "0.1234567891",') + 'extra: 1\n';
    assert.deepEqual(problemsOf(yaml), ['extra: unknown key "extra"']);
  });

  test('lists every cross-check problem of the file at once', () => {
    const semantic = MINIMAL.replace('kind: openai', 'kind: nope').replace('input: 0.15,', 'input: "0.1234567891",');
    assert.deepEqual(problemsOf(semantic), [
      'providers.openai-main.kind: unknown provider kind "nope" (one of: openai, openai-compatible, anthropic, gemini, azure-openai)',
      'models.gpt-4o-mini.price.input: must be a decimal with at most 9 decimal places (USD per 1M tokens)',
    ]);
  });

  test('rejects text that is not YAML, and YAML that is not a mapping', () => {
    const bad = problemsOf('providers: {\n');
    assert.equal(bad.length, 1);
    assert.ok(bad[0]!.startsWith('not valid YAML: '), bad[0]);
    assert.deepEqual(problemsOf('- a\n- b\n'), ['the file must be a YAML mapping with providers: and models:']);
    assert.deepEqual(problemsOf(''), ['the file must be a YAML mapping with providers: and models:']);
  });
});

describe('parseConfig: providers without an api_key', () => {
  test('an openai provider whose api_key is empty is not configured, and its only model is disabled naming the variable to set', () => {
    const yaml = MINIMAL.replace('api_key: sk-test-key', 'api_key: ${OPENAI_API_KEY:-}');
    const config = parse(yaml, {});
    assert.equal(config.providers.get('openai-main')!.apiKey, '');
    assert.equal(config.providers.get('openai-main')!.configured, false);
    assert.deepEqual(config.models.get('gpt-4o-mini')!.usableUpstreams, []);
    assert.deepEqual(config.disabledModels, [{ model: 'gpt-4o-mini', reason: 'provider openai-main (kind openai) has no api_key — set OPENAI_API_KEY' }]);
    assert.deepEqual(config.warnings, []);
    assert.ok(Object.isFrozen(config.disabledModels));
  });

  test('an api_key left out entirely names the key to set', () => {
    const config = parse(MINIMAL.replace('    api_key: sk-test-key\n', ''));
    assert.deepEqual(config.disabledModels, [{ model: 'gpt-4o-mini', reason: 'provider openai-main (kind openai) has no api_key — set providers.openai-main.api_key' }]);
  });

  test('the same variable set makes the provider configured and the model usable', () => {
    const config = parse(MINIMAL.replace('api_key: sk-test-key', 'api_key: ${OPENAI_API_KEY:-}'), { OPENAI_API_KEY: 'sk-set' });
    assert.equal(config.providers.get('openai-main')!.configured, true);
    assert.deepEqual(config.models.get('gpt-4o-mini')!.usableUpstreams, config.models.get('gpt-4o-mini')!.upstreams);
    assert.deepEqual(config.disabledModels, []);
  });

  test('an openai-compatible provider without an api_key is configured (vLLM and Ollama need none)', () => {
    const yaml = MINIMAL.replace('kind: openai\n    api_key: sk-test-key', 'kind: openai-compatible\n    base_url: http://127.0.0.1:11434/v1');
    const config = parse(yaml);
    assert.deepEqual(config.warnings, []);
    assert.deepEqual(config.disabledModels, []);
    assert.equal(config.providers.get('openai-main')!.apiKey, '');
    assert.equal(config.providers.get('openai-main')!.configured, true);
  });

  test('a model with a keyed upstream stays usable; the keyless provider it skips is one warning', () => {
    const yaml = `${PROVIDERS}  claude:
    kind: anthropic
    api_key: \${ANTHROPIC_API_KEY:-}
models:
  mixed:
    upstreams: [{ provider: claude, model: claude-sonnet-4-5 }, { provider: openai-main, model: gpt-4o }]
    price: { input: 1, output: 2 }
    max_output_tokens: 100
  also-mixed:
    upstreams: [{ provider: openai-main, model: gpt-4o }, { provider: claude, model: claude-haiku }]
    price: { input: 1, output: 2 }
    max_output_tokens: 100
`;
    const config = parse(yaml);
    assert.deepEqual(config.models.get('mixed')!.usableUpstreams, [{ provider: 'openai-main', model: 'gpt-4o', weight: 1 }]);
    assert.deepEqual(config.disabledModels, []);
    assert.deepEqual(config.warnings, [
      'provider claude (kind anthropic) has no api_key — set ANTHROPIC_API_KEY; models mixed, also-mixed skip it and use only their other upstreams',
    ]);
  });

  test('a model all of whose providers lack a key names each of them', () => {
    const yaml = `providers:
  azure: { kind: azure-openai, base_url: https://r.openai.azure.com, api_key: "\${AZURE_KEY:-}" }
  gem: { kind: gemini, api_key: "\${GEMINI_KEY:-}" }
models:
  both:
    upstreams: [{ provider: azure, model: dep }, { provider: gem, model: gemini-2.5-flash }, { provider: azure, model: dep2 }]
    price: { input: 1, output: 2 }
    max_output_tokens: 100
`;
    assert.deepEqual(parse(yaml).disabledModels, [
      { model: 'both', reason: 'provider azure (kind azure-openai) has no api_key — set AZURE_KEY; provider gem (kind gemini) has no api_key — set GEMINI_KEY' },
    ]);
  });
});

describe('parseConfig: database URL', () => {
  const withDatabase = (url: string) => `${MINIMAL}database: "${url}"\n`;

  test("resolves a relative sqlite path against the config file's directory", () => {
    assert.equal(parse(withDatabase('sqlite:./data/tollgate.db')).database, 'sqlite:/etc/tollgate/data/tollgate.db');
    assert.equal(parse(withDatabase('sqlite:db/x.sqlite')).database, 'sqlite:/etc/tollgate/db/x.sqlite');
    assert.equal(parse(withDatabase('sqlite:../shared/x.db')).database, 'sqlite:/etc/shared/x.db');
  });

  test('keeps an absolute sqlite path, also in the sqlite:/// form', () => {
    assert.equal(parse(withDatabase('sqlite:/var/lib/tollgate.db')).database, 'sqlite:/var/lib/tollgate.db');
    assert.equal(parse(withDatabase('sqlite:///var/lib/tollgate.db')).database, 'sqlite:/var/lib/tollgate.db');
  });

  test('keeps sqlite::memory:', () => {
    assert.equal(parse(withDatabase('sqlite::memory:')).database, 'sqlite::memory:');
  });

  test('keeps a postgres URL as written', () => {
    assert.equal(parse(withDatabase('postgres://user:pass@db:5432/tollgate')).database, 'postgres://user:pass@db:5432/tollgate');
    assert.equal(parse(withDatabase('postgresql://db/tollgate')).database, 'postgresql://db/tollgate');
  });

  test('rejects anything else', () => {
    assert.deepEqual(problemsOf(withDatabase('mysql://db/tollgate')), ['database: expected sqlite:PATH or postgres://..., got "mysql://db/tollgate"']);
    assert.deepEqual(problemsOf(withDatabase('./data/tollgate.db')), ['database: expected sqlite:PATH or postgres://..., got "./data/tollgate.db"']);
    assert.deepEqual(problemsOf(withDatabase('sqlite:')), ['database: sqlite: needs a file path, e.g. sqlite:./data/tollgate.db']);
  });
});

describe('loadConfig', () => {
  test('parses the shipped tollgate.example.yaml with an empty environment', () => {
    const config = loadConfig(EXAMPLE, {});
    assert.deepEqual([...config.providers.keys()], ['openai', 'anthropic', 'gemini', 'azure', 'local']);
    assert.deepEqual([...config.models.keys()], [
      'gpt-4o-mini',
      'o4-mini',
      'claude-sonnet',
      'gemini-flash',
      'gpt-4o',
      'text-embedding-3-small',
      'gemini-embedding',
      'local-llama',
      'local-embed',
    ]);
    const azure = config.providers.get('azure')!;
    assert.equal(azure.apiVersion, '2024-10-21');
    assert.deepEqual(config.models.get('gpt-4o')!.upstreams.map((u) => u.provider), ['azure', 'openai']);
    assert.equal(config.database, `sqlite:${resolve(EXAMPLE, '..', 'data/tollgate.db')}`);
    const local = config.providers.get('local')!;
    assert.equal(local.baseUrl, 'http://127.0.0.1:11434/v1');
    assert.equal(local.origin, 'http://127.0.0.1:11434');
    assert.equal(local.basePath, '/v1');
    assert.equal(config.models.get('local-llama')!.upstreams[0]!.model, 'llama3.2');
    assert.equal(config.models.get('local-embed')!.upstreams[0]!.model, 'nomic-embed-text');
    assert.deepEqual(config.models.get('o4-mini')!.rates, {
      input: 1_100_000_000n,
      output: 4_400_000_000n,
      cachedInput: 275_000_000n,
      cacheWrite: 1_100_000_000n,
      cacheWrite1h: 1_100_000_000n,
      tierMultipliers: new Map([['flex', 500_000_000n]]),
    });
    assert.deepEqual([...config.models.get('claude-sonnet')!.rates.perCall!], [['web_search', 10_000_000n]]);
    // A fresh install without any provider key: only the local models are offered.
    assert.deepEqual(
      config.disabledModels.map((d) => d.model),
      ['gpt-4o-mini', 'o4-mini', 'claude-sonnet', 'gemini-flash', 'gpt-4o', 'text-embedding-3-small', 'gemini-embedding'],
    );
    assert.equal(config.disabledModels.find((d) => d.model === 'gpt-4o')!.reason, 'provider azure (kind azure-openai) has no api_key — set AZURE_OPENAI_API_KEY; provider openai (kind openai) has no api_key — set OPENAI_API_KEY');
    assert.deepEqual(config.warnings, []);
  });

  test('reads a file and resolves its relative sqlite path against its directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-config-'));
    try {
      const file = join(dir, 'custom.yaml');
      writeFileSync(file, `${MINIMAL}database: sqlite:state/t.db\n`);
      const config = loadConfig(file, {});
      assert.equal(config.path, file);
      assert.equal(config.database, `sqlite:${join(dir, 'state/t.db')}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('reports a file that cannot be read', () => {
    const missing = join(tmpdir(), 'tollgate-does-not-exist', 'tollgate.yaml');
    assert.throws(
      () => loadConfig(missing, {}),
      (error: unknown) =>
        error instanceof ConfigError && error.file === missing && error.problems.length === 1 && error.problems[0]!.startsWith('cannot read the file: '),
    );
  });
});

describe('formatPath', () => {
  test('joins identifiers with dots, indexes in brackets and quotes keys with dots', () => {
    assert.equal(formatPath(['models', 'gpt-4.1', 'price', 'output']), 'models["gpt-4.1"].price.output');
    assert.equal(formatPath(['models', 'm', 'upstreams', 0, 'provider']), 'models.m.upstreams[0].provider');
    assert.equal(formatPath([]), '(top level)');
  });
});

describe('parseConfig: admin.token', () => {
  const ADMIN = 'admin:\n  token: ${TOLLGATE_ADMIN_TOKEN:-}\n';
  const LONG = 'a'.repeat(32);

  test('is off when absent, empty or an unset variable with an empty default', () => {
    assert.equal(parse(MINIMAL).admin.token, undefined);
    assert.equal(parse(MINIMAL + ADMIN).admin.token, undefined);
    assert.equal(parse(MINIMAL + ADMIN, { TOLLGATE_ADMIN_TOKEN: '' }).admin.token, undefined);
  });

  test('takes a token of 32 characters or more', () => {
    assert.equal(parse(MINIMAL + ADMIN, { TOLLGATE_ADMIN_TOKEN: LONG }).admin.token, LONG);
  });

  test('refuses a shorter token, naming the key and not the value', () => {
    const problems = problemsOf(MINIMAL + ADMIN, { TOLLGATE_ADMIN_TOKEN: 'x'.repeat(31) });
    assert.deepEqual(problems, ['admin.token: must be at least 32 characters (it has 31); e.g. openssl rand -hex 32']);
  });

  test('refuses unknown keys under admin:', () => {
    assert.ok(problemsOf(`${MINIMAL}admin:\n  tokn: x\n`).some((p) => p.includes('admin') && p.includes('tokn')));
  });
});

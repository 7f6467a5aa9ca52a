// End to end: the `tollgate` command line (product.md §2) against the same config and database as a
// running `tollgate serve`, so every change a command makes is checked through the HTTP API at once.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { mockConfig, runCli } from '../support/gateway-process.js';
import type { MockUpstream } from '../support/mock-upstream.js';
import { assertChatOk, assertErrorResponse, call, closedPort, extendConfig, parseJsonOutput, postChat, startE2E, stopE2E, type E2E, type Json } from '../support/e2e.js';
import { assertLedgerSettled, ledgerKinds, usageRows } from '../support/ledger-check.js';
import { chatCostNano, usdToNano } from '../support/money.js';

const SECRET = 'sk-mock-upstream-secret';
const KEY_FIELDS = [
  'account_id',
  'allowed_models',
  'available',
  'balance',
  'budget_resets_at',
  'budget_used',
  'clamp_max_tokens',
  'created_at',
  'credit_left',
  'credit_limit',
  'expires_at',
  'held',
  'id',
  'limits',
  'metadata',
  'name',
  'prefix',
  'spent',
  'status',
];
const USAGE_FIELDS = [
  'attempts',
  'cache_write_tokens',
  'cached_input_tokens',
  'cost',
  'duration_ms',
  'endpoint',
  'error_code',
  'error_message',
  'first_token_ms',
  'input_tokens',
  'key_id',
  'model',
  'output_tokens',
  'provider',
  'reasoning_tokens',
  'request_id',
  'session_id',
  'status',
  'time',
  'upstream_model',
  'usage_source',
];
const ALL_MODELS = ['embed-test', 'gpt-locked', 'gpt-reasoning', 'gpt-test'];
const messages = [{ role: 'user', content: 'Hello' }];

describe('tollgate CLI', () => {
  let e: E2E;
  const tempDirs: string[] = [];

  /** A fresh directory holding `tollgate.yaml` with `text` ({{DB}} → a database inside that directory). */
  function configDir(text: string): { dir: string; path: string } {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-cli-'));
    tempDirs.push(dir);
    const path = join(dir, 'tollgate.yaml');
    writeFileSync(path, text.replaceAll('{{DB}}', 'sqlite:./data/tollgate.db'));
    return { dir, path };
  }

  const mockYaml = (mock: MockUpstream) => mockConfig(mock);

  // Keys the tests below use, issued up front in parallel (each CLI run is a process start).
  const keys: Record<string, Json> = {};

  before(async () => {
    e = await startE2E(mockYaml);
    const specs: Array<[string, string]> = [
      ['listed', '3'],
      ['shown', '2'],
      ['topped', '0.1'],
      ['models', '1'],
      ['doomed', '1'],
      ['usage', '1'],
    ];
    const created = await Promise.all(specs.map(([name, balance]) => createKey(['--name', name, '--balance', balance])));
    for (const key of created) keys[key.name] = key;
  });
  after(async () => {
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
    await stopE2E(e);
  });

  async function createKey(args: string[]): Promise<Json> {
    return parseJsonOutput(await e.gw.cli(['keys', 'create', ...args, '--json']), 'keys create --json');
  }

  test('keys create --json prints one key object with the secret, and the key works at once', async () => {
    const [key, all] = await Promise.all([
      createKey(['--name', 'cli-a', '--balance', '1.25', '--models', 'gpt-test,embed-test']),
      createKey(['--name', 'cli-all', '--balance', '0']),
    ]);
    assert.deepEqual(Object.keys(key).sort(), [...KEY_FIELDS, 'key'].sort());
    assert.equal(key.name, 'cli-a');
    assert.equal(key.balance, 1.25);
    assert.equal(key.held, 0);
    assert.equal(key.available, 1.25);
    assert.deepEqual(key.allowed_models, ['gpt-test', 'embed-test']);
    assert.equal(key.status, 'active');
    assert.match(key.key, /^tg-/);
    assert.ok(key.key.startsWith(key.prefix), 'the prefix is the start of the secret');
    assert.ok(key.prefix.length < key.key.length);
    assert.ok(!Number.isNaN(Date.parse(key.created_at)), 'created_at is a time');
    const res = await call(e.gw, 'GET', '/key', { key: key.key });
    assert.equal(res.status, 200);
    assert.equal(res.json.data.id, key.id);
    assert.equal(res.json.data.balance, 1.25);

    assert.equal(all.allowed_models, '*');
    assert.equal(all.balance, 0);
  });

  test('keys list --json is an array of key objects that never shows a secret again', async () => {
    const key = keys.listed;
    const list = parseJsonOutput<Json[]>(await e.gw.cli(['keys', 'list', '--json']), 'keys list --json');
    assert.ok(Array.isArray(list));
    const entry = list.find((k) => k.id === key.id);
    assert.ok(entry, 'the new key is listed');
    assert.deepEqual(Object.keys(entry).sort(), KEY_FIELDS);
    const { key: _secret, ...withoutSecret } = key;
    assert.deepEqual(entry, withoutSecret);
    assert.ok(!JSON.stringify(list).includes(key.key), 'no secret in the listing');
  });

  test('keys show ID --json is the key object with its recent usage', async () => {
    const key = keys.shown;
    const res = await postChat(e.gw, key.key, { model: 'gpt-test', messages });
    assertChatOk(res, 'gpt-test');
    const shown = parseJsonOutput(await e.gw.cli(['keys', 'show', key.id, '--json']), 'keys show --json');
    assert.deepEqual(Object.keys(shown).sort(), [...KEY_FIELDS, 'recent_usage'].sort());
    assert.equal(shown.id, key.id);
    assert.equal(usdToNano(shown.balance), 2_000_000_000 - chatCostNano(11, 7));
    assert.equal(shown.recent_usage.length, 1);
    const row = shown.recent_usage[0];
    assert.deepEqual(Object.keys(row).sort(), USAGE_FIELDS);
    assert.equal(row.request_id, res.headers.get('x-request-id'));
    assert.equal(usdToNano(row.cost), chatCostNano(11, 7));

    const missing = await e.gw.cli(['keys', 'show', 'key_does_not_exist', '--json']);
    assert.notEqual(missing.code, 0);
    assert.equal(missing.stdout, '', 'nothing on stdout for a failed command');
    assert.match(missing.stderr, /key_does_not_exist/);
  });

  test('keys topup ID 2.5 --json raises the balance by exactly 2.5 USD with a ledger entry', async () => {
    const key = keys.topped;
    const before = e.gw.audit(key.id);
    const topped = parseJsonOutput(await e.gw.cli(['keys', 'topup', key.id, '2.5', '--json']), 'keys topup --json');
    assert.deepEqual(Object.keys(topped).sort(), KEY_FIELDS);
    assert.equal(usdToNano(topped.balance), usdToNano(0.1) + 2_500_000_000);
    assert.equal(topped.balance, 2.6);
    const after = assertLedgerSettled(e.gw, key.id);
    assert.equal(after.balance - before.balance, 2_500_000_000);
    assert.deepEqual(ledgerKinds(e.gw, key.id), ['topup', 'topup']);
    const res = await call(e.gw, 'GET', '/key', { key: key.key });
    assert.equal(res.json.data.balance, 2.6, 'the running gateway sees the top-up at once');

    const bad = await e.gw.cli(['keys', 'topup', key.id, '-1', '--json']);
    assert.notEqual(bad.code, 0, 'a negative top-up is refused');
    assert.equal(e.gw.audit(key.id).balance, after.balance);
  });

  test('keys set-models ID gpt-test limits the key at once; --all-models lifts the limit', async () => {
    const key = keys.models;
    const restricted = await e.gw.cli(['keys', 'set-models', key.id, 'gpt-test']);
    assert.equal(restricted.code, 0, restricted.stderr);
    const list = await call(e.gw, 'GET', '/models', { key: key.key });
    assert.deepEqual(
      list.json.data.map((m: Json) => m.id),
      ['gpt-test'],
    );
    const embed = await call(e.gw, 'POST', '/embeddings', { key: key.key, body: { model: 'embed-test', input: 'x' } });
    assertErrorResponse(embed, 404, 'model_not_found');

    const lifted = await e.gw.cli(['keys', 'set-models', key.id, '--all-models']);
    assert.equal(lifted.code, 0, lifted.stderr);
    const all = await call(e.gw, 'GET', '/models', { key: key.key });
    assert.deepEqual(all.json.data.map((m: Json) => m.id).sort(), ALL_MODELS);
    const shown = parseJsonOutput(await e.gw.cli(['keys', 'show', key.id, '--json']), 'keys show --json');
    assert.equal(shown.allowed_models, '*');

    const unknown = await e.gw.cli(['keys', 'set-models', key.id, 'no-such-model']);
    assert.notEqual(unknown.code, 0, 'an unknown model id is refused');
    assert.match(unknown.stderr, /no-such-model/);
  });

  test('keys revoke makes the key fail with 401 at once while its history stays', async () => {
    const key = keys.doomed;
    const ok = await postChat(e.gw, key.key, { model: 'gpt-test', messages });
    assertChatOk(ok, 'gpt-test');
    const revoked = await e.gw.cli(['keys', 'revoke', key.id]);
    assert.equal(revoked.code, 0, revoked.stderr);
    const refused = await postChat(e.gw, key.key, { model: 'gpt-test', messages });
    assertErrorResponse(refused, 401, 'invalid_api_key');
    const [shown, rows] = await Promise.all([e.gw.cli(['keys', 'show', key.id, '--json']), usageRows(e.gw, key.id)]);
    const key2 = parseJsonOutput(shown, 'keys show --json');
    assert.equal(key2.status, 'revoked');
    assert.equal(usdToNano(key2.balance), 1_000_000_000 - chatCostNano(11, 7), 'the balance stays');
    assert.equal(key2.recent_usage.length, 1, 'the history stays');
    assert.deepEqual(
      rows.map((r) => r.request_id),
      [ok.headers.get('x-request-id')],
    );
  });

  test('usage --json lists one row per request with the documented fields, filtered by --key and --since', async () => {
    const key = keys.usage;
    const first = await postChat(e.gw, key.key, { model: 'gpt-test', messages });
    const second = await postChat(e.gw, key.key, { model: 'gpt-reasoning', messages });
    assertChatOk(first, 'gpt-test');
    assertChatOk(second, 'gpt-reasoning');
    const [all, mine, future] = await Promise.all([
      e.gw.cli(['usage', '--json']),
      e.gw.cli(['usage', '--json', '--key', key.id]),
      e.gw.cli(['usage', '--json', '--since', new Date(Date.now() + 3_600_000).toISOString()]),
    ]);
    const allRows = parseJsonOutput<Json[]>(all, 'usage --json');
    const rows = parseJsonOutput<Json[]>(mine, 'usage --json --key');
    assert.deepEqual(parseJsonOutput(future, 'usage --json --since'), []);
    assert.ok(allRows.length > rows.length, 'without --key, other keys’ rows are listed too');
    assert.deepEqual(
      rows.map((r) => r.request_id),
      [first.headers.get('x-request-id'), second.headers.get('x-request-id')],
      'oldest first',
    );
    for (const row of allRows) assert.deepEqual(Object.keys(row).sort(), USAGE_FIELDS);
    const [a, b] = rows;
    assert.deepEqual(
      { ...a, time: undefined, request_id: undefined, attempts: undefined, duration_ms: undefined },
      {
        time: undefined,
        request_id: undefined,
        attempts: undefined,
        duration_ms: undefined,
        endpoint: 'chat',
        error_code: null,
        error_message: null,
        first_token_ms: null,
        session_id: null,
        key_id: key.id,
        model: 'gpt-test',
        provider: 'mock',
        upstream_model: 'gpt-4o-mini',
        status: 200,
        input_tokens: 11,
        cached_input_tokens: 0,
        cache_write_tokens: 0,
        output_tokens: 7,
        reasoning_tokens: 0,
        cost: chatCostNano(11, 7) / 1e9,
        usage_source: 'upstream',
      },
    );
    assert.equal(typeof a.duration_ms, 'number');
    assert.equal(a.attempts.length, 1);
    assert.deepEqual({ ...a.attempts[0], duration_ms: 0 }, { provider: 'mock', status: 200, duration_ms: 0 });
    const unknown = await postChat(e.gw, key.key, { model: 'no-such-model', messages });
    assert.equal(unknown.status, 404);
    const errors = parseJsonOutput<Json[]>(await e.gw.cli(['usage', '--json', '--key', key.id, '--status', 'error']), 'usage --status error');
    assert.deepEqual(
      errors.map((r) => [r.request_id, r.status, r.error_code, r.model]),
      [[unknown.headers.get('x-request-id'), 404, 'model_not_found', 'no-such-model']],
      'a refused request has its row; --status error lists only the errors',
    );
    const badStatus = await e.gw.cli(['usage', '--status', 'bad']);
    assert.equal(badStatus.code, 1);
    assert.match(badStatus.stderr, /status/);
    assert.equal(b.model, 'gpt-reasoning');
    assert.equal(b.reasoning_tokens, 16);
    assert.equal(b.output_tokens, 23);
    assert.equal(usdToNano(b.cost), chatCostNano(11, 23));
  });

  test('--config is accepted before, inside and after the subcommand', async () => {
    const path = e.gw.configPath;
    const [beforeCmd, inside, afterCmd] = await Promise.all([
      runCli(['--config', path, 'keys', 'list', '--json']),
      runCli(['keys', '--config', path, 'list', '--json']),
      runCli(['keys', 'list', '--json', '--config', path]),
    ]);
    const expected = parseJsonOutput(afterCmd, '--config after');
    assert.ok(expected.length > 0);
    assert.deepEqual(parseJsonOutput(beforeCmd, '--config before'), expected);
    assert.deepEqual(parseJsonOutput(inside, '--config inside'), expected);
  });

  test('$TOLLGATE_CONFIG is used when --config is absent', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'tollgate-cwd-'));
    tempDirs.push(cwd);
    const [viaEnv, viaFlag] = await Promise.all([
      runCli(['keys', 'list', '--json'], { cwd, env: { TOLLGATE_CONFIG: e.gw.configPath } }),
      e.gw.cli(['keys', 'list', '--json']),
    ]);
    assert.deepEqual(parseJsonOutput(viaEnv, 'keys list via $TOLLGATE_CONFIG'), parseJsonOutput(viaFlag, 'keys list via --config'));
    assert.ok(!existsSync(join(cwd, 'tollgate.yaml')), 'no ./tollgate.yaml was needed or created');
  });

  test('config check prints the models and providers with the provider api key masked', async () => {
    const [text, json] = await Promise.all([e.gw.cli(['config', 'check']), e.gw.cli(['config', 'check', '--json'])]);
    assert.equal(text.code, 0, text.stderr);
    for (const id of [...ALL_MODELS, 'mock']) assert.ok(text.stdout.includes(id), `config check shows ${id}`);
    assert.ok(!text.stdout.includes(SECRET) && !text.stderr.includes(SECRET), 'the api key is masked');
    assert.ok(!json.stdout.includes(SECRET) && !json.stderr.includes(SECRET), 'the api key is masked in --json too');
    const resolved = parseJsonOutput(json, 'config check --json');
    assert.deepEqual(resolved.models.map((m: Json) => m.id).sort(), ALL_MODELS);
  });

  test('config check warns about a provider that has no api_key', async () => {
    const { path } = configDir(
      extendConfig(mockYaml(e.mock), {
        providers: '  keyless:\n    kind: openai\n    api_key: ${TG_E2E_UNSET_KEY:-}\n',
        models: '  keyless-model:\n    type: chat\n    upstreams: [{ provider: keyless, model: gpt-4o }]\n    price: { input: 1, output: 2 }\n    max_output_tokens: 100\n',
      }),
    );
    const result = await runCli(['config', 'check', '--config', path]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout + result.stderr, /keyless/);
    assert.match(result.stderr, /warn/i);
  });

  test('config check on a file with an unknown key exits non-zero and names the key path', async () => {
    const topLevel = configDir(extendConfig(mockYaml(e.mock), { server: '  hots: 127.0.0.1' }));
    const nested = configDir(mockYaml(e.mock).replace('    timeouts: {', '    tiemouts: {'));
    const [a, b] = await Promise.all([runCli(['config', 'check', '--config', topLevel.path]), runCli(['config', 'check', '--config', nested.path])]);
    assert.notEqual(a.code, 0);
    assert.match(a.stderr, /server\.hots/);
    assert.notEqual(b.code, 0);
    assert.match(b.stderr, /providers\.mock\.tiemouts/);
    assert.equal(a.stdout, '');
  });

  test('config check names a missing ${VAR}, and ${VAR:-default} fills it', async () => {
    const missing = configDir(mockYaml(e.mock).replace(`api_key: ${SECRET}`, 'api_key: ${TG_E2E_MISSING_VAR}'));
    const defaulted = configDir(mockYaml(e.mock).replace(`api_key: ${SECRET}`, 'api_key: ${TG_E2E_MISSING_VAR:-sk-from-default-123}'));
    const [a, b] = await Promise.all([runCli(['config', 'check', '--config', missing.path]), runCli(['config', 'check', '--config', defaulted.path])]);
    assert.notEqual(a.code, 0);
    assert.match(a.stderr, /TG_E2E_MISSING_VAR/);
    assert.match(a.stderr, /providers\.mock\.api_key/);
    assert.equal(b.code, 0, b.stderr);
    assert.ok(!b.stdout.includes('sk-from-default-123'), 'the substituted key is masked too');
  });

  test('an unreachable PostgreSQL database fails the command and serve with one line that hides the password', async () => {
    const port = await closedPort();
    const { path } = configDir(mockYaml(e.mock).replace('"{{DB}}"', `"postgres://tollgate:pg-s3cret@127.0.0.1:${port}/tollgate"`));
    const [list, serve] = await Promise.all([runCli(['keys', 'list', '--json', '--config', path]), runCli(['serve', '--port', '0', '--config', path])]);
    for (const result of [list, serve]) {
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, new RegExp(`database postgres://\\*\\*\\*@127\\.0\\.0\\.1:${port}/tollgate: .*ECONNREFUSED`));
      assert.ok(!result.stderr.includes('pg-s3cret'), 'the password never appears');
    }
  });

  test('every command works on a brand-new database', async () => {
    const usageFirst = configDir(mockYaml(e.mock));
    const listFirst = configDir(mockYaml(e.mock));
    const [usage, list] = await Promise.all([
      runCli(['usage', '--json', '--config', usageFirst.path]),
      runCli(['keys', 'list', '--json', '--config', listFirst.path]),
    ]);
    assert.deepEqual(parseJsonOutput(usage, 'usage --json on a fresh database'), []);
    assert.deepEqual(parseJsonOutput(list, 'keys list --json on a fresh database'), []);
    assert.ok(existsSync(join(usageFirst.dir, 'data', 'tollgate.db')), 'the database was created beside the config');

    const created = parseJsonOutput(await runCli(['keys', 'create', '--name', 'fresh', '--balance', '1', '--json', '--config', usageFirst.path]), 'keys create');
    const results = await Promise.all([
      runCli(['keys', 'show', created.id, '--json', '--config', usageFirst.path]),
      runCli(['usage', '--json', '--key', created.id, '--config', usageFirst.path]),
      runCli(['config', 'check', '--config', usageFirst.path]),
    ]);
    assert.equal(parseJsonOutput(results[0], 'keys show').id, created.id);
    assert.deepEqual(parseJsonOutput(results[1], 'usage --key'), []);
    assert.equal(results[2].code, 0, results[2].stderr);
    const topup = await runCli(['keys', 'topup', created.id, '1', '--json', '--config', listFirst.path]);
    assert.notEqual(topup.code, 0, 'a key from another database is unknown here');
  });

  test('leaves no active hold and a consistent ledger for the keys it used', async () => {
    const keys = parseJsonOutput<Json[]>(await e.gw.cli(['keys', 'list', '--json']), 'keys list');
    for (const key of keys) assertLedgerSettled(e.gw, key.id);
  });
});


// End to end: a provider whose kind needs an api_key it does not have. A model none of whose upstreams
// can be called is not offered — GET /v1/models leaves it out and every call to it (chat, stream,
// embeddings, dry run, Idempotency-Key) answers exactly as a model that does not exist, with no hold and
// no upstream call; a model with another, keyed upstream is still offered and routes only to that one.
// `serve` (one warn line at start-up) and `config check` (text and --json) name each disabled model and
// why; GET /admin/v1/providers and the dashboard's providers page show the keyless provider as not
// configured. The real gateway process, the real openai SDK and Chromium.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { NotFoundError, type OpenAI } from 'openai';
import type { Browser } from 'playwright-core';
import { chromiumSkipReason, launchChromium, watchPage } from '../support/browser.js';
import { assertErrorResponse, call, extendConfig, postChat, sdk, startE2E, stopE2E, type E2E, type Json, type RawResponse } from '../support/e2e.js';
import { mockConfig, type CreatedKey } from '../support/gateway-process.js';
import { usageRows } from '../support/ledger-check.js';
import type { MockUpstream } from '../support/mock-upstream.js';

const ADMIN_TOKEN = 'unconfigured-test-admin-token-0123456789abcdef';
/** Never set: the provider's api_key resolves to empty, as `${OPENAI_API_KEY:-}` does on a fresh install. */
const KEY_VARIABLE = 'TG_E2E_NOKEY_OPENAI_KEY';
const MOCK_SECRET = 'sk-mock-upstream-secret';
const messages = [{ role: 'user', content: 'Hello' }];

const DISABLED_REASON = `provider nokey (kind openai) has no api_key — set ${KEY_VARIABLE}`;
const DISABLED = [
  { model: 'gpt-nokey', reason: DISABLED_REASON },
  { model: 'embed-nokey', reason: DISABLED_REASON },
];

/**
 * mockConfig plus `nokey` (kind openai, pointing at the same mock, with an api_key from an unset variable)
 * and three models: gpt-nokey and embed-nokey served only by it, and gpt-mixed whose first upstream is
 * nokey and second the keyed mock.
 */
function nokeyConfig(mock: MockUpstream): string {
  const chat = (id: string, upstreams: string) =>
    `  ${id}:\n    type: chat\n    upstreams: [${upstreams}]\n    price: { input: 1, output: 2 }\n    context_window: 8000\n    max_output_tokens: 1000\n`;
  return extendConfig(mockConfig(mock, `admin:\n  token: ${ADMIN_TOKEN}\n`), {
    providers: `  nokey:\n    kind: openai\n    base_url: ${mock.url}\n    api_key: \${${KEY_VARIABLE}:-}\n    retries: 0\n    cooldown: { failures: 1, seconds: 600 }\n`,
    models:
      chat('gpt-nokey', '{ provider: nokey, model: gpt-4o-mini }') +
      chat('gpt-mixed', '{ provider: nokey, model: gpt-4o }, { provider: mock, model: gpt-4o-mini }') +
      '  embed-nokey:\n    type: embedding\n    upstreams: [{ provider: nokey, model: text-embedding-3-small }]\n    price: { input: 0.1 }\n',
  });
}

/** The body with the model id written as <id>: a disabled model's answer must equal an unknown one's but for its name. */
function withoutModelId(res: RawResponse, id: string): { status: number; body: string } {
  return { status: res.status, body: res.text.split(id).join('<id>') };
}

describe('a model whose providers have no api_key', () => {
  let e: E2E;
  let key: CreatedKey;
  let client: OpenAI;

  before(async () => {
    assert.equal(process.env[KEY_VARIABLE], undefined, `${KEY_VARIABLE} must not be set for this test`);
    e = await startE2E(nokeyConfig);
    key = await e.gw.createKey({ name: 'nokey', balance: 5 });
    client = sdk(e.gw, key.key);
  });
  after(() => stopE2E(e));
  beforeEach(() => e.mock.reset());

  /** Runs `send` and proves it moved no money and reached no upstream. */
  async function noHoldNoCall<T>(send: () => Promise<T>): Promise<T> {
    const before = e.gw.audit(key.id);
    const result = await send();
    const after = e.gw.audit(key.id);
    assert.deepEqual([after.balance, after.held, after.activeHolds, after.captures], [before.balance, before.held, before.activeHolds, before.captures], 'no hold, no charge');
    assert.deepEqual(e.mock.requests, [], 'no upstream call');
    return result;
  }

  test('client.models.list() leaves it out and keeps the model with a keyed upstream', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    assert.deepEqual(ids.sort(), ['embed-test', 'gpt-locked', 'gpt-mixed', 'gpt-reasoning', 'gpt-test']);
    const mixed = await client.models.retrieve('gpt-mixed');
    assert.equal(mixed.owned_by, 'openai-compatible', 'owned by the kind of the upstream that serves it');
  });

  test('GET /v1/models/{id} answers 404 model_not_found with the body of a model that does not exist', async () => {
    for (const id of ['gpt-nokey', 'embed-nokey']) {
      await assert.rejects(client.models.retrieve(id), (error: unknown) => error instanceof NotFoundError && error.status === 404);
      const disabled = await call(e.gw, 'GET', `/models/${id}`, { key: key.key });
      const unknown = await call(e.gw, 'GET', '/models/no-such-model', { key: key.key });
      assertErrorResponse(disabled, 404, 'model_not_found');
      assert.deepEqual(withoutModelId(disabled, id), withoutModelId(unknown, 'no-such-model'));
    }
  });

  test('chat and embeddings through the openai SDK fail with 404 model_not_found, no hold and no upstream call', async () => {
    for (const send of [
      () => client.chat.completions.create({ model: 'gpt-nokey', messages: [{ role: 'user', content: 'Hello' }] }),
      () => client.chat.completions.create({ model: 'gpt-nokey', messages: [{ role: 'user', content: 'Hello' }], stream: true }),
      () => client.embeddings.create({ model: 'embed-nokey', input: 'hello' }),
    ]) {
      const error = await noHoldNoCall(() => send().then(() => assert.fail('expected a 404'), (error: unknown) => error));
      assert.ok(error instanceof NotFoundError, `a NotFoundError, not ${String(error)}`);
      assert.equal(error.status, 404);
      assert.equal(error.code, 'model_not_found');
      assert.equal(error.param, 'model');
    }
  });

  test('every way of calling it answers exactly as an unknown model does: plain, stream, dry run, Idempotency-Key', async () => {
    const variants: Array<{ name: string; path: string; body: Json; headers?: Record<string, string> }> = [
      { name: 'chat', path: '/chat/completions', body: { messages } },
      { name: 'chat stream', path: '/chat/completions', body: { messages, stream: true } },
      { name: 'chat dry run', path: '/chat/completions', body: { messages }, headers: { 'x-tollgate-dry-run': '1' } },
      { name: 'chat with Idempotency-Key', path: '/chat/completions', body: { messages }, headers: { 'idempotency-key': 'nokey-chat-1' } },
      { name: 'embeddings', path: '/embeddings', body: { input: 'hello' } },
      { name: 'embeddings dry run', path: '/embeddings', body: { input: 'hello' }, headers: { 'x-tollgate-dry-run': '1' } },
      { name: 'embeddings with Idempotency-Key', path: '/embeddings', body: { input: 'hello' }, headers: { 'idempotency-key': 'nokey-embed-1' } },
    ];
    for (const v of variants) {
      const id = v.path === '/embeddings' ? 'embed-nokey' : 'gpt-nokey';
      const send = (model: string, idempotency: string | undefined) =>
        call(e.gw, 'POST', v.path, {
          key: key.key,
          body: { ...v.body, model },
          headers: { ...v.headers, ...(idempotency ? { 'idempotency-key': idempotency } : {}) },
        });
      const idempotency = v.headers?.['idempotency-key'];
      const disabled = await noHoldNoCall(() => send(id, idempotency));
      const unknown = await send('no-such-model', idempotency && `${idempotency}-unknown`);
      assertErrorResponse(disabled, 404, 'model_not_found');
      assert.deepEqual(withoutModelId(disabled, id), withoutModelId(unknown, 'no-such-model'), v.name);
    }
  });

  test('a model with one keyless and one keyed upstream routes only to the keyed one, and the keyless one counts no failure', async () => {
    for (let i = 0; i < 3; i++) {
      const reply = await client.chat.completions.create({ model: 'gpt-mixed', messages: [{ role: 'user', content: `Hello ${i}` }] });
      assert.equal(reply.model, 'gpt-mixed');
    }
    const stream = await client.chat.completions.create({ model: 'gpt-mixed', messages: [{ role: 'user', content: 'Stream' }], stream: true });
    for await (const chunk of stream) void chunk;
    assert.equal(e.mock.requests.length, 4);
    for (const request of e.mock.requests) {
      assert.equal(request.body.model, 'gpt-4o-mini', 'the keyed upstream, never the keyless one');
      assert.equal(request.headers.authorization, `Bearer ${MOCK_SECRET}`);
    }
    const rows = (await usageRows(e.gw, key.id)).filter((row) => row.model === 'gpt-mixed');
    assert.equal(rows.length, 4);
    for (const row of rows) assert.deepEqual(row.attempts.map((a) => a.provider), ['mock'], 'one attempt, on the keyed provider');
    const providers: Json[] = (await call(e.gw, 'GET', '//admin/v1/providers', { key: ADMIN_TOKEN })).json.data;
    const keyless = providers.find((u) => u.provider === 'nokey' && u.upstream_model === 'gpt-4o');
    assert.ok(keyless, 'the keyless upstream of gpt-mixed is listed');
    assert.deepEqual([keyless.cooling, keyless.consecutive_failures, keyless.requests_5m, keyless.errors_5m], [false, 0, 0, 0], 'never attempted, never a failure');
  });

  test('GET /admin/v1/providers shows the keyless provider as configured: false, the others as configured: true', async () => {
    const res = await call(e.gw, 'GET', '//admin/v1/providers', { key: ADMIN_TOKEN });
    assert.equal(res.status, 200);
    const byUpstream = new Map<string, Json>(res.json.data.map((u: Json) => [`${u.provider}/${u.upstream_model}`, u]));
    for (const upstream of ['nokey/gpt-4o-mini', 'nokey/gpt-4o', 'nokey/text-embedding-3-small']) {
      assert.equal(byUpstream.get(upstream)?.configured, false, `${upstream} is not configured`);
    }
    for (const upstream of ['mock/gpt-4o-mini', 'mock/text-embedding-3-small']) assert.equal(byUpstream.get(upstream)?.configured, true, `${upstream} is configured`);
  });

  test('serve says once, in one warn line at start-up, which models are disabled and why', () => {
    // Request lines name the model a client asked for (the operator's view); besides them, one line.
    const lines = e.gw.logs.filter((line) => line.includes('gpt-nokey') && !line.includes('"msg":"request"'));
    assert.equal(lines.length, 1, `one log line names the disabled model: ${lines.join('\n')}`);
    const line = JSON.parse(lines[0]!) as Json;
    assert.equal(line.level, 40, 'at warn');
    assert.deepEqual(line.disabledModels, DISABLED);
    for (const { model } of DISABLED) assert.ok(line.msg.includes(`model ${model} disabled: ${DISABLED_REASON}`), line.msg);
    assert.ok(!line.msg.includes('gpt-mixed'), 'the model with a keyed upstream is not disabled');
  });

  test('config check prints each disabled model and why, in text and as disabled_models in --json', async () => {
    const [text, json] = await Promise.all([e.gw.cli(['config', 'check']), e.gw.cli(['config', 'check', '--json'])]);
    assert.equal(text.code, 0, text.stderr);
    for (const { model } of DISABLED) {
      const said = `model ${model} disabled: ${DISABLED_REASON}`;
      assert.equal((text.stdout + text.stderr).split(said).length - 1, 1, `"${said}" once in:\n${text.stdout}${text.stderr}`);
    }
    assert.ok(!text.stderr.includes('model gpt-mixed disabled'));
    assert.equal(json.code, 0, json.stderr);
    const resolved = JSON.parse(json.stdout) as Json;
    assert.deepEqual(resolved.disabled_models, DISABLED);
    assert.equal(resolved.providers.find((p: Json) => p.id === 'nokey').configured, false);
    assert.equal(resolved.providers.find((p: Json) => p.id === 'mock').configured, true);
  });

  test('with the variable set, config check disables nothing', async () => {
    const json = await e.gw.cli(['config', 'check', '--json'], { [KEY_VARIABLE]: 'sk-now-set-0123456789' });
    assert.equal(json.code, 0, json.stderr);
    const resolved = JSON.parse(json.stdout) as Json;
    assert.deepEqual(resolved.disabled_models, []);
    assert.equal(resolved.providers.find((p: Json) => p.id === 'nokey').configured, true);
  });
});

const skip = chromiumSkipReason();

describe('dashboard: a provider without its api_key', { skip }, () => {
  let e: E2E;
  let browser: Browser;

  before(async () => {
    e = await startE2E(nokeyConfig);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await stopE2E(e);
  });

  test('the providers page shows it as not configured, not healthy, and the key form does not suggest its models', async () => {
    const watched = await watchPage(browser, 'providers-not-configured');
    const { page } = watched;
    await page.goto(`${e.gw.origin}/dashboard/`);
    await page.fill('#token', ADMIN_TOKEN);
    await page.click('button[type=submit]');
    await page.click('[data-nav=providers]');
    const keyless = page.locator('tr[data-upstream="nokey/gpt-4o-mini"]');
    await keyless.waitFor();
    assert.equal(await keyless.getAttribute('data-configured'), 'false');
    assert.match((await keyless.textContent())!, /not configured/);
    assert.doesNotMatch((await keyless.textContent())!, /healthy/);
    const keyed = page.locator('tr[data-upstream="mock/gpt-4o-mini"]');
    assert.equal(await keyed.getAttribute('data-configured'), 'true');
    assert.match((await keyed.textContent())!, /healthy/);
    await watched.shot('providers');

    await page.click('[data-nav=keys]');
    await page.click('[data-action=create]');
    await page.uncheck('[data-dialog=create] input[name=allModels]');
    await page.locator('#model-ids option[value="gpt-test"]').waitFor({ state: 'attached' });
    const suggested = await page.locator('#model-ids option').evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value));
    assert.deepEqual(suggested, ['embed-test', 'gpt-locked', 'gpt-mixed', 'gpt-reasoning', 'gpt-test'], 'only models that can be called');
    watched.assertClean();
  });

  test('the key holder’s model list leaves it out', async () => {
    const key = await e.gw.createKey({ name: 'holder', balance: 1 });
    assert.equal((await postChat(e.gw, key.key, { model: 'gpt-test', messages })).status, 200);
    const watched = await watchPage(browser, 'keyholder-not-configured');
    const { page } = watched;
    await page.goto(`${e.gw.origin}/dashboard/`);
    await page.fill('#token', key.key);
    await page.click('button[type=submit]');
    await page.locator('table.models tbody tr').first().waitFor();
    const ids = (await page.locator('table.models tbody tr td:first-child').allTextContents()).map((id) => id.trim());
    assert.deepEqual(ids.sort(), ['embed-test', 'gpt-locked', 'gpt-mixed', 'gpt-reasoning', 'gpt-test'], 'no disabled model');
    watched.assertClean();
  });
});

// End to end: self-service for an account token's holder (docs/adr/0047-accounts.md) against the real
// gateway process and the mock upstream — the token's auth (and what it is refused), /v1/account and its
// usage, keys made, listed, capped and revoked through it and used with the real openai SDK until their
// credit limit stops them, the operator's bounds (allowed_models, the config's rate limits), another
// account's keys, and bad input that changes nothing. The operator's side (accounts, tokens) is made with
// the operations on a store opened on the gateway's SQLite file.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { APIError, AuthenticationError } from 'openai';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { openDatabase } from '../../src/open-database.js';
import { createAccount, issueAccountToken, revokeAccountToken, setAccountStatus } from '../../src/operations/accounts.js';
import { issueKey } from '../../src/operations/keys.js';
import type { Store } from '../../src/storage/types.js';
import { assertErrorResponse, call, sdk, startE2E, stopE2E, type E2E, type Json, type RawResponse } from '../support/e2e.js';
import { mockConfig } from '../support/gateway-process.js';
import { usdToNano } from '../support/money.js';

/** The operator's defaults: the most a holder may give its keys. */
const LIMITS_YAML = 'limits:\n  rpm: 600\n  tpm: 1000000\n  max_concurrent: 20\n';
const messages = [{ role: 'user' as const, content: 'hello' }];

describe('account self-service (/v1/account)', () => {
  let e: E2E;
  let config: Config;
  /** The account the tests manage: $5, its keys may use gpt-test and embed-test only. */
  let team: { id: string; token: string };
  /** Another account, with one key of its own. */
  let other: { id: string; token: string; keyId: string; key: string };

  async function withStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
    const store = await openDatabase(config.database, { busyTimeoutMs: 5_000 });
    try {
      return await work(store);
    } finally {
      await store.close();
    }
  }

  /** A request to /v1/account + path with the account token (or any other credential). */
  const account = (method: string, path: string, opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<RawResponse> =>
    call(e.gw, method, `/account${path}`, { key: opts.token ?? team.token, ...(opts.body !== undefined ? { body: opts.body } : {}), ...(opts.headers ? { headers: opts.headers } : {}) });

  async function ok(method: string, path: string, opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Json> {
    const res = await account(method, path, opts);
    assert.equal(res.status, 200, `${method} /v1/account${path}: ${res.text}`);
    assert.ok(res.headers.get('x-request-id'));
    return res.json;
  }

  /** Every key of the account, following the cursor. */
  async function allKeys(token = team.token): Promise<Json[]> {
    const keys: Json[] = [];
    let after: string | null = null;
    for (;;) {
      const page: Json = await ok('GET', `/keys?limit=2${after ? `&after=${after}` : ''}`, { token });
      keys.push(...page.data);
      if (!page.has_more) return keys;
      after = page.next_cursor;
    }
  }

  before(async () => {
    e = await startE2E((mock) => mockConfig(mock, LIMITS_YAML));
    config = loadConfig(e.gw.configPath);
    await withStore(async (store) => {
      const a = await createAccount(store, config, { name: 'team', balance: '5', allowed_models: ['gpt-test', 'embed-test'] });
      team = { id: a.id, token: (await issueAccountToken(store, a.id)).token };
      const b = await createAccount(store, config, { name: 'other', balance: '1' });
      const issued = await issueKey(store, config, { name: 'their-key', accountId: b.id });
      other = { id: b.id, token: (await issueAccountToken(store, b.id)).token, keyId: issued.key.id, key: issued.secret };
    });
  });
  after(() => stopE2E(e));

  test('the account token reads its account: the money, the operator’s bound, totals, and never the operator’s metadata', async () => {
    for (const headers of [{ authorization: `Bearer ${team.token}` }, { 'x-api-key': team.token }] as Array<Record<string, string>>) {
      const res = await call(e.gw, 'GET', '/account', { headers });
      assert.equal(res.status, 200, res.text);
      const body = res.json;
      assert.equal(body.object, 'account');
      assert.deepEqual(
        [body.id, body.name, body.status, body.personal, body.balance, body.held, body.available, body.spent],
        [team.id, 'team', 'active', false, 5, 0, 5, 0],
      );
      assert.deepEqual(body.allowed_models, ['gpt-test', 'embed-test']);
      assert.equal(body.token_prefix, team.token.slice(0, 10));
      assert.equal('metadata' in body, false);
      assert.equal('token' in body, false);
      assert.deepEqual(body.totals, { keys_active: 0, keys_revoked: 0, requests: 0, errors: 0, input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, reasoning_tokens: 0, cost: 0 });
    }
  });

  test('a key secret, a malformed token or none is 401 on /v1/account; an account token is 401 invalid_api_key on the model routes and calls no model', async () => {
    for (const credential of [other.key, 'tga-short', `tga-${'!'.repeat(43)}`, `${team.token}x`, undefined]) {
      const res = await call(e.gw, 'GET', '/account', credential === undefined ? {} : { key: credential });
      const error = assertErrorResponse(res, 401, 'invalid_account_token');
      assert.match(error.message, /tga-/);
    }
    assertErrorResponse(await call(e.gw, 'GET', '/account/keys', { headers: { 'x-api-key': other.key } }), 401, 'invalid_account_token');

    const calls = e.mock.requests.length;
    const client = sdk(e.gw, team.token);
    await assert.rejects(client.chat.completions.create({ model: 'gpt-test', messages }), (error: unknown) => {
      assert.ok(error instanceof AuthenticationError, String(error));
      assert.equal(error.code, 'invalid_api_key');
      return true;
    });
    await assert.rejects(client.embeddings.create({ model: 'embed-test', input: 'hi' }), AuthenticationError);
    for (const path of ['/key', '/models']) assertErrorResponse(await call(e.gw, 'GET', path, { key: team.token }), 401, 'invalid_api_key');
    assert.equal(e.mock.requests.length, calls, 'no upstream call');
  });

  test('a rotated token stops working at once, the new one works; a revoked one is 401', async () => {
    const { id } = await withStore((store) => createAccount(store, config, { name: 'rotating' }));
    const first = await withStore((store) => issueAccountToken(store, id));
    assert.equal((await ok('GET', '', { token: first.token })).id, id);
    const second = await withStore((store) => issueAccountToken(store, id));
    assertErrorResponse(await account('GET', '', { token: first.token }), 401, 'invalid_account_token');
    assert.equal((await ok('GET', '', { token: second.token })).id, id);
    await withStore((store) => revokeAccountToken(store, id));
    assertErrorResponse(await account('GET', '', { token: second.token }), 401, 'invalid_account_token');
  });

  test('the operator’s CLI issues the token (`accounts create`, `accounts token`): the holder reads the account with it; rotated, the old one is 401', async () => {
    const created = await e.gw.cli(['accounts', 'create', '--name', 'cli-made', '--balance', '2', '--json']);
    assert.equal(created.code, 0, created.stderr);
    const { id } = JSON.parse(created.stdout) as { id: string };
    const issue = async () => {
      const out = await e.gw.cli(['accounts', 'token', id]);
      assert.equal(out.code, 0, out.stderr);
      const token = out.stdout.split('\n')[0]!.trim();
      assert.match(token, /^tga-/);
      return token;
    };
    const first = await issue();
    const self = await ok('GET', '', { token: first });
    assert.deepEqual([self.id, self.name, self.balance], [id, 'cli-made', 2]);
    const second = await issue();
    assertErrorResponse(await account('GET', '', { token: first }), 401, 'invalid_account_token');
    assert.equal((await ok('GET', '', { token: second })).id, id);
  });

  test('a key made through /v1/account spends the account’s money until its credit limit stops it (openai SDK); GET /v1/key shows its cap and the account', async () => {
    const created = await ok('POST', '/keys', { body: { name: 'ci', credit_limit: '0.0001' } });
    assert.match(created.key, /^tg-/);
    assert.equal(created.prefix, created.key.slice(0, 10));
    assert.deepEqual([created.name, created.account_id, created.credit_limit, created.credit_left, created.spent, created.status], ['ci', team.id, 0.0001, 0.0001, 0, 'active']);
    assert.deepEqual(created.allowed_models, ['gpt-test', 'embed-test'], "the account's models by default");
    assert.deepEqual(created.limits, { rpm: 600, tpm: 1000000, max_concurrent: 20, budget: null, budget_period: null }, 'the config defaults in force');
    assert.equal('metadata' in created, false);
    assert.equal(created.balance, 5, "the account's balance: the key has none of its own");

    // A second key of the account, without a cap, spends too: the money is shared.
    const wide = await ok('POST', '/keys', { body: { name: 'wide', allowed_models: ['gpt-test'] } });
    assert.deepEqual([wide.credit_limit, wide.credit_left, wide.allowed_models], [null, null, ['gpt-test']]);
    await sdk(e.gw, wide.key).chat.completions.create({ model: 'gpt-test', messages });
    await assert.rejects(sdk(e.gw, wide.key).chat.completions.create({ model: 'gpt-reasoning', messages }), (error: unknown) => error instanceof APIError && error.status === 404);

    const client = sdk(e.gw, created.key);
    let spent = 0;
    let answered = 0;
    let refusal: APIError | undefined;
    for (let i = 0; i < 20 && !refusal; i++) {
      try {
        const completion = await client.chat.completions.create({ model: 'gpt-test', messages, max_tokens: 10 });
        spent += usdToNano((completion.usage as unknown as { cost: number }).cost);
        answered++;
      } catch (error) {
        assert.ok(error instanceof APIError, String(error));
        refusal = error;
      }
    }
    assert.ok(answered >= 1, 'answered until the cap');
    assert.ok(refusal, 'then refused');
    assert.equal(refusal.status, 402);
    assert.equal(refusal.code, 'credit_limit_reached');
    assert.ok(spent <= usdToNano('0.0001'), 'never past its credit limit');

    // The key holder's view: its cap, what is left of it, and the account it draws on.
    const own = await call(e.gw, 'GET', '/key', { key: created.key });
    assert.equal(own.status, 200, own.text);
    const data = own.json.data;
    const accountNow = await ok('GET', '');
    assert.equal(usdToNano(data.usage), spent);
    assert.equal(data.credit_limit, 0.0001);
    assert.equal(usdToNano(data.credit_left), usdToNano('0.0001') - spent);
    assert.equal(usdToNano(data.available), usdToNano('0.0001') - spent, 'what it can still hold: its credit left, below the account’s money');
    assert.deepEqual([data.account.id, data.account.name, data.account.personal], [team.id, 'team', false]);
    assert.equal(data.account.available, accountNow.available, "the account's available balance, shared with its other keys");
    const wideSpent = usdToNano((await allKeys()).find((k: Json) => k.id === wide.id).spent);
    assert.ok(wideSpent > 0);
    assert.equal(usdToNano(accountNow.spent), spent + wideSpent, 'both keys spent the account’s money');
    assert.equal(usdToNano(accountNow.available), usdToNano('5') - spent - wideSpent);
  });

  test('keys are listed (the account’s only, no secrets), capped lower, and revoked: then 401 on chat; the money stays', async () => {
    const made = await ok('POST', '/keys', { body: { name: 'to-cap', credit_limit: 1, rpm: 100, budget: '0.5', budget_period: 'day', expires_at: '30d' } });
    assert.deepEqual(made.limits, { rpm: 100, tpm: 1000000, max_concurrent: 20, budget: 0.5, budget_period: 'day' });
    assert.ok(Date.parse(made.expires_at) > Date.now());

    const keys = await allKeys();
    assert.ok(keys.some((k: Json) => k.id === made.id));
    assert.ok(keys.every((k: Json) => k.account_id === team.id), "only the account's keys");
    assert.ok(!keys.some((k: Json) => k.id === other.keyId));
    for (const k of keys) {
      assert.equal('key' in k, false, 'no secret');
      assert.equal('metadata' in k, false);
    }
    assert.deepEqual((await allKeys(other.token)).map((k: Json) => k.id), [other.keyId]);

    // Cap lowered below one request's hold: the next call is refused, no upstream call.
    const capped = await ok('PATCH', `/keys/${made.id}`, { body: { credit_limit: '0.000001', name: 'capped', rpm: 50 } });
    assert.deepEqual([capped.name, capped.credit_limit, capped.limits.rpm, capped.limits.budget], ['capped', 0.000001, 50, 0.5]);
    const calls = e.mock.requests.length;
    await assert.rejects(sdk(e.gw, made.key).chat.completions.create({ model: 'gpt-test', messages }), (error: unknown) => error instanceof APIError && error.status === 402 && error.code === 'credit_limit_reached');
    // Clearing its own rpm leaves the operator's default in force.
    assert.equal((await ok('PATCH', `/keys/${made.id}`, { body: { rpm: null } })).limits.rpm, 600);

    const before = await ok('GET', '');
    const revoked = await ok('POST', `/keys/${made.id}/revoke`);
    assert.equal(revoked.status, 'revoked');
    await assert.rejects(sdk(e.gw, made.key).chat.completions.create({ model: 'gpt-test', messages }), AuthenticationError);
    assert.equal(e.mock.requests.length, calls, 'no upstream call');
    const afterRevoke = await ok('GET', '');
    assert.deepEqual([afterRevoke.balance, afterRevoke.available], [before.balance, before.available], "revoking leaves the account's money where it is");
    assert.equal(afterRevoke.totals.keys_revoked, before.totals.keys_revoked + 1);
    assert.ok((await allKeys()).some((k: Json) => k.id === made.id && k.status === 'revoked'));
    assert.deepEqual(
      (await ok('GET', '/keys?status=revoked')).data.map((k: Json) => k.id),
      [made.id],
    );
  });

  test('never above what the operator allowed: models outside the account’s, "*", and rates above the config are 400 naming the field; nothing is created', async () => {
    const count = (await allKeys()).length;
    const refusals: Array<[unknown, string]> = [
      [{ name: 'x', allowed_models: ['gpt-locked'] }, 'allowed_models'],
      [{ name: 'x', allowed_models: ['gpt-test', 'gpt-reasoning'] }, 'allowed_models'],
      [{ name: 'x', allowed_models: '*' }, 'allowed_models'],
      [{ name: 'x', allowed_models: ['no-such-model'] }, 'allowed_models'],
      [{ name: 'x', rpm: 601 }, 'rpm'],
      [{ name: 'x', rpm: '601' }, 'rpm'],
      [{ name: 'x', tpm: 1000001 }, 'tpm'],
      [{ name: 'x', max_concurrent: 21 }, 'max_concurrent'],
    ];
    for (const [body, param] of refusals) {
      const error = assertErrorResponse(await account('POST', '/keys', { body }), 400, 'invalid_request');
      assert.equal(error.param, param, JSON.stringify(body));
    }
    const atLimit = await ok('POST', '/keys', { body: { name: 'at-limit', rpm: 600, tpm: 1000000, max_concurrent: 20, allowed_models: ['embed-test'] } });
    assert.deepEqual([atLimit.limits.rpm, atLimit.allowed_models], [600, ['embed-test']]);
    // A PATCH may not raise them either, and changes nothing when it fails.
    const error = assertErrorResponse(await account('PATCH', `/keys/${atLimit.id}`, { body: { name: 'renamed', rpm: 601 } }), 400, 'invalid_request');
    assert.equal(error.param, 'rpm');
    // An account bound to every model ("*") may give its keys any configured model.
    assert.deepEqual((await ok('POST', '/keys', { token: other.token, body: { name: 'any', allowed_models: ['gpt-locked'] } })).allowed_models, ['gpt-locked']);
    const keys = await allKeys();
    assert.equal(keys.length, count + 1, 'only the one good key was made');
    assert.equal(keys.find((k: Json) => k.id === atLimit.id).name, 'at-limit');
  });

  test('another account’s key is 404 key_not_found, word for word as a key that does not exist; its usage stays hidden', async () => {
    const missing = other.keyId.replace(/.$/, (c) => (c === '0' ? '1' : '0'));
    for (const [method, suffix, body] of [
      ['PATCH', '', { name: 'mine-now' }],
      ['POST', '/revoke', undefined],
    ] as const) {
      const theirs = await account(method, `/keys/${other.keyId}${suffix}`, body ? { body } : {});
      const unknown = await account(method, `/keys/${missing}${suffix}`, body ? { body } : {});
      assertErrorResponse(theirs, 404, 'key_not_found');
      assertErrorResponse(unknown, 404, 'key_not_found');
      assert.equal(theirs.text.replace(other.keyId, missing), unknown.text);
    }
    const still = (await allKeys(other.token))[0];
    assert.deepEqual([still.name, still.status], ['their-key', 'active']);
    await sdk(e.gw, other.key).chat.completions.create({ model: 'gpt-test', messages });
    assert.deepEqual((await ok('GET', `/usage?key_id=${other.keyId}`)).data, []);
    assert.deepEqual((await ok('GET', `/usage/summary?group_by=key&key_id=${other.keyId}`)).data, []);
    assert.equal((await ok('GET', '/usage', { token: other.token })).data.length, 1);
  });

  test('bad input is a 400 that changes nothing: no key is made, no money moves; no top-up through /v1/account', async () => {
    const before = await ok('GET', '');
    const keys = (await allKeys()).length;
    const bad: Array<[unknown, string | null]> = [
      [{ name: 'x', balance: 5 }, 'balance'],
      [{ name: 'x', metadata: { a: 'b' } }, 'metadata'],
      [{ name: 'x', clamp_max_tokens: true }, 'clamp_max_tokens'],
      [{ name: '' }, 'name'],
      [{}, 'name'],
      [{ name: 'x', credit_limit: -1 }, 'credit_limit'],
      [{ name: 'x', credit_limit: '0.0000000001' }, 'credit_limit'],
      [{ name: 'x', budget_period: 'year', budget: 1 }, 'budget_period'],
      [{ name: 'x', expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
      [{ name: 'x', rpm: 0 }, 'rpm'],
      [{ name: 'x', allowed_models: 'gpt-test' }, 'allowed_models'],
    ];
    for (const [body, param] of bad) {
      const error = assertErrorResponse(await account('POST', '/keys', { body, headers: { 'idempotency-key': `bad-${JSON.stringify(body)}` } }), 400, 'invalid_request');
      assert.equal(error.param, param, JSON.stringify(body));
    }
    assertErrorResponse(await account('POST', '/keys', { body: 'not json', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    assertErrorResponse(await account('POST', '/keys', { body: '{"name":', headers: { 'content-type': 'application/json' } }), 400, /.+/);
    for (const path of ['/topup', '/adjust']) assertErrorResponse(await account('POST', path, { body: { amount: 5 } }), 404, 'not_found');
    for (const query of ['group_by=account', 'group_by=provider', 'group_by=week', '']) {
      assertErrorResponse(await account('GET', `/usage/summary?${query}`), 400, 'invalid_request');
    }
    assertErrorResponse(await account('GET', '/usage?since=yesterday'), 400, 'invalid_request');
    assertErrorResponse(await account('GET', '/usage?account_id=x'), 400, 'invalid_request');
    const after = await ok('GET', '');
    assert.equal((await allKeys()).length, keys);
    assert.deepEqual([after.balance, after.held, after.spent], [before.balance, before.held, before.spent]);
    // An Idempotency-Key whose request failed is free again: a good request under it runs.
    const retried = await ok('POST', '/keys', { body: { name: 'x' }, headers: { 'idempotency-key': `bad-${JSON.stringify({ name: 'x', rpm: 0 })}` } });
    assert.match(retried.key, /^tg-/);
  });

  test('POST /v1/account/keys takes an Idempotency-Key scoped to the account: a replay makes no second key and shows no secret', async () => {
    const headers = { 'idempotency-key': 'make-deploy-key' };
    const first = await account('POST', '/keys', { body: { name: 'deploy', credit_limit: 2 }, headers });
    assert.equal(first.status, 200, first.text);
    const replay = await account('POST', '/keys', { body: { name: 'deploy', credit_limit: 2 }, headers });
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.json.id, first.json.id);
    assert.equal(replay.json.key, null);
    assert.match(first.json.key, /^tg-/);
    assertErrorResponse(await account('POST', '/keys', { body: { name: 'other-deploy' }, headers }), 422, 'idempotency_mismatch');
    // The same Idempotency-Key from another account is that account's own.
    const theirs = await ok('POST', '/keys', { token: other.token, body: { name: 'deploy', credit_limit: 2 }, headers });
    assert.notEqual(theirs.id, first.json.id);
    assert.equal(theirs.account_id, other.id);
    assert.equal((await allKeys()).filter((k: Json) => k.name === 'deploy').length, 1);
    // Revoke takes one too.
    const revokeHeaders = { 'idempotency-key': 'revoke-deploy' };
    assert.equal((await ok('POST', `/keys/${first.json.id}/revoke`, { headers: revokeHeaders })).status, 'revoked');
    const again = await account('POST', `/keys/${first.json.id}/revoke`, { headers: revokeHeaders });
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
  });

  test('a suspended account still reads and manages its keys; they cannot spend', async () => {
    await withStore((store) => setAccountStatus(store, team.id, 'suspended'));
    try {
      assert.equal((await ok('GET', '')).status, 'suspended');
      const made = await ok('POST', '/keys', { body: { name: 'while-suspended' } });
      await assert.rejects(sdk(e.gw, made.key).chat.completions.create({ model: 'gpt-test', messages }), (error: unknown) => error instanceof APIError && error.status === 402 && error.code === 'account_suspended');
      assert.equal((await ok('POST', `/keys/${made.id}/revoke`)).status, 'revoked');
    } finally {
      await withStore((store) => setAccountStatus(store, team.id, 'active'));
    }
  });

  test('usage rows, their summary and the totals add up to what the account spent', async () => {
    const self = await ok('GET', '');
    const spent = usdToNano(self.spent);
    assert.ok(spent > 0);

    const rows: Json[] = [];
    let after: string | null = null;
    for (;;) {
      const page: Json = await ok('GET', `/usage?limit=3${after ? `&after=${after}` : ''}`);
      assert.ok(page.data.length <= 3);
      rows.push(...page.data);
      if (!page.has_more) break;
      after = page.next_cursor;
    }
    const keyIds = new Set((await allKeys()).map((k: Json) => k.id));
    assert.ok(rows.every((r) => keyIds.has(r.key_id)), "only the account's keys' rows");
    const sum = (items: Json[]) => items.reduce((total, r) => total + usdToNano(r.cost), 0);
    assert.equal(sum(rows), spent, 'the rows cost what the account spent');
    assert.equal(usdToNano(self.totals.cost), spent);
    assert.ok(self.totals.requests >= rows.filter((r) => r.status === 200).length);
    assert.ok(self.totals.errors >= 1, 'the refusals are counted');

    for (const groupBy of ['key', 'model', 'day', 'hour', 'endpoint', 'session']) {
      const summary = await ok('GET', `/usage/summary?group_by=${groupBy}`);
      assert.equal(summary.group_by, groupBy);
      assert.equal(sum(summary.data), spent, `group_by=${groupBy}`);
    }
    const byKey = await ok('GET', '/usage/summary?group_by=key');
    for (const key of await allKeys()) {
      const group = byKey.data.find((g: Json) => g.group === key.id);
      assert.equal(usdToNano(group?.cost ?? 0), usdToNano(key.spent), `key ${key.name}`);
    }
    // The filters: one key, one model, a status, a time window.
    const ci = (await allKeys()).find((k: Json) => k.name === 'ci');
    const ciRows = (await ok('GET', `/usage?key_id=${ci.id}&limit=100`)).data;
    assert.ok(ciRows.length >= 1 && ciRows.every((r: Json) => r.key_id === ci.id));
    assert.equal(sum(ciRows), usdToNano(ci.spent));
    assert.ok((await ok('GET', '/usage?status=402&limit=100')).data.every((r: Json) => r.status === 402 && r.cost === 0));
    assert.ok((await ok('GET', '/usage?model=gpt-reasoning')).data.every((r: Json) => r.model === 'gpt-reasoning' && r.status === 404), 'the one refused call');
    assert.deepEqual((await ok('GET', '/usage?model=gpt-locked')).data, [], "another account's key called it, not this account's");
    const future = new Date(Date.now() + 86_400_000).toISOString();
    assert.deepEqual((await ok('GET', `/usage?since=${future}`)).data, []);
    assert.equal(sum((await ok('GET', `/usage/summary?group_by=model&until=${future}`)).data), spent);
  });

  test('the access log names the account of a /v1/account request, and never its token', () => {
    const lines = e.gw.logs.flatMap((line) => {
      try {
        return [JSON.parse(line) as Json];
      } catch {
        return [];
      }
    });
    const ownLines = lines.filter((l) => l.msg === 'request' && typeof l.path === 'string' && l.path.startsWith('/v1/account'));
    assert.ok(ownLines.some((l) => l.accountId === team.id && l.path === '/v1/account/keys' && l.method === 'POST'));
    assert.ok(ownLines.some((l) => l.accountId === other.id));
    assert.ok(!e.gw.logs.some((line) => line.includes(team.token) || line.includes(other.token)), 'no token in any log line');
  });
});

// The admin API's key endpoints end to end (product.md §9), on SQLite and on PostgreSQL: the real
// gateway process, the real CLI, a mock upstream. Issue, read, list (filters, cursor pages while keys
// are added), change, top up, adjust, revoke, rotate, ledger; the refusals (400 unknown field, negative
// top-up, bad cursor; 404 key_not_found) change nothing; the CLI and the API give identical results.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, admin, adminDialects, adminOk, assertError, startAdminE2E, walkList, chatOnce, type AdminE2E } from '../support/admin.js';
import { call, parseJsonOutput, type Json } from '../support/e2e.js';

/** The fields that differ between two keys issued the same way (each made without an account has its own personal one). */
const IDENTITY = ['id', 'prefix', 'created_at', 'key', 'name', 'account_id'];
const comparable = (key: Json) => Object.fromEntries(Object.entries(key).filter(([k]) => !IDENTITY.includes(k)));

for (const dialect of await adminDialects()) {
  describe(`admin API keys (${dialect.name})`, { skip: dialect.skip }, () => {
    let e: AdminE2E;
    before(async () => {
      e = await startAdminE2E(dialect.name);
    });
    after(async () => {
      if (!e) return;
      const logs = e.gw.logs.join('\n');
      await e.close();
      assert.ok(!logs.includes(ADMIN_TOKEN), 'the admin token is in no log line');
    });

    test('POST /keys issues a key with every field; its secret works once issued, and GET returns it without the secret', async () => {
      const created = await adminOk(e.gw, 'POST', '/keys', {
        body: {
          name: 'acme',
          balance: '2.5',
          allowed_models: ['gpt-test'],
          limits: { rpm: 60, tpm: 100000, max_concurrent: 4, budget: 1, budget_period: 'day' },
          expires_at: '30d',
          metadata: { customer: 'cus_123' },
        },
      });
      assert.match(created.key, /^tg-/);
      assert.equal(created.balance, 2.5);
      assert.deepEqual(created.allowed_models, ['gpt-test']);
      assert.deepEqual(created.limits, { rpm: 60, tpm: 100000, max_concurrent: 4, budget: 1, budget_period: 'day' });
      assert.deepEqual(created.metadata, { customer: 'cus_123' });
      assert.ok(Date.parse(created.expires_at) > Date.now() + 29 * 86_400_000);
      const own = await call(e.gw, 'GET', '/key', { key: created.key });
      assert.equal(own.status, 200);
      assert.equal(own.json.data.id, created.id);
      const shown = await adminOk(e.gw, 'GET', `/keys/${created.id}`);
      assert.equal(shown.key, undefined, 'the secret is shown only once');
      const withoutSecret = Object.fromEntries(Object.entries(created).filter(([k]) => k !== 'key'));
      assert.deepEqual(shown, withoutSecret);
    });

    test('POST /keys refuses a bad body (no name, negative balance, unknown field or model) and creates nothing', async () => {
      const before = (await walkList(e.gw, '/keys', 1000)).length;
      for (const body of [{}, { name: 'x', balance: -1 }, { name: 'x', secret: 'tg-mine' }, { name: 'x', allowed_models: ['nope'] }, { name: 'x', expires_at: '2001-01-01T00:00:00Z' }, { name: 'x', limits: { rpm: 0 } }, { name: 'x', metadata: 'a' }]) {
        assertError(await admin(e.gw, 'POST', '/keys', { body }), 400, 'invalid_request');
      }
      assertError(await admin(e.gw, 'POST', '/keys', { body: '{"name": ', headers: { 'content-type': 'application/json' } }), 400, 'invalid_request');
      assertError(await admin(e.gw, 'POST', '/keys', { body: 'name=x', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
      assert.equal((await walkList(e.gw, '/keys', 1000)).length, before);
    });

    test('GET /keys filters by status and name prefix and pages with cursors, each key once while keys are added', async () => {
      const prefix = `page-${dialect.name}-`;
      const made: string[] = [];
      for (let i = 0; i < 7; i++) made.push((await adminOk(e.gw, 'POST', '/keys', { body: { name: `${prefix}${i}` } })).id);
      await adminOk(e.gw, 'POST', `/keys/${made[3]}/revoke`);
      let added = 0;
      const walked = await walkList(e.gw, `/keys?name=${prefix}`, 2, async () => {
        made.push((await adminOk(e.gw, 'POST', '/keys', { body: { name: `${prefix}late${added++}` } })).id);
      });
      const ids = walked.map((k: Json) => k.id);
      assert.equal(new Set(ids).size, ids.length, 'no key twice');
      for (const id of made.slice(0, 7)) assert.ok(ids.includes(id), `key ${id} that existed before the walk is listed`);
      for (const id of ids) assert.ok(made.includes(id), 'only keys with the prefix');
      const revoked = await adminOk(e.gw, 'GET', `/keys?status=revoked&name=${prefix}`);
      assert.deepEqual(revoked.data.map((k: Json) => k.id), [made[3]]);
      const active = await walkList(e.gw, `/keys?status=active&name=${prefix}`, 100);
      assert.ok(!active.some((k: Json) => k.id === made[3]));
      assertError(await admin(e.gw, 'GET', '/keys?status=paused'), 400, 'invalid_request');
      assertError(await admin(e.gw, 'GET', '/keys?after=not-a-cursor'), 400, 'invalid_request');
      assertError(await admin(e.gw, 'GET', '/keys?limit=0'), 400, 'invalid_request');
      assertError(await admin(e.gw, 'GET', '/keys?colour=red'), 400, 'invalid_request');
      // A cursor of another list is refused as well.
      const ledgerCursor = Buffer.from(JSON.stringify({ l: 'ledger', p: 5 })).toString('base64url');
      assertError(await admin(e.gw, 'GET', `/keys?after=${ledgerCursor}`), 400, 'invalid_request');
    });

    test('PATCH changes name, models, limits, expiry and metadata; bad fields are 400 and change nothing', async () => {
      const key = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'patch-me', limits: { rpm: 5 } } });
      const patched = await adminOk(e.gw, 'PATCH', `/keys/${key.id}`, {
        body: { name: 'patched', allowed_models: ['embed-test'], limits: { rpm: null, tpm: 500 }, expires_at: '2h', metadata: { plan: 'pro' } },
      });
      assert.equal(patched.name, 'patched');
      assert.deepEqual(patched.allowed_models, ['embed-test']);
      assert.equal(patched.limits.rpm, null);
      assert.equal(patched.limits.tpm, 500);
      assert.deepEqual(patched.metadata, { plan: 'pro' });
      assert.ok(patched.expires_at !== null);
      for (const body of [{ nickname: 'x' }, { allowed_models: ['no-such-model'] }, { limits: { rpm: -1 } }, { limits: { burst: 1 } }, { metadata: { a: 1 } }, { name: '' }]) {
        assertError(await admin(e.gw, 'PATCH', `/keys/${key.id}`, { body }), 400, 'invalid_request');
      }
      assert.deepEqual(await adminOk(e.gw, 'GET', `/keys/${key.id}`), patched, 'the refused changes changed nothing');
      assertError(await admin(e.gw, 'PATCH', '/keys/key_0000000000000000', { body: { name: 'x' } }), 404, 'key_not_found');
    });

    test('top-up and adjust move the balance by exactly their amount, each one ledger entry, newest first', async () => {
      const key = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'money', balance: 1 } });
      let now = await adminOk(e.gw, 'POST', `/keys/${key.id}/topup`, { body: { amount: '0.000000001', note: 'invoice 7' } });
      assert.equal(now.balance, 1.000000001);
      now = await adminOk(e.gw, 'POST', `/keys/${key.id}/adjust`, { body: { amount: -0.5, reason: 'refund' } });
      assert.equal(now.balance, 0.500000001);
      const ledger = await adminOk(e.gw, 'GET', `/keys/${key.id}/ledger`);
      assert.deepEqual(
        ledger.data.map((entry: Json) => [entry.kind, entry.amount, entry.note]),
        [
          ['adjust', -0.5, 'refund'],
          ['topup', 0.000000001, 'invoice 7'],
          ['topup', 1, null],
        ],
      );
      const paged = await walkList(e.gw, `/keys/${key.id}/ledger`, 1);
      assert.deepEqual(paged, ledger.data, 'the ledger in pages of one is the same, once each');
      // Refusals: nothing changes.
      const refusals: Array<[string, Json]> = [
        ['topup', { amount: -1 }],
        ['topup', { amount: 0 }],
        ['topup', { amount: '1.0000000001' }],
        ['topup', { amount: 1, memo: 'x' }],
        ['topup', {}],
        ['adjust', { amount: 1 }],
        ['adjust', { amount: 0, reason: 'x' }],
        ['adjust', { amount: -100, reason: 'more than is available' }],
      ];
      for (const [verb, body] of refusals) {
        assertError(await admin(e.gw, 'POST', `/keys/${key.id}/${verb}`, { body }), 400, 'invalid_request');
      }
      assert.equal((await adminOk(e.gw, 'GET', `/keys/${key.id}`)).balance, 0.500000001);
      assert.equal((await adminOk(e.gw, 'GET', `/keys/${key.id}/ledger`)).data.length, 3);
      assertError(await admin(e.gw, 'POST', '/keys/key_0000000000000000/topup', { body: { amount: 1 } }), 404, 'key_not_found');
      assertError(await admin(e.gw, 'GET', '/keys/key_0000000000000000/ledger'), 404, 'key_not_found');
      assertError(await admin(e.gw, 'GET', '/keys/key_0000000000000000'), 404, 'key_not_found');
    });

    test('revoke stops the key at once; rotate gives a new secret for the same key, balance and history', async () => {
      const key = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'rotating', balance: 3 } });
      await chatOnce(e.gw, key.key);
      const rotated = await adminOk(e.gw, 'POST', `/keys/${key.id}/rotate`);
      assert.equal(rotated.id, key.id);
      assert.notEqual(rotated.key, key.key);
      assert.equal(rotated.prefix, rotated.key.slice(0, 10));
      assert.equal((await call(e.gw, 'GET', '/key', { key: key.key })).status, 401, 'the old secret stops working');
      const own = await call(e.gw, 'GET', '/key', { key: rotated.key });
      assert.equal(own.status, 200);
      assert.equal(own.json.data.balance, rotated.balance);
      assert.ok(rotated.balance < 3, 'the balance (after the call) stays');
      assert.equal((await adminOk(e.gw, 'GET', `/usage?key_id=${key.id}`)).data.length, 1, 'the usage history stays');
      const revoked = await adminOk(e.gw, 'POST', `/keys/${key.id}/revoke`);
      assert.equal(revoked.status, 'revoked');
      assert.equal((await call(e.gw, 'GET', '/key', { key: rotated.key })).status, 401);
      assertError(await admin(e.gw, 'POST', `/keys/${key.id}/rotate`), 400, 'invalid_request');
      // As a browser's fetch sends a bodiless POST: JSON content type, empty body.
      const bare = await admin(e.gw, 'POST', `/keys/${key.id}/revoke`, { headers: { 'content-type': 'application/json' } });
      assert.equal(bare.status, 200, bare.text);
      assertError(await admin(e.gw, 'POST', `/keys/${key.id}/revoke`, { body: { why: 'x' } }), 400, 'invalid_request');
    });

    test('the CLI and the admin API give identical results for the same operations', async () => {
      const viaCli = parseJsonOutput<Json>(
        await e.gw.cli(['keys', 'create', '--name', 'twin-cli', '--balance', '1.25', '--models', 'gpt-test,embed-test', '--rpm', '30', '--budget', '2', '--budget-period', 'week', '--json']),
        'keys create',
      );
      const viaApi = await adminOk(e.gw, 'POST', '/keys', {
        body: { name: 'twin-api', balance: 1.25, allowed_models: ['gpt-test', 'embed-test'], limits: { rpm: 30, budget: 2, budget_period: 'week' } },
      });
      assert.deepEqual(comparable(viaApi), comparable(viaCli));
      const toppedCli = parseJsonOutput<Json>(await e.gw.cli(['keys', 'topup', viaCli.id, '0.75', '--json']), 'keys topup');
      const toppedApi = await adminOk(e.gw, 'POST', `/keys/${viaApi.id}/topup`, { body: { amount: 0.75 } });
      assert.deepEqual(comparable(toppedApi), comparable(toppedCli));
      const adjustedCli = parseJsonOutput<Json>(await e.gw.cli(['keys', 'adjust', viaCli.id, '-0.5', '--reason', 'goodwill', '--json']), 'keys adjust');
      const adjustedApi = await adminOk(e.gw, 'POST', `/keys/${viaApi.id}/adjust`, { body: { amount: '-0.5', reason: 'goodwill' } });
      assert.deepEqual(comparable(adjustedApi), comparable(adjustedCli));
      const limitedCli = parseJsonOutput<Json>(await e.gw.cli(['keys', 'set-limits', viaCli.id, '--rpm', 'none', '--tpm', '900', '--json']), 'keys set-limits');
      const limitedApi = await adminOk(e.gw, 'PATCH', `/keys/${viaApi.id}`, { body: { limits: { rpm: null, tpm: 900 } } });
      assert.deepEqual(comparable(limitedApi), comparable(limitedCli));
      const listedCli = parseJsonOutput<Json[]>(await e.gw.cli(['keys', 'list', '--json']), 'keys list').find((k) => k.id === viaCli.id);
      assert.deepEqual(listedCli, await adminOk(e.gw, 'GET', `/keys/${viaCli.id}`), 'keys list --json shows the API key object');
      const ledgerOf = async (id: string) => (await adminOk(e.gw, 'GET', `/keys/${id}/ledger`)).data.map((x: Json) => [x.kind, x.amount, x.note]);
      assert.deepEqual(await ledgerOf(viaApi.id), await ledgerOf(viaCli.id));
      const revokedCli = parseJsonOutput<Json>(await e.gw.cli(['keys', 'revoke', viaCli.id, '--json']), 'keys revoke');
      const revokedApi = await adminOk(e.gw, 'POST', `/keys/${viaApi.id}/revoke`);
      assert.deepEqual(comparable(revokedApi), comparable(revokedCli));
      // The CLI refuses what the API refuses, with the same message.
      const badCli = await e.gw.cli(['keys', 'topup', viaCli.id, '-1']);
      assert.notEqual(badCli.code, 0);
      const badApi = assertError(await admin(e.gw, 'POST', `/keys/${viaApi.id}/topup`, { body: { amount: '-1' } }), 400, 'invalid_request');
      assert.ok(badCli.stderr.includes(badApi.message), `${badCli.stderr} names the API's reason: ${badApi.message}`);
    });
  });
}

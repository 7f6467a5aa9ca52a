// Money guard rails end to end, on SQLite and on PostgreSQL: the real gateway, the real CLI on the same
// database. A revoked key is never topped up or adjusted (CLI: a clear error; admin API: 409
// key_revoked), and the refusal changes nothing, also when retried with the same Idempotency-Key; an
// expired key may be. Every amount up to the ledger's maximum ($8,388,608) shows exactly in `keys list`,
// its --json, the admin API and /v1/key; a larger one — or a top-up that would take the balance past
// it — is refused with an error that names the maximum, before anything changes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { admin, adminDialects, adminOk, assertError, startAdminE2E, type AdminE2E } from '../support/admin.js';
import { call, parseJsonOutput, waitFor, type Json } from '../support/e2e.js';

const NAMES_MAXIMUM = /8388608 USD, the largest (amount|balance) the ledger holds/;

for (const dialect of await adminDialects()) {
  describe(`money guard rails (${dialect.name})`, { skip: dialect.skip }, () => {
    let e: AdminE2E;
    before(async () => {
      e = await startAdminE2E(dialect.name);
    });
    after(async () => {
      await e?.close();
    });

    const cli = (args: string[]) => e.gw.cli(args);
    const ledgerOf = async (id: string): Promise<Json[]> => (await adminOk(e.gw, 'GET', `/keys/${id}/ledger`)).data;

    /** The `keys list` table's cells for one key, by column name. */
    async function listedRow(id: string): Promise<Record<string, string>> {
      const result = await cli(['keys', 'list']);
      assert.equal(result.code, 0, result.stderr);
      const lines = result.stdout.trimEnd().split('\n');
      const header = lines[0]!.split(/\s{2,}/);
      const line = lines.find((l) => l.startsWith(`${id} `));
      assert.ok(line, `keys list shows ${id}:\n${result.stdout}`);
      const cells = line.split(/\s{2,}/);
      return Object.fromEntries(header.map((h, i) => [h, cells[i] ?? '']));
    }

    /** Asserts a CLI run failed with one line on stderr matching `message`; returns that line. */
    function assertCliRefused(result: { code: number | null; stdout: string; stderr: string }, message: RegExp): string {
      assert.notEqual(result.code, 0, `refused: ${result.stdout}`);
      assert.equal(result.stdout, '', 'nothing on stdout');
      assert.match(result.stderr, message);
      return result.stderr.trim();
    }

    test('keys list shows a balance at the maximum exactly, and a top-up past it is refused naming the maximum, changing nothing', async () => {
      const key = parseJsonOutput<Json>(await cli(['keys', 'create', '--name', 'whale', '--balance', '8388607.999999999', '--json']), 'keys create');
      assert.equal((await listedRow(key.id)).BALANCE, '$8388607.999999999');
      const topped = await cli(['keys', 'topup', key.id, '0.000000001', '--json']);
      assert.match(topped.stdout, /"balance": 8388608,/, 'the --json balance is the exact number');
      const row = await listedRow(key.id);
      assert.deepEqual([row.BALANCE, row.HELD, row.AVAILABLE], ['$8388608', '$0', '$8388608']);

      // What used to make the balance $17,000,005.50 (shown as $0): refused, naming the maximum.
      const entries = await ledgerOf(key.id);
      assertCliRefused(await cli(['keys', 'topup', key.id, '8611397.50']), /8611397\.5 USD is past 8388608 USD, the largest amount the ledger holds/);
      const refused = assertCliRefused(await cli(['keys', 'topup', key.id, '0.000000001']), NAMES_MAXIMUM);
      assert.match(refused, /A top-up of 0\.000000001 USD would take the balance \(8388608 USD\) past 8388608 USD, the largest balance the ledger holds; at most 0 USD more fits\./);
      assertCliRefused(await cli(['keys', 'adjust', key.id, '0.000000001', '--reason', 'one more']), NAMES_MAXIMUM);
      assert.deepEqual(await ledgerOf(key.id), entries, 'no ledger entry');
      assert.equal((await listedRow(key.id)).BALANCE, '$8388608', 'no balance change');
    });

    test('an amount past the maximum is refused naming it, before anything is created or changed', async () => {
      const before = parseJsonOutput<Json[]>(await cli(['keys', 'list', '--json']), 'keys list').length;
      assertCliRefused(await cli(['keys', 'create', '--name', 'too-rich', '--balance', '8388608.000000001']), /8388608\.000000001 USD is past 8388608 USD/);
      assertCliRefused(await cli(['keys', 'create', '--name', 'too-rich', '--balance', '17000005.50']), /17000005\.5 USD is past 8388608 USD/);
      assertCliRefused(await cli(['keys', 'create', '--name', 'too-rich', '--budget', '8388608.000000001']), NAMES_MAXIMUM);
      assert.equal(parseJsonOutput<Json[]>(await cli(['keys', 'list', '--json']), 'keys list').length, before, 'no key created');

      const key = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'capped', balance: 1, limits: { budget: 2 } } });
      assertCliRefused(await cli(['keys', 'topup', key.id, '8388608.000000001']), NAMES_MAXIMUM);
      assertCliRefused(await cli(['keys', 'set-limits', key.id, '--budget', '8388608.000000001']), NAMES_MAXIMUM);
      for (const [method, path, body, param] of [
        ['POST', '/keys', { name: 'too-rich', balance: '8388608.000000001' }, 'balance'],
        ['POST', '/keys', { name: 'too-rich', balance: 17000005.5 }, 'balance'],
        ['POST', '/keys', { name: 'too-rich', limits: { budget: '9e6' } }, 'budget'],
        ['POST', `/keys/${key.id}/topup`, { amount: '8388608.000000001' }, 'amount'],
        ['POST', `/keys/${key.id}/topup`, { amount: '8388608' }, 'amount'],
        ['POST', `/keys/${key.id}/adjust`, { amount: '8388608', reason: 'too much' }, 'amount'],
        ['POST', `/keys/${key.id}/adjust`, { amount: '-8388608.000000001', reason: 'too much' }, 'amount'],
        ['PATCH', `/keys/${key.id}`, { limits: { budget: '8388608.000000001' } }, 'budget'],
      ] as const) {
        const error = assertError(await admin(e.gw, method, path, { body }), 400, 'invalid_request');
        assert.equal(error.param, param, `${method} ${path} ${JSON.stringify(body)}`);
        assert.match(error.message, NAMES_MAXIMUM, `${method} ${path} ${JSON.stringify(body)}`);
      }
      const now = await adminOk(e.gw, 'GET', `/keys/${key.id}`);
      assert.deepEqual([now.balance, now.limits.budget], [1, 2], 'nothing changed');
      assert.equal((await ledgerOf(key.id)).length, 1);
      assert.equal((await admin(e.gw, 'GET', '/keys?name=too-rich')).json.data.length, 0, 'no key created');
    });

    test('the admin API and /v1/key show every amount up to the maximum exactly', async () => {
      const created = await admin(e.gw, 'POST', '/keys', { body: { name: 'exact', balance: '8388607.999999999', limits: { budget: '8388608', budget_period: 'month' } } });
      assert.equal(created.status, 200, created.text);
      assert.match(created.text, /"balance":8388607\.999999999,/);
      assert.match(created.text, /"budget":8388608,/);
      const own = await call(e.gw, 'GET', '/key', { key: created.json.key });
      assert.match(own.text, /"balance":8388607\.999999999,"held":0,"available":8388607\.999999999,/);
      const ledger = await admin(e.gw, 'GET', `/keys/${created.json.id}/ledger`);
      assert.match(ledger.text, /"amount":8388607\.999999999,/);
      // Down to nothing and back to the maximum, by adjustments of the largest size.
      const emptied = await admin(e.gw, 'POST', `/keys/${created.json.id}/adjust`, { body: { amount: '-8388607.999999999', reason: 'all back' } });
      assert.match(emptied.text, /"balance":0,/);
      const full = await admin(e.gw, 'POST', `/keys/${created.json.id}/adjust`, { body: { amount: 8388608, reason: 'all of it' } });
      assert.match(full.text, /"balance":8388608,/);
      assert.equal((await listedRow(created.json.id)).BALANCE, '$8388608');
      const listed = parseJsonOutput<Json[]>(await cli(['keys', 'list', '--json']), 'keys list').find((k) => k.id === created.json.id);
      assert.equal(listed.balance, 8388608);
    });

    test('a revoked key is never topped up or adjusted, from the CLI or the admin API; the refusal changes nothing, also when retried', async () => {
      const key = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'gone', balance: 2 } });
      await adminOk(e.gw, 'POST', `/keys/${key.id}/revoke`);
      const entries = await ledgerOf(key.id);

      const viaCli = assertCliRefused(await cli(['keys', 'topup', key.id, '5']), /revoked/);
      assertCliRefused(await cli(['keys', 'adjust', key.id, '-1', '--reason', 'refund']), /revoked/);
      assertCliRefused(await cli(['keys', 'adjust', key.id, '1', '--reason', 'goodwill']), /revoked/);
      const topup = assertError(await admin(e.gw, 'POST', `/keys/${key.id}/topup`, { body: { amount: 5 } }), 409, 'key_revoked');
      assert.match(topup.message, new RegExp(`^Key ${key.id} is revoked: its balance can no longer change, so a top-up was refused`));
      assert.ok(viaCli.includes(topup.message), `the CLI says what the API says: ${viaCli}`);
      assertError(await admin(e.gw, 'POST', `/keys/${key.id}/adjust`, { body: { amount: -1, reason: 'refund' } }), 409, 'key_revoked');

      // A refusal keeps no Idempotency-Key record (as every refused admin POST): the retry runs again and
      // is refused again, never replayed as a success.
      const headers = { 'idempotency-key': `revoked-${dialect.name}` };
      for (let attempt = 0; attempt < 2; attempt++) {
        const res = await admin(e.gw, 'POST', `/keys/${key.id}/topup`, { body: { amount: 5 }, headers });
        assertError(res, 409, 'key_revoked');
        assert.equal(res.headers.get('idempotent-replayed'), null, 'not a replay');
      }
      assert.deepEqual(await ledgerOf(key.id), entries, 'no ledger entry');
      const now = await adminOk(e.gw, 'GET', `/keys/${key.id}`);
      assert.deepEqual([now.balance, now.status], [2, 'revoked'], 'no balance change');
    });

    test('a top-up applied before a revoke is replayed as applied, not refused', async () => {
      const key = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'paid-then-gone', balance: 1 } });
      const headers = { 'idempotency-key': `before-revoke-${dialect.name}` };
      const first = await adminOk(e.gw, 'POST', `/keys/${key.id}/topup`, { body: { amount: 2 }, headers });
      await adminOk(e.gw, 'POST', `/keys/${key.id}/revoke`);
      const replay = await admin(e.gw, 'POST', `/keys/${key.id}/topup`, { body: { amount: 2 }, headers });
      assert.equal(replay.status, 200, replay.text);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(replay.json, first);
      assert.equal((await ledgerOf(key.id)).length, 2);
    });

    test('an expired key may still be topped up: its expiry can be extended, and the credit is there', async () => {
      const key = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'lapsed', balance: 1, expires_at: '1s' } });
      const expired = await waitFor(async () => (await call(e.gw, 'GET', '/key', { key: key.key })).status === 401, 10_000, 100);
      assert.ok(expired, 'the key expired');
      const topped = await adminOk(e.gw, 'POST', `/keys/${key.id}/topup`, { body: { amount: 2 } });
      assert.equal(topped.balance, 3);
      const cliTopped = parseJsonOutput<Json>(await cli(['keys', 'topup', key.id, '0.5', '--json']), 'keys topup');
      assert.equal(cliTopped.balance, 3.5);
      await adminOk(e.gw, 'PATCH', `/keys/${key.id}`, { body: { expires_at: '30d' } });
      const own = await call(e.gw, 'GET', '/key', { key: key.key });
      assert.equal(own.status, 200, own.text);
      assert.equal(own.json.data.balance, 3.5);
    });
  });
}

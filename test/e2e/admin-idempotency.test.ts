// Idempotency-Key on the admin API's POSTs, end to end on SQLite and PostgreSQL: a payment webhook
// retried three times at once and three times in a row credits the key once (one ledger entry, one
// balance change, the same answer replayed); the same key with another body is 422 and changes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { admin, adminDialects, adminOk, assertError, startAdminE2E, type AdminE2E } from '../support/admin.js';
import type { Json } from '../support/e2e.js';
import { readDatabase } from '../support/gateway-process.js';

for (const dialect of await adminDialects()) {
  describe(`admin API Idempotency-Key (${dialect.name})`, { skip: dialect.skip }, () => {
    let e: AdminE2E;
    before(async () => {
      e = await startAdminE2E(dialect.name);
    });
    after(async () => {
      await e?.close();
    });

    const ledger = async (id: string): Promise<Json[]> => (await adminOk(e.gw, 'GET', `/keys/${id}/ledger`)).data;

    test('a top-up webhook sent 3 times at once and 3 times in a row credits once, and every replay gets the first answer', async () => {
      const key = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'webhook', balance: 1 } });
      const webhook = { body: { amount: '12.34', note: 'payment pi_123' }, headers: { 'idempotency-key': `pi_123-${dialect.name}` } };
      const concurrent = await Promise.all([1, 2, 3].map(() => admin(e.gw, 'POST', `/keys/${key.id}/topup`, webhook)));
      for (const res of concurrent) assert.ok(res.status === 200 || res.status === 409, `200, or 409 while the first runs: ${res.text}`);
      for (const res of concurrent.filter((r) => r.status === 409)) assertError(res, 409, 'idempotency_in_progress');
      const first = concurrent.find((r) => r.status === 200);
      assert.ok(first, 'one of them ran');
      const sequential = [];
      for (let i = 0; i < 3; i++) sequential.push(await admin(e.gw, 'POST', `/keys/${key.id}/topup`, webhook));
      for (const res of sequential) {
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('idempotent-replayed'), 'true');
        assert.deepEqual(res.json, first.json, 'the first answer, replayed');
      }
      assert.equal(first.json.balance, 13.34);
      const entries = await ledger(key.id);
      assert.deepEqual(entries.map((x) => [x.kind, x.amount]), [['topup', 12.34], ['topup', 1]], 'one ledger entry for the webhook');
      assert.equal((await adminOk(e.gw, 'GET', `/keys/${key.id}`)).balance, 13.34, 'one balance change');
    });

    test('the same Idempotency-Key with another body or on another path is 422 and changes nothing', async () => {
      const key = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'mismatch', balance: 1 } });
      const other = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'mismatch-other', balance: 1 } });
      const headers = { 'idempotency-key': `evt_mismatch-${dialect.name}` };
      await adminOk(e.gw, 'POST', `/keys/${key.id}/topup`, { body: { amount: 1 }, headers });
      assertError(await admin(e.gw, 'POST', `/keys/${key.id}/topup`, { body: { amount: 2 }, headers }), 422, 'idempotency_mismatch');
      assertError(await admin(e.gw, 'POST', `/keys/${other.id}/topup`, { body: { amount: 1 }, headers }), 422, 'idempotency_mismatch');
      assertError(await admin(e.gw, 'POST', `/keys/${key.id}/adjust`, { body: { amount: 1, reason: 'x' }, headers }), 422, 'idempotency_mismatch');
      assert.equal((await ledger(key.id)).length, 2);
      assert.equal((await ledger(other.id)).length, 1);
      assert.equal((await adminOk(e.gw, 'GET', `/keys/${key.id}`)).balance, 2);
      // The same body with its fields in another order is the same request.
      const replay = await admin(e.gw, 'POST', `/keys/${key.id}/adjust`, {
        body: { reason: 'ordered', amount: -1 },
        headers: { 'idempotency-key': `evt_order-${dialect.name}` },
      });
      assert.equal(replay.status, 200);
      const again = await admin(e.gw, 'POST', `/keys/${key.id}/adjust`, {
        body: { amount: -1, reason: 'ordered' },
        headers: { 'idempotency-key': `evt_order-${dialect.name}` },
      });
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal((await adminOk(e.gw, 'GET', `/keys/${key.id}`)).balance, 1);
    });

    test('key creation with an Idempotency-Key issues one key; the replay is its object without the secret, never stored in clear', async () => {
      const request = { body: { name: `idem-create-${dialect.name}`, balance: 2 }, headers: { 'idempotency-key': `signup-42-${dialect.name}` } };
      const first = await adminOk(e.gw, 'POST', '/keys', request);
      const second = await admin(e.gw, 'POST', '/keys', request);
      assert.equal(second.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(second.json, { ...first, key: null });
      const listed = await adminOk(e.gw, 'GET', `/keys?name=idem-create-${dialect.name}`);
      assert.equal(listed.data.length, 1);
      const rotated = await adminOk(e.gw, 'POST', `/keys/${first.id}/rotate`, { headers: { 'idempotency-key': `rotate-42-${dialect.name}` } });
      const rotatedAgain = await admin(e.gw, 'POST', `/keys/${first.id}/rotate`, { headers: { 'idempotency-key': `rotate-42-${dialect.name}` } });
      assert.deepEqual(rotatedAgain.json, { ...rotated, key: null }, 'a replayed rotate issues no second secret');
      const stored = e.gw.logs.join('\n');
      assert.ok(!stored.includes(first.key) && !stored.includes(rotated.key), 'no secret in the logs');
      if (dialect.name === 'sqlite') {
        const bodies = readDatabase(e.gw.dbPath, (db) => db.prepare('SELECT body FROM idempotency_keys').all() as Array<{ body: string }>);
        assert.ok(bodies.length >= 2 && bodies.every((r) => !r.body.includes(first.key) && !r.body.includes(rotated.key)), 'no secret among the recorded answers');
      }
    });

    test('a refused request keeps no record: fixed and retried with the same key, it runs', async () => {
      const key = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'refused-first', balance: 1 } });
      const headers = { 'idempotency-key': `evt_refused-${dialect.name}` };
      assertError(await admin(e.gw, 'POST', `/keys/${key.id}/topup`, { body: { amount: -5 }, headers }), 400, 'invalid_request');
      assertError(await admin(e.gw, 'POST', `/keys/${key.id}/topup`, { body: { amount: -5 }, headers }), 400, 'invalid_request');
      assert.equal((await ledger(key.id)).length, 1, 'nothing changed');
      assert.equal((await adminOk(e.gw, 'POST', `/keys/${key.id}/topup`, { body: { amount: 5 }, headers })).balance, 6);
      assertError(await admin(e.gw, 'POST', `/keys/${key.id}/topup`, { body: { amount: 5 }, headers: { 'idempotency-key': 'x'.repeat(256) } }), 400, 'invalid_request');
    });
  });
}

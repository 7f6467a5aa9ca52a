// The sweeper also forgets stored Responses ids past their 30 days (product.md §14), in batches, keeping
// the live ones — so the table holds at most a month of ids, whatever the traffic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { HoldSweeper } from '../../../src/billing/hold-sweeper.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { testNewKey } from '../../support/key-fixture.js';

test('a sweep deletes every expired Responses id (more than one batch of them) and keeps the live ones', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-sweeper-'));
  const store = openSqliteStore(join(dir, 'test.db'));
  try {
    await store.keys.create(testNewKey('key_a'));
    const now = Date.now();
    const items = Array.from({ length: 600 }, (_, i) => `msg_${i}`);
    await store.responses.record({ keyId: 'key_a', responseId: 'resp_old', itemIds: items, provider: 'openai', inputTokens: 1, outputTokens: 1, expiresAt: now - 1 });
    await store.responses.record({ keyId: 'key_a', responseId: 'resp_live', itemIds: ['msg_live'], provider: 'openai', inputTokens: 1, outputTokens: 1, expiresAt: now + 60_000 });
    await new HoldSweeper(store.ledger, store.idempotency, 60, pino({ level: 'silent' }), store.responses).sweep();
    assert.equal((await store.responses.expire(now, 1000)), 0, 'nothing expired is left');
    assert.deepEqual((await store.responses.find('key_a', ['resp_live', 'msg_live'], now)).map((ref) => ref.id).sort(), ['msg_live', 'resp_live']);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

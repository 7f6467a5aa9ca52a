// Recent key rows on PostgreSQL (docs/adr/0027-recent-key-rows.md): a lookup that accepts a record up to a
// moment old is answered without a query, and what that may lag is exactly what the ADR says — never the
// hold's verdict on a revoked key. Two stores on one schema play two gateways.
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { RecentKeys } from '../../src/storage/recent-keys.js';
import type { KeyRecord, Store } from '../../src/storage/types.js';
import { testNewKey } from '../support/key-fixture.js';
import { freshPgSchema, postgresSkipReason, type PgSchema } from '../support/postgres.js';

const key = (id: string, status: KeyRecord['status'] = 'active') => ({ id, status }) as KeyRecord;

describe('RecentKeys', () => {
  test('answers within the age asked for, not after', () => {
    const recent = new RecentKeys();
    recent.remember('h', key('k'), 1_000, recent.currentGeneration);
    assert.equal(recent.get('h', 500, 1_500)?.id, 'k');
    assert.equal(recent.get('h', 500, 1_501), undefined);
    assert.equal(recent.get('other', 500, 1_000), undefined);
  });

  test('keeps no revoked or unknown key, and drops one that was kept', () => {
    const recent = new RecentKeys();
    recent.remember('h', key('k'), 0, recent.currentGeneration);
    recent.remember('h', key('k', 'revoked'), 10, recent.currentGeneration);
    assert.equal(recent.get('h', 1_000, 20), undefined);
    recent.remember('u', undefined, 10, recent.currentGeneration);
    assert.equal(recent.get('u', 1_000, 20), undefined);
  });

  test('a read that began before this process changed a key is not remembered', () => {
    const recent = new RecentKeys();
    const before = recent.currentGeneration;
    recent.forgetAll();
    recent.remember('h', key('k'), 0, before);
    assert.equal(recent.get('h', 1_000, 0), undefined);
    recent.remember('h', key('k'), 0, recent.currentGeneration);
    assert.equal(recent.get('h', 1_000, 0)?.id, 'k');
  });

  test('holds at most 10,000 keys, dropping the oldest read', () => {
    const recent = new RecentKeys();
    for (let i = 0; i <= 10_000; i++) recent.remember(`h${i}`, key(`k${i}`), i, recent.currentGeneration);
    assert.equal(recent.get('h0', 1e9, 0), undefined);
    assert.equal(recent.get('h1', 1e9, 0)?.id, 'k1');
    assert.equal(recent.get('h10000', 1e9, 0)?.id, 'k10000');
  });
});

const skip = await postgresSkipReason();
const NO_BUDGET = { limit: null, periodStart: 0 };

describe('PostgreSQL key lookups that accept a recent record (two gateways on one database)', { skip }, () => {
  let schema: PgSchema;
  let a: Store;
  let b: Store;

  before(async () => {
    schema = await freshPgSchema();
  });
  after(async () => {
    await schema?.drop();
  });
  beforeEach(async () => {
    a = await openPostgresStore(schema.url, { maxConnections: 2 });
    b = await openPostgresStore(schema.url, { maxConnections: 2 });
  });
  afterEach(async () => {
    await a.close();
    await b.close();
  });

  test('a key revoked by another gateway: the recent record still says active, but the hold refuses it (inactive)', async () => {
    await b.keys.create(testNewKey('key_r', { initialBalance: 1_000_000, secretHash: 'hash-r' }));
    assert.equal((await a.keys.findByHash('hash-r', 1_000))?.status, 'active');
    await b.keys.revoke('key_r', Date.now());
    assert.equal((await a.keys.findByHash('hash-r', 1_000))?.status, 'active', 'answered from the recent record');
    assert.equal((await a.keys.findByHash('hash-r'))?.status, 'revoked', 'a lookup that accepts no age reads the database');
    const now = Date.now();
    const admission = await a.ledger.placeHold({ requestId: 'req-r', keyId: 'key_r', amount: 10, expiresAt: now + 60_000, now, budget: NO_BUDGET });
    assert.equal(admission.admitted, false);
    assert.equal(admission.admitted === false && admission.reason, 'inactive');
    assert.equal((await a.ledger.audit('key_r')).activeHolds, 0);
  });

  test('what may lag on another gateway (allowed models, a rotated-out secret) is read afresh by this gateway at once after its own change', async () => {
    await a.keys.create(testNewKey('key_m', { secretHash: 'hash-m' }));
    assert.equal((await a.keys.findByHash('hash-m', 1_000))?.allowedModels, '*');
    assert.equal((await b.keys.findByHash('hash-m', 1_000))?.allowedModels, '*');
    await a.keys.setAllowedModels('key_m', ['gpt-test']);
    assert.deepEqual((await a.keys.findByHash('hash-m', 1_000))?.allowedModels, ['gpt-test'], 'the gateway that changed it forgot its record');
    assert.equal((await b.keys.findByHash('hash-m', 1_000))?.allowedModels, '*', 'the other gateway may answer from its record for up to the age asked');
    assert.deepEqual((await b.keys.findByHash('hash-m'))?.allowedModels, ['gpt-test']);

    await a.keys.rotate('key_m', 'tg-new', 'hash-m2');
    assert.equal(await a.keys.findByHash('hash-m', 1_000), undefined, 'the old secret, on the gateway that rotated it');
    assert.equal((await a.keys.findByHash('hash-m2', 1_000))?.id, 'key_m');
  });

  test('a record older than the age asked for is read again', async () => {
    await a.keys.create(testNewKey('key_t', { secretHash: 'hash-t' }));
    assert.equal((await b.keys.findByHash('hash-t', 1_000))?.allowedModels, '*');
    await a.keys.setAllowedModels('key_t', ['gpt-test']);
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.deepEqual((await b.keys.findByHash('hash-t', 50))?.allowedModels, ['gpt-test']);
  });
});

// The admin API's usage endpoints end to end (product.md §9), on SQLite and on PostgreSQL: usage rows
// from real calls through the gateway (a failed one included), filters, cursor pages that see each row
// once while new rows arrive, the CSV export read back with a real CSV parser, summaries, the key
// holder's own usage, and the upstream health table.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { admin, adminDialects, adminOk, ADMIN_TOKEN, assertError, chatOnce, startAdminE2E, walkList, type AdminE2E } from '../support/admin.js';
import { call, sdk, type Json } from '../support/e2e.js';
import { errorReply } from '../support/mock-upstream.js';

const sum = (rows: Json[], field: string): number => rows.reduce((total, row) => total + row[field], 0);
/** USD sums compared at the nano-dollar. */
const nano = (usd: number): number => Math.round(usd * 1e9);

for (const dialect of await adminDialects()) {
  describe(`admin API usage (${dialect.name})`, { skip: dialect.skip }, () => {
    let e: AdminE2E;
    let a: Json;
    let b: Json;
    let all: Json[];

    before(async () => {
      e = await startAdminE2E(dialect.name);
      a = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'usage-a', balance: 5 } });
      b = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'usage-b', balance: 5 } });
      for (let i = 0; i < 6; i++) await chatOnce(e.gw, a.key);
      await sdk(e.gw, a.key).embeddings.create({ model: 'embed-test', input: 'hello' });
      await chatOnce(e.gw, b.key);
      e.mock.handle(errorReply(500, 'upstream exploded'));
      await assert.rejects(chatOnce(e.gw, b.key));
      e.mock.handle(null);
      all = await walkList(e.gw, '/usage', 1000);
    });
    after(async () => {
      if (!e) return;
      const logs = e.gw.logs.join('\n');
      await e.close();
      assert.ok(!logs.includes(ADMIN_TOKEN), 'the admin token is in no log line');
    });

    test('GET /usage lists every request newest first in the §2 row shape, the failed one with cost 0', () => {
      assert.equal(all.length, 9);
      assert.deepEqual(Object.keys(all[0]).sort(), [
        'attempts', 'cache_write_tokens', 'cached_input_tokens', 'cost', 'duration_ms', 'endpoint', 'error_code', 'error_message', 'first_token_ms',
        'input_tokens', 'key_id', 'model', 'output_tokens', 'provider', 'reasoning_tokens', 'request_id', 'session_id', 'status', 'time',
        'upstream_model', 'usage_source',
      ]);
      const times = all.map((r) => Date.parse(r.time));
      assert.ok(times.every((t, i) => i === 0 || t <= times[i - 1]!), 'newest first (the calls ran one after another)');
      const failed = all.filter((r) => r.status >= 400);
      assert.equal(failed.length, 1);
      assert.equal(failed[0].cost, 0);
      assert.equal(failed[0].key_id, b.id);
    });

    test('filters: key_id, model, provider, status, since and until', async () => {
      const rows = async (query: string) => (await adminOk(e.gw, 'GET', `/usage?${query}`)).data as Json[];
      assert.equal((await rows(`key_id=${a.id}`)).length, 7);
      assert.ok((await rows(`key_id=${a.id}`)).every((r) => r.key_id === a.id));
      assert.equal((await rows('model=embed-test')).length, 1);
      assert.equal((await rows(`model=gpt-test&key_id=${b.id}`)).length, 2);
      assert.equal((await rows('provider=mock')).length, 9);
      assert.equal((await rows('provider=other')).length, 0);
      assert.equal((await rows('status=200')).length, 8);
      assert.equal((await rows(`status=${all.find((r) => r.status >= 400).status}`)).length, 1);
      const middle = all[4];
      const since = await rows(`since=${encodeURIComponent(middle.time)}`);
      assert.ok(since.every((r) => r.time >= middle.time) && since.some((r) => r.request_id === middle.request_id));
      const until = await rows(`until=${encodeURIComponent(middle.time)}`);
      assert.ok(until.every((r) => r.time < middle.time));
      assert.equal(since.length + until.length, 9);
      for (const bad of ['since=yesterday', 'status=ok', 'limit=1001', 'after=%%%', 'after=eyJsIjoia2V5cyJ9', 'key=abc', 'key_id=']) {
        assertError(await admin(e.gw, 'GET', `/usage?${bad}`), 400, 'invalid_request');
      }
    });

    test('cursor pages walk every row exactly once while new rows arrive between pages', async () => {
      const before = new Set(all.map((r) => r.request_id));
      let added = 0;
      const walked = await walkList(e.gw, '/usage', 2, async () => {
        await chatOnce(e.gw, a.key);
        added += 1;
      });
      assert.ok(added >= 4, 'rows arrived during the walk');
      const ids = walked.map((r) => r.request_id);
      assert.equal(new Set(ids).size, ids.length, 'no row twice');
      for (const id of before) assert.ok(ids.includes(id), `row ${id} that existed before the walk is listed`);
      all = await walkList(e.gw, '/usage', 1000);
      assert.equal(all.length, 9 + added);
    });

    test('usage.csv streams the same rows as the JSON listing, in the same order, read with a CSV parser', async () => {
      const res = await fetch(`${e.gw.origin}/admin/v1/usage.csv?key_id=${a.id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
      const records = parse(await res.text(), { columns: true }) as Array<Record<string, string>>;
      const json = await walkList(e.gw, `/usage?key_id=${a.id}`, 3);
      assert.equal(records.length, json.length);
      records.forEach((record, i) => {
        const row = json[i];
        assert.deepEqual(
          {
            ...record,
            status: Number(record.status),
            input_tokens: Number(record.input_tokens),
            cached_input_tokens: Number(record.cached_input_tokens),
            cache_write_tokens: Number(record.cache_write_tokens),
            output_tokens: Number(record.output_tokens),
            reasoning_tokens: Number(record.reasoning_tokens),
            cost: Number(record.cost),
            attempts: JSON.parse(record.attempts!),
            // An absent value is an empty field.
            error_code: record.error_code || null,
            error_message: record.error_message || null,
            duration_ms: record.duration_ms ? Number(record.duration_ms) : null,
            first_token_ms: record.first_token_ms ? Number(record.first_token_ms) : null,
            session_id: record.session_id || null,
          },
          row,
        );
      });
      const empty = await fetch(`${e.gw.origin}/admin/v1/usage.csv?model=nothing`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      assert.deepEqual(parse(await empty.text(), { columns: true }), []);
      assertError(await admin(e.gw, 'GET', '/usage.csv?since=never'), 400, 'invalid_request');
      assertError(await admin(e.gw, 'GET', '/usage.csv?limit=5'), 400, 'invalid_request');
    });

    test('usage/summary groups by key, model, provider, day and hour: requests, errors, tokens by class, cost', async () => {
      const totals = (rows: Json[]) => ({
        requests: rows.length,
        errors: rows.filter((r) => r.status >= 400).length,
        input_tokens: sum(rows, 'input_tokens'),
        cached_input_tokens: sum(rows, 'cached_input_tokens'),
        output_tokens: sum(rows, 'output_tokens'),
        reasoning_tokens: sum(rows, 'reasoning_tokens'),
        cost: nano(sum(rows, 'cost')),
      });
      const groupsOf = (field: (r: Json) => string) => {
        const groups = new Map<string, Json[]>();
        for (const r of all) groups.set(field(r), [...(groups.get(field(r)) ?? []), r]);
        return groups;
      };
      const expectations: Array<[string, (r: Json) => string]> = [
        ['key', (r) => r.key_id],
        ['model', (r) => r.model],
        ['provider', (r) => r.provider],
        ['day', (r) => `${r.time.slice(0, 10)}T00:00:00.000Z`],
        ['hour', (r) => `${r.time.slice(0, 13)}:00:00.000Z`],
      ];
      for (const [groupBy, field] of expectations) {
        const summary = await adminOk(e.gw, 'GET', `/usage/summary?group_by=${groupBy}`);
        assert.equal(summary.object, 'list');
        const expected = groupsOf(field);
        assert.equal(summary.data.length, expected.size, groupBy);
        for (const group of summary.data) {
          assert.deepEqual({ ...group, group: undefined, cost: nano(group.cost) }, { group: undefined, ...totals(expected.get(group.group)!) }, `${groupBy} ${group.group}`);
        }
      }
      const byKey = await adminOk(e.gw, 'GET', `/usage/summary?group_by=model&key_id=${b.id}`);
      assert.deepEqual(byKey.data.map((g: Json) => [g.group, g.requests, g.errors]), [['gpt-test', 2, 1]]);
      assertError(await admin(e.gw, 'GET', '/usage/summary?group_by=week'), 400, 'invalid_request');
      assertError(await admin(e.gw, 'GET', '/usage/summary'), 400, 'invalid_request');
    });

    test('GET /v1/key/usage shows the calling key its own rows only, with the same pages and filters', async () => {
      const own = await call(e.gw, 'GET', '/key/usage?limit=100', { key: b.key });
      assert.equal(own.status, 200);
      assert.deepEqual(own.json.data, all.filter((r) => r.key_id === b.id));
      const paged: Json[] = [];
      let cursor: string | null = null;
      do {
        const page: Json = (await call(e.gw, 'GET', `/key/usage?limit=2${cursor ? `&after=${cursor}` : ''}`, { key: a.key })).json;
        paged.push(...page.data);
        cursor = page.next_cursor;
      } while (cursor);
      assert.deepEqual(paged, all.filter((r) => r.key_id === a.id));
      const filtered = await call(e.gw, 'GET', '/key/usage?model=embed-test', { key: a.key });
      assert.equal(filtered.json.data.length, 1);
      const summary = await call(e.gw, 'GET', '/key/usage/summary?group_by=model', { key: b.key });
      assert.deepEqual(summary.json.data.map((g: Json) => [g.group, g.requests]), [['gpt-test', 2]]);
      for (const bad of [`key_id=${a.id}`, 'after=nope']) assert.equal((await call(e.gw, 'GET', `/key/usage?${bad}`, { key: b.key })).status, 400);
      assert.equal((await call(e.gw, 'GET', '/key/usage/summary?group_by=key', { key: b.key })).status, 400);
      assert.equal((await call(e.gw, 'GET', '/key/usage', {})).status, 401);
      assert.equal((await call(e.gw, 'GET', '/key/usage', { key: ADMIN_TOKEN })).status, 401, 'the admin token is not a key');
    });

    test('GET /providers reports each upstream: the failed attempts, the last error, no cool-down', async () => {
      const health = await adminOk(e.gw, 'GET', '/providers');
      const chat = health.data.find((u: Json) => u.provider === 'mock' && u.upstream_model === 'gpt-4o-mini');
      assert.deepEqual(chat.models, ['gpt-test']);
      assert.equal(chat.cooling, false);
      assert.equal(chat.cooling_until, null);
      assert.equal(chat.last_error.status, 500);
      assert.ok(chat.errors_5m >= 1 && chat.requests_5m >= chat.errors_5m + 8, JSON.stringify(chat));
      const embed = health.data.find((u: Json) => u.upstream_model === 'text-embedding-3-small');
      assert.deepEqual([embed.requests_5m, embed.errors_5m, embed.last_error], [1, 0, null]);
      const idle = health.data.find((u: Json) => u.upstream_model === 'gpt-4o');
      assert.deepEqual([idle.requests_5m, idle.consecutive_failures, idle.last_error], [0, 0, null]);
    });
  });
}

// Every request that names a valid key leaves one usage row (issue 22 item 1), on SQLite and PostgreSQL:
// refusals (400, 402, 404, 413, 415, 429), quotes, replays and upstream failures each appear with their
// status, error code and message, endpoint, latency and attempts, cost 0 and no ledger entry — and so
// in the filters, summaries and CSV the dashboard reads. Requests without a valid key are never a row
// each: they are counted per minute and in /metrics.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { admin, adminConfigYaml, adminDialects, adminOk, ADMIN_TOKEN, walkList } from '../support/admin.js';
import { call, extendConfig, postChat, sdk, waitFor, type Json } from '../support/e2e.js';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { errorReply, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { freshPgSchema, type PgSchema } from '../support/postgres.js';
import { sampleId, scrape } from '../support/prometheus.js';

const MAX_BODY = 64 * 1024;
const BAD_KEYS = 25;

/** The usage row of one request id, once written (rows of refusals are written just after the answer). */
async function rowOf(gw: GatewayProcess, requestId: string | null): Promise<Json> {
  assert.ok(requestId, 'the answer carries x-request-id');
  const row = await waitFor(async () => (await adminOk(gw, 'GET', `/usage?request_id=${requestId}`)).data[0]);
  assert.ok(row, `a usage row for ${requestId}`);
  return row;
}

for (const dialect of await adminDialects()) {
  describe(`a usage row for every request (${dialect.name})`, { skip: dialect.skip }, () => {
    let mock: MockUpstream;
    let schema: PgSchema | undefined;
    let gw: GatewayProcess;
    let key: Json;

    before(async () => {
      mock = await startMockUpstream();
      schema = dialect.name === 'postgres' ? await freshPgSchema() : undefined;
      const config = extendConfig(mockConfig(mock, adminConfigYaml), { server: `  max_body_bytes: ${MAX_BODY}` });
      gw = await startGateway({ config, env: { TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN }, ...(schema ? { database: schema.url } : {}) });
      key = await adminOk(gw, 'POST', '/keys', { body: { name: 'every-request', balance: 5 } });
    });
    after(async () => {
      await mock?.close();
      if (gw) await stopGateway(gw, 10_000);
      await schema?.drop();
    });

    /** Asserts a row that moved no money: its status and code, cost 0, no tokens, no ledger entry. */
    async function assertRefusalRow(requestId: string | null, status: number, code: string, model: string | null): Promise<Json> {
      const row = await rowOf(gw, requestId);
      assert.equal(row.status, status);
      assert.equal(row.error_code, code);
      assert.equal(typeof row.error_message, 'string');
      assert.ok(row.error_message.length > 0);
      assert.equal(row.key_id, key.id);
      assert.equal(row.model, model);
      assert.equal(row.endpoint, 'chat');
      assert.equal(row.cost, 0);
      assert.equal(row.usage_source, 'none');
      assert.equal(row.input_tokens + row.output_tokens, 0);
      assert.deepEqual(row.attempts, []);
      assert.equal(typeof row.duration_ms, 'number');
      const ledger = await adminOk(gw, 'GET', `/keys/${key.id}/ledger?limit=100`);
      assert.ok(!ledger.data.some((e: Json) => e.request_id === requestId), 'no ledger entry for it');
      return row;
    }

    test('a 404 for an unknown model, a 400, a 415 and a 413 each leave a row with their code and message', async () => {
      const unknown = await postChat(gw, key.key, { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(unknown.status, 404);
      const row = await assertRefusalRow(unknown.headers.get('x-request-id'), 404, 'model_not_found', 'no-such-model');
      assert.equal(row.error_message, unknown.json.error.message);
      assert.equal(row.provider, null);

      const invalid = await postChat(gw, key.key, { model: 'gpt-test' });
      assert.equal(invalid.status, 400);
      await assertRefusalRow(invalid.headers.get('x-request-id'), 400, 'invalid_request', 'gpt-test');

      const text = await call(gw, 'POST', '/chat/completions', { key: key.key, body: 'hello', headers: { 'content-type': 'text/plain' } });
      assert.equal(text.status, 415);
      await assertRefusalRow(text.headers.get('x-request-id'), 415, 'unsupported_media_type', null);

      const big = JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x'.repeat(MAX_BODY) }] });
      const tooLarge = await call(gw, 'POST', '/chat/completions', { key: key.key, body: big, headers: { 'content-type': 'application/json' } });
      assert.equal(tooLarge.status, 413);
      await assertRefusalRow(tooLarge.headers.get('x-request-id'), 413, 'request_too_large', null);
      assert.equal(mock.requests.length, 0, 'none of them reached the upstream');
    });

    test('a 402, a 429 and a 422 leave rows; a dry run and an Idempotency-Key replay leave rows with status 200 and cost 0', async () => {
      const poor = await adminOk(gw, 'POST', '/keys', { body: { name: 'poor', balance: 0.000001 } });
      const refused = await postChat(gw, poor.key, { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(refused.status, 402);
      const row402 = await rowOf(gw, refused.headers.get('x-request-id'));
      assert.equal(row402.error_code, 'insufficient_balance');
      assert.equal(row402.key_id, poor.id);

      const limited = await adminOk(gw, 'POST', '/keys', { body: { name: 'limited', balance: 5, limits: { rpm: 1 } } });
      await sdk(gw, limited.key).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
      const second = await postChat(gw, limited.key, { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
      assert.equal(second.status, 429);
      const row429 = await rowOf(gw, second.headers.get('x-request-id'));
      assert.equal(row429.error_code, 'rate_limited');
      assert.equal(row429.cost, 0);

      const quote = await postChat(gw, key.key, { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-tollgate-dry-run': '1' } });
      assert.equal(quote.status, 200);
      const quoted = await rowOf(gw, quote.headers.get('x-request-id'));
      assert.deepEqual([quoted.status, quoted.error_code, quoted.cost, quoted.usage_source], [200, null, 0, 'none']);

      const idempotencyKey = randomUUID();
      const body = { model: 'gpt-test', messages: [{ role: 'user', content: 'once' }], max_tokens: 5 };
      const first = await postChat(gw, key.key, body, { headers: { 'idempotency-key': idempotencyKey } });
      const replay = await postChat(gw, key.key, body, { headers: { 'idempotency-key': idempotencyKey } });
      assert.equal(replay.status, 200);
      assert.equal((await rowOf(gw, first.headers.get('x-request-id'))).usage_source, 'upstream');
      const replayed = await rowOf(gw, replay.headers.get('x-request-id'));
      assert.deepEqual([replayed.status, replayed.cost, replayed.usage_source], [200, 0, 'none']);
      const mismatch = await postChat(gw, key.key, { ...body, max_tokens: 6 }, { headers: { 'idempotency-key': idempotencyKey } });
      assert.equal(mismatch.status, 422);
      assert.equal((await rowOf(gw, mismatch.headers.get('x-request-id'))).error_code, 'idempotency_mismatch');
    });

    test('a billed request and an upstream failure carry endpoint, latency, attempts and the error', async () => {
      const ok = await call(gw, 'POST', '/embeddings', { key: key.key, body: { model: 'embed-test', input: 'hello' } });
      assert.equal(ok.status, 200);
      const okRow = await rowOf(gw, ok.headers.get('x-request-id'));
      assert.deepEqual([okRow.endpoint, okRow.error_code, okRow.error_message, okRow.usage_source], ['embeddings', null, null, 'upstream']);
      assert.ok(okRow.duration_ms >= 0);
      assert.equal(okRow.first_token_ms, null);

      mock.handle(errorReply(500, 'upstream exploded'));
      const failed = await postChat(gw, key.key, { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
      mock.handle(null);
      assert.equal(failed.status, 502);
      const row = await rowOf(gw, failed.headers.get('x-request-id'));
      assert.equal(row.error_code, 'upstream_error');
      assert.equal(row.error_message, failed.json.error.message);
      assert.equal(row.provider, 'mock');
      assert.ok(row.attempts.length >= 1 && row.attempts.every((a: Json) => a.status === 500));

      const stream = await sdk(gw, key.key).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], stream: true });
      let id: string | null = null;
      for await (const chunk of stream) id ??= chunk.id;
      const streamed = (await adminOk(gw, 'GET', '/usage?endpoint=chat&status=2xx&limit=1')).data[0];
      assert.equal(typeof streamed.first_token_ms, 'number', 'a stream records its time to first token');
      assert.ok(streamed.first_token_ms <= streamed.duration_ms);
    });

    test('status classes, endpoint and request_id filter the rows; summaries and the CSV count the refusals', async () => {
      const all = await walkList(gw, '/usage', 500);
      const rows = async (query: string) => walkList(gw, `/usage?${query}`, 500);
      assert.equal((await rows('status=error')).length, all.filter((r) => r.status >= 400).length);
      assert.equal((await rows('status=4xx')).length, all.filter((r) => r.status >= 400 && r.status < 500).length);
      assert.equal((await rows('status=5xx')).length, all.filter((r) => r.status >= 500).length);
      assert.equal((await rows('status=2xx')).length, all.filter((r) => r.status < 300).length);
      assert.equal((await rows('endpoint=embeddings')).length, all.filter((r) => r.endpoint === 'embeddings').length);
      for (const bad of ['status=3yy', 'endpoint=images']) assert.equal((await admin(gw, 'GET', `/usage?${bad}`)).status, 400);

      const summary = await adminOk(gw, 'GET', '/usage/summary?group_by=key');
      const mine = summary.data.find((g: Json) => g.group === key.id);
      const myRows = all.filter((r) => r.key_id === key.id);
      assert.equal(mine.requests, myRows.length);
      assert.equal(mine.errors, myRows.filter((r) => r.status >= 400).length);
      assert.ok(mine.errors >= 6, 'the refusals count as errors');

      const csv = await admin(gw, 'GET', '/usage.csv');
      const records = parse(csv.text, { columns: true }) as Array<Record<string, string>>;
      assert.equal(records.length, all.length);
      const notFound = records.find((r) => r.error_code === 'model_not_found')!;
      assert.equal(notFound.endpoint, 'chat');
      assert.equal(notFound.provider, '');
      assert.ok(Number(notFound.duration_ms) >= 0);
    });

    test('requests without a valid key are counted per minute and in /metrics, never a row each', async () => {
      const before = (await walkList(gw, '/usage', 500)).length;
      for (let i = 0; i < BAD_KEYS; i++) {
        const res = await postChat(gw, i % 2 ? `tg-${'x'.repeat(40)}` : 'nonsense', { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
        assert.equal(res.status, 401);
      }
      assert.equal((await call(gw, 'GET', '/models')).status, 401);
      const counted = await waitFor(async () => {
        const list = await adminOk(gw, 'GET', '/usage/unauthenticated?group_by=minute');
        return list.total === BAD_KEYS + 1 ? list : undefined;
      }, 5_000);
      assert.ok(counted, 'every 401 is counted within seconds');
      assert.equal(counted.object, 'list');
      assert.ok(counted.data.every((d: Json) => typeof d.time === 'string' && d.requests > 0));
      assert.ok(counted.data.length <= 2, 'one entry per minute');
      assert.equal((await adminOk(gw, 'GET', '/usage/unauthenticated?group_by=day')).total, BAD_KEYS + 1);
      assert.equal((await admin(gw, 'GET', '/usage/unauthenticated?group_by=week')).status, 400);
      assert.equal((await walkList(gw, '/usage', 500)).length, before, 'no usage row for a request without a valid key');
      const metrics = await scrape(gw);
      assert.equal(metrics.samples.get(sampleId('tollgate_unauthenticated_requests_total')), BAD_KEYS + 1);
    });

    test('the ledger stays consistent: the audit finds no violation with the refusal rows in place', async () => {
      const audit = await adminOk(gw, 'GET', '/audit');
      assert.deepEqual(audit.violations, []);
      assert.equal(audit.ok, true);
    });
  });
}

// What one agent session cost, end to end on SQLite and PostgreSQL (product.md §14): requests carrying
// Claude Code's `x-claude-code-session-id` or Codex's `session-id` (older Codex: `session_id`) leave usage
// rows that name the session and the client API; the operator finds them by session in the admin API
// (rows, summary by session and by client API, CSV), the CLI (`tollgate usage --session --endpoint`) and
// the key holder's own usage — and the session id is never a metrics label. Chat completions carry the
// header here: it is read for every client API.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { admin, adminDialects, adminOk, assertError, startAdminE2E, type AdminE2E } from '../support/admin.js';
import { call, costOf, sdk, type Json } from '../support/e2e.js';
import { errorReply } from '../support/mock-builders.js';
import { scrape } from '../support/prometheus.js';

const nano = (usd: number): number => Math.round(usd * 1e9);
const sumNano = (rows: Json[]): number => rows.reduce((total, row) => total + nano(row.cost), 0);

for (const dialect of await adminDialects()) {
  describe(`agent sessions in the usage rows (${dialect.name})`, { skip: dialect.skip }, () => {
    let e: AdminE2E;
    let a: Json;
    let b: Json;
    const claude = `cc-${randomUUID()}`;
    const codex = `cx-${randomUUID()}`;
    const oldCodex = `cx-old-${randomUUID()}`;
    const long = `long-${'x'.repeat(300)}`;
    /** What the gateway reported charging for each successful request of the Claude Code session (nano-dollars). */
    const charged: number[] = [];

    const body = { model: 'gpt-test', messages: [{ role: 'user' as const, content: 'hello' }], max_tokens: 20 };
    const chat = (key: string, headers: Record<string, string>) => sdk(e.gw, key).chat.completions.create(body, { headers });
    const chatStream = (key: string, headers: Record<string, string>) => sdk(e.gw, key).chat.completions.create({ ...body, stream: true }, { headers });

    before(async () => {
      e = await startAdminE2E(dialect.name);
      a = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'agent-a', balance: 5 } });
      b = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'agent-b', balance: 5 } });
      const session = { 'x-claude-code-session-id': claude };
      for (let i = 0; i < 2; i++) charged.push(costOf((await chat(a.key, session)).usage));
      // A stream: its cost rides on the final chunk.
      for await (const chunk of await chatStream(a.key, session)) if (chunk.usage) charged.push(costOf(chunk.usage));
      // A failed request of the same session: a row, nothing charged.
      e.mock.handle(errorReply(500, 'upstream exploded'));
      await assert.rejects(chat(a.key, session));
      e.mock.handle(null);
      await chat(b.key, { 'session-id': codex });
      await chat(a.key, { session_id: oldCodex });
      await chat(a.key, {});
      await chat(a.key, { 'x-claude-code-session-id': long });
      assert.equal(charged.length, 3);
    });
    after(() => e?.close());

    test("GET /usage?session_id= lists exactly the session's requests, each naming its session and client API, costs adding up to what was charged", async () => {
      const rows: Json[] = (await adminOk(e.gw, 'GET', `/usage?session_id=${claude}`)).data;
      assert.equal(rows.length, 4);
      assert.ok(rows.every((r) => r.session_id === claude && r.endpoint === 'chat' && r.key_id === a.id));
      assert.deepEqual(rows.map((r) => r.status).sort(), [200, 200, 200, 502]);
      assert.equal(sumNano(rows), charged.reduce((x, y) => x + y, 0), 'the session cost what its requests were charged, to the nano-dollar');
      assert.equal(rows.find((r) => r.status === 502).cost, 0);
      // Codex's header (and its older spelling) name a session too; no header, no session.
      assert.deepEqual((await adminOk(e.gw, 'GET', `/usage?session_id=${codex}`)).data.map((r: Json) => r.key_id), [b.id]);
      assert.equal((await adminOk(e.gw, 'GET', `/usage?session_id=${oldCodex}`)).data.length, 1);
      const all: Json[] = (await adminOk(e.gw, 'GET', '/usage?limit=100')).data;
      assert.equal(all.length, 8);
      assert.equal(all.filter((r) => r.session_id === null).length, 1);
      // A runaway id is kept cut to 200 characters, and found by that.
      const cut = long.slice(0, 200);
      assert.ok(all.some((r) => r.session_id === cut));
      assert.equal((await adminOk(e.gw, 'GET', `/usage?session_id=${cut}`)).data.length, 1);
    });

    test('the summary groups by session and by client API; endpoint filters take the four client APIs and refuse others', async () => {
      const bySession: Json[] = (await adminOk(e.gw, 'GET', '/usage/summary?group_by=session')).data;
      const group = bySession.find((g) => g.group === claude);
      assert.deepEqual([group.requests, group.errors, nano(group.cost)], [4, 1, charged.reduce((x, y) => x + y, 0)]);
      assert.equal(bySession.find((g) => g.group === null).requests, 1, 'the request without a session');
      assert.equal(bySession.reduce((n, g) => n + g.requests, 0), 8);
      const one: Json = await adminOk(e.gw, 'GET', `/usage/summary?group_by=endpoint&session_id=${claude}`);
      assert.equal(one.group_by, 'endpoint');
      assert.deepEqual(one.data.map((g: Json) => [g.group, g.requests]), [['chat', 4]]);
      for (const api of ['chat', 'embeddings', 'messages', 'responses']) {
        const rows: Json[] = (await adminOk(e.gw, 'GET', `/usage?endpoint=${api}&session_id=${claude}`)).data;
        assert.equal(rows.length, api === 'chat' ? 4 : 0, api);
      }
      assertError(await admin(e.gw, 'GET', '/usage?endpoint=completions'), 400, 'invalid_request');
      assertError(await admin(e.gw, 'GET', '/usage?session_id='), 400, 'invalid_request');
      assertError(await admin(e.gw, 'GET', '/usage/summary?group_by=sessions'), 400, 'invalid_request');
    });

    test('the CSV export carries session_id, and filters by it', async () => {
      const res = await admin(e.gw, 'GET', `/usage.csv?session_id=${claude}`);
      assert.equal(res.status, 200);
      const records: Array<Record<string, string>> = parse(res.text, { columns: true });
      assert.equal(records.length, 4);
      assert.ok(records.every((r) => r.session_id === claude && r.endpoint === 'chat'));
    });

    test('tollgate usage --session ID --endpoint E prints the session’s rows; a bad endpoint is a clear error', async () => {
      const json = async (args: string[]) => {
        const result = await e.gw.cli(['usage', ...args, '--json']);
        assert.equal(result.code, 0, result.stderr);
        return JSON.parse(result.stdout) as Json[];
      };
      const rows = await json(['--session', claude]);
      assert.equal(rows.length, 4);
      assert.equal(sumNano(rows), charged.reduce((x, y) => x + y, 0));
      assert.equal((await json(['--session', claude, '--endpoint', 'chat'])).length, 4);
      assert.equal((await json(['--session', claude, '--endpoint', 'messages'])).length, 0);
      const table = await e.gw.cli(['usage', '--session', codex]);
      assert.equal(table.code, 0, table.stderr);
      assert.match(table.stdout, /\bAPI\b.*\bSESSION\b/);
      assert.ok(table.stdout.includes(codex) && table.stdout.includes('chat'));
      const bad = await e.gw.cli(['usage', '--endpoint', 'completions']);
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /endpoint.*chat, embeddings, messages, responses/);
    });

    test("the key holder finds their own session's rows and totals; another key's session is not theirs", async () => {
      const own = await call(e.gw, 'GET', `/key/usage?session_id=${claude}`, { key: a.key });
      assert.equal(own.status, 200, own.text);
      assert.equal(own.json.data.length, 4);
      const summary = await call(e.gw, 'GET', '/key/usage/summary?group_by=session', { key: a.key });
      assert.equal(summary.status, 200, summary.text);
      assert.equal(summary.json.data.find((g: Json) => g.group === claude).requests, 4);
      assert.equal((await call(e.gw, 'GET', `/key/usage?session_id=${claude}`, { key: b.key })).json.data.length, 0);
    });

    test('the session id is never a metrics label', async () => {
      const { text } = await scrape(e.gw);
      assert.ok(text.includes('endpoint="chat_completions"'));
      for (const id of [claude, codex, oldCodex]) assert.ok(!text.includes(id), 'no session id in /metrics');
    });
  });
}

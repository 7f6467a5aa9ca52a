// End to end: every error row of product.md §6 against the real gateway process. Errors the gateway
// decides itself must leave no trace (no hold, no ledger entry, no usage row, no upstream call); upstream
// failures do reach the upstream but release the hold, charge nothing and leave one usage row with cost 0.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { openSqliteFile } from '../../src/storage/sqlite/driver.js';
import { mockConfig, usageRowOf, type CreatedKey } from '../support/gateway-process.js';
import { errorReply, inSequence, stall, type MockReply, type MockUpstream } from '../support/mock-upstream.js';
import {
  assertChatOk,
  assertErrorResponse,
  call,
  closedPort,
  costOf,
  extendConfig,
  postChat,
  startE2E,
  stopE2E,
  type E2E,
  type Json,
  type RawResponse,
  waitFor,
} from '../support/e2e.js';
import { assertLedgerSettled, holdOf, ledgerKinds, UsageExpectations } from '../support/ledger-check.js';
import { chatCostNano, usdToNano } from '../support/money.js';

const SECRET = 'sk-mock-upstream-secret';
const messages = [{ role: 'user', content: 'Hello' }];

function chatModel(id: string, provider: string): string {
  return `  ${id}:
    type: chat
    upstreams: [{ provider: ${provider}, model: gpt-4o-mini }]
    price: { input: 1, output: 2 }
    context_window: 8000
    max_output_tokens: 1000
`;
}

/**
 * mockConfig plus a 4 KiB body limit and four more providers, each with retries 0 so every failure is one
 * attempt: errs (the mock, for scripted upstream errors), slow (the mock with first_byte_ms 300), dead
 * (a closed port) and nokey (kind openai with an empty api_key, pointing at the mock).
 */
function errorsConfig(mock: MockUpstream, deadPort: number): string {
  return extendConfig(mockConfig(mock), {
    server: '  max_body_bytes: 4096',
    providers: `  errs:
    kind: openai-compatible
    base_url: ${mock.url}
    api_key: ${SECRET}
    retries: 0
    cooldown: { failures: 1000, seconds: 1 }
  slow:
    kind: openai-compatible
    base_url: ${mock.url}
    retries: 0
    cooldown: { failures: 1000, seconds: 1 }
    timeouts: { connect_ms: 1000, first_byte_ms: 300, idle_ms: 300, total_ms: 5000 }
  dead:
    kind: openai-compatible
    base_url: http://127.0.0.1:${deadPort}/v1
    retries: 0
    cooldown: { failures: 1000, seconds: 1 }
  nokey:
    kind: openai
    base_url: ${mock.url}
    api_key: ''
`,
    models: chatModel('gpt-errs', 'errs') + chatModel('gpt-slow', 'slow') + chatModel('gpt-dead', 'dead') + chatModel('gpt-nokey', 'nokey'),
  });
}

describe('errors (product.md §6)', () => {
  let e: E2E;
  let main: CreatedKey;
  let limited: CreatedKey;
  let poor: CreatedKey;
  let empty: CreatedKey;
  let revoked: CreatedKey;

  /** Usage rows are checked at the end of the file, with one `tollgate usage --json` run per key. */
  const expectedRows = new UsageExpectations();

  before(async () => {
    const deadPort = await closedPort();
    e = await startE2E((mock) => errorsConfig(mock, deadPort));
    [main, limited, poor, empty, revoked] = await Promise.all([
      e.gw.createKey({ name: 'main', balance: 10 }),
      e.gw.createKey({ name: 'limited', balance: 10, models: ['gpt-test'] }),
      e.gw.createKey({ name: 'poor', balance: '0.0005', models: ['gpt-test'] }),
      e.gw.createKey({ name: 'empty', balance: 0 }),
      e.gw.createKey({ name: 'revoked', balance: 10 }),
    ]);
    const result = await e.gw.cli(['keys', 'revoke', revoked.id]);
    assert.equal(result.code, 0, result.stderr);
  });
  after(() => stopE2E(e));
  beforeEach(() => e.mock.reset());

  /** Runs `send` and proves it left no trace on `keyId`: same audit, no ledger entry, no upstream call. */
  async function leavesNoTrace(keyId: string, send: () => Promise<RawResponse>): Promise<RawResponse> {
    const audit = e.gw.audit(keyId);
    const entries = ledgerKinds(e.gw, keyId).length;
    const calls = e.mock.requests.length;
    const res = await send();
    assert.deepEqual(e.gw.audit(keyId), audit, 'no hold, no charge, no billed usage row');
    assert.equal(ledgerKinds(e.gw, keyId).length, entries, 'no ledger entry at all');
    assert.equal(e.mock.requests.length, calls, 'no upstream call');
    if (res.status !== 401) {
      // A request with a valid key still leaves its outcome row (issue 22): the status and code it got, nothing charged.
      const row = await waitFor(() => usageRowOf(e.gw.dbPath, res.headers.get('x-request-id')!));
      assert.deepEqual(row, { status: res.status, cost: 0, usage_source: 'none', error_code: res.json?.error?.code ?? null });
    }
    return res;
  }

  describe('400 invalid_request', () => {
    const cases: Array<{ name: string; body: string; param: string | null }> = [
      { name: 'malformed JSON', body: '{"model": "gpt-test", "messages": [', param: null },
      { name: 'a missing model', body: JSON.stringify({ messages }), param: 'model' },
      { name: 'messages that are not an array', body: JSON.stringify({ model: 'gpt-test', messages: 'hello' }), param: 'messages' },
      { name: 'max_tokens "x"', body: JSON.stringify({ model: 'gpt-test', messages, max_tokens: 'x' }), param: 'max_tokens' },
    ];
    for (const c of cases) {
      test(`${c.name} answers 400 without a hold, a charge, a usage row or an upstream call`, async () => {
        const res = await leavesNoTrace(main.id, () => call(e.gw, 'POST', '/chat/completions', { key: main.key, body: c.body, headers: { 'content-type': 'application/json' } }));
        const error = assertErrorResponse(res, 400, /^invalid_/);
        if (c.param) assert.equal(error.param, c.param);
      });
    }

    test('an embeddings request without input answers 400 naming input', async () => {
      const res = await leavesNoTrace(main.id, () => call(e.gw, 'POST', '/embeddings', { key: main.key, body: { model: 'embed-test' } }));
      assert.equal(assertErrorResponse(res, 400, /^invalid_/).param, 'input');
    });
  });

  test('401 invalid_api_key: missing, malformed, unknown and revoked keys all get one identical body and no upstream call', async () => {
    const body = { model: 'gpt-test', messages };
    const unknownKey = `tg-${'A'.repeat(43)}`;
    const attempts: Array<[string, Record<string, string>]> = [
      ['missing header', {}],
      ['not a bearer token', { authorization: 'Basic Zm9vOmJhcg==' }],
      ['malformed key', { authorization: 'Bearer not-a-tollgate-key' }],
      ['unknown tg- key', { authorization: `Bearer ${unknownKey}` }],
      ['revoked key', { authorization: `Bearer ${revoked.key}` }],
    ];
    const texts: string[] = [];
    for (const [, headers] of attempts) {
      const res = await leavesNoTrace(revoked.id, () => call(e.gw, 'POST', '/chat/completions', { body, headers }));
      assertErrorResponse(res, 401, 'invalid_api_key');
      texts.push(res.text);
    }
    for (const [i, text] of texts.entries()) assert.equal(text, texts[0], `${attempts[i]![0]} gets the same body`);
    // The other endpoints refuse the same way.
    for (const path of ['/models', '/key']) {
      const res = await call(e.gw, 'GET', path, { key: revoked.key });
      assertErrorResponse(res, 401, 'invalid_api_key');
      assert.equal(res.text, texts[0]);
    }
  });

  describe('402 insufficient_balance', () => {
    test('a hold larger than the balance answers 402 with metadata {hold, available, affordable_max_tokens} and param max_tokens', async () => {
      const res = await leavesNoTrace(poor.id, () => postChat(e.gw, poor.key, { model: 'gpt-test', messages, max_tokens: 1000 }));
      const error = assertErrorResponse(res, 402, 'insufficient_balance');
      assert.equal(error.param, 'max_tokens');
      assert.deepEqual(Object.keys(error.metadata).sort(), ['affordable_max_tokens', 'available', 'hold']);
      const { hold, available, affordable_max_tokens: affordable } = error.metadata as { hold: number; available: number; affordable_max_tokens: number };
      assert.equal(available, 0.0005);
      assert.ok(Number.isInteger(affordable) && affordable > 0 && affordable < 1000);
      // hold = input_estimate × 1000 + 1000 × 2000 nano; the largest max_out that fits the 500 000 nano available:
      const inputCost = usdToNano(hold) - 1000 * 2000;
      assert.ok(inputCost > 0 && inputCost % 1000 === 0, `the input part of the hold is whole tokens (${inputCost})`);
      assert.equal(affordable, Math.floor((500_000 - inputCost) / 2000));

      // One more token than affordable is still refused; exactly affordable is admitted and charged exactly.
      const over = await leavesNoTrace(poor.id, () => postChat(e.gw, poor.key, { model: 'gpt-test', messages, max_tokens: affordable + 1 }));
      assertErrorResponse(over, 402, 'insufficient_balance');
      const ok = await postChat(e.gw, poor.key, { model: 'gpt-test', messages, max_tokens: affordable });
      assertChatOk(ok, 'gpt-test');
      assert.equal(e.mock.requests[0]!.body.max_tokens, affordable);
      assert.equal(costOf(ok.json.usage), chatCostNano(11, 7));
      const audit = assertLedgerSettled(e.gw, poor.id);
      assert.equal(audit.spent, chatCostNano(11, 7));
      assert.equal(audit.balance, 500_000 - chatCostNano(11, 7));
      expectedRows.add({
        label: '402 retry with affordable_max_tokens',
        requestId: ok.headers.get('x-request-id')!,
        keyId: poor.id,
        model: 'gpt-test',
        upstreamModel: 'gpt-4o-mini',
        input: 11,
        output: 7,
        costNano: chatCostNano(11, 7),
      });
    });

    test('a key whose balance does not even cover the input answers 402 with affordable_max_tokens 0', async () => {
      const res = await leavesNoTrace(empty.id, () => postChat(e.gw, empty.key, { model: 'gpt-test', messages }));
      const error = assertErrorResponse(res, 402, 'insufficient_balance');
      assert.equal(error.param, null, 'the input alone does not fit: max_tokens is not the cause');
      assert.equal(error.metadata.affordable_max_tokens, 0);
      assert.equal(error.metadata.available, 0);
      assert.ok(error.metadata.hold > 0);
    });
  });

  test('404 model_not_found: an unknown model, a forbidden one and one whose provider has no api_key get the same body, with no upstream call', async () => {
    const forbidden = await leavesNoTrace(limited.id, () => postChat(e.gw, limited.key, { model: 'gpt-locked', messages }));
    const unknown = await leavesNoTrace(limited.id, () => postChat(e.gw, limited.key, { model: 'gpt-lockex', messages }));
    const unknownForAll = await leavesNoTrace(main.id, () => postChat(e.gw, main.key, { model: 'gpt-lockex', messages }));
    assertErrorResponse(forbidden, 404, 'model_not_found');
    assertErrorResponse(unknown, 404, 'model_not_found');
    assert.equal(forbidden.text.replaceAll('gpt-locked', 'gpt-lockex'), unknown.text);
    assert.equal(unknownForAll.text, unknown.text);
    // gpt-nokey's only provider (kind openai) has an empty api_key: it is not offered (ADR 0029).
    const keyless = await leavesNoTrace(main.id, () => postChat(e.gw, main.key, { model: 'gpt-nokey', messages }));
    assert.equal(keyless.text.replaceAll('gpt-nokey', 'gpt-lockex'), unknown.text);
    const embedForbidden = await leavesNoTrace(limited.id, () => call(e.gw, 'POST', '/embeddings', { key: limited.key, body: { model: 'embed-test', input: 'x' } }));
    const embedUnknown = await leavesNoTrace(limited.id, () => call(e.gw, 'POST', '/embeddings', { key: limited.key, body: { model: 'embed-tesx', input: 'x' } }));
    assertErrorResponse(embedForbidden, 404, 'model_not_found');
    assert.equal(embedForbidden.text.replaceAll('embed-test', 'embed-tesx'), embedUnknown.text);
  });

  test('413 request_too_large: a body over server.max_body_bytes is refused without an upstream call', async () => {
    const body = { model: 'gpt-test', messages: [{ role: 'user', content: 'x'.repeat(5000) }] };
    const res = await leavesNoTrace(main.id, () => postChat(e.gw, main.key, body));
    assertErrorResponse(res, 413, 'request_too_large');
    // Just under the limit still works.
    const small = await postChat(e.gw, main.key, { model: 'gpt-test', messages: [{ role: 'user', content: 'x'.repeat(3000) }] });
    assertChatOk(small, 'gpt-test');
  });

  test('415 unsupported_media_type: POST with text/plain or with no content-type', async () => {
    const json = JSON.stringify({ model: 'gpt-test', messages });
    const plain = await leavesNoTrace(main.id, () => call(e.gw, 'POST', '/chat/completions', { key: main.key, body: json, headers: { 'content-type': 'text/plain' } }));
    assertErrorResponse(plain, 415, 'unsupported_media_type');
    const none = await leavesNoTrace(main.id, () => call(e.gw, 'POST', '/chat/completions', { key: main.key, body: new TextEncoder().encode(json) }));
    assertErrorResponse(none, 415, 'unsupported_media_type');
    // application/json with parameters is JSON.
    const charset = await call(e.gw, 'POST', '/chat/completions', { key: main.key, body: json, headers: { 'content-type': 'application/json; charset=utf-8' } });
    assertChatOk(charset, 'gpt-test');
  });

  describe('upstream failures: they reach the upstream, release the hold, charge nothing and leave a usage row with cost 0', () => {
    interface FailureCase {
      model: string;
      provider: string;
      status: number;
      code: string | RegExp;
      /** The attempt status recorded for an upstream HTTP answer; omitted when there was none (timeout, refused). */
      attempt?: number;
      /** Upstream calls the request makes (0 for a connection that was refused). */
      calls: number;
    }

    async function upstreamFailure(c: FailureCase): Promise<{ res: RawResponse; error: Json }> {
      const before = e.gw.audit(main.id);
      const calls = e.mock.requests.length;
      const res = await postChat(e.gw, main.key, { model: c.model, messages });
      const error = assertErrorResponse(res, c.status, c.code);
      assert.equal(e.mock.requests.length - calls, c.calls, 'upstream calls');
      const audit = assertLedgerSettled(e.gw, main.id);
      assert.equal(audit.spent, before.spent, 'nothing charged');
      assert.equal(audit.balance, before.balance, 'balance unchanged');
      assert.equal(audit.captures, before.captures, 'no capture');
      assert.equal(audit.usageRows - before.usageRows, 1, 'one usage row');
      const requestId = res.headers.get('x-request-id')!;
      assert.equal(holdOf(e.gw, requestId)?.status, 'released', 'the hold was released');
      expectedRows.add({
        label: `upstream failure ${c.provider} → ${c.status}`,
        requestId,
        keyId: main.id,
        model: c.model,
        upstreamModel: 'gpt-4o-mini',
        provider: c.provider,
        status: c.status,
        attempts: c.attempt === undefined ? 'any' : [c.attempt],
        source: 'any',
        costNano: 0,
      });
      return { res, error };
    }

    const errs = (reply: MockReply) => {
      e.mock.handle(reply);
      return { model: 'gpt-errs', provider: 'errs', calls: 1 };
    };

    test('an upstream 400 keeps its status, message, code and param', async () => {
      const message = "Invalid value for 'temperature': must be <= 2.";
      const { error } = await upstreamFailure({
        ...errs(errorReply(400, message, { param: 'temperature', code: 'invalid_value' })),
        status: 400,
        code: 'invalid_value',
        attempt: 400,
      });
      assert.equal(error.message, message);
      assert.equal(error.param, 'temperature');
    });

    test('an upstream 404, 413 or 422 keeps its status with the upstream’s message', async () => {
      for (const status of [404, 413, 422]) {
        e.mock.handle(errorReply(status, `upstream says ${status}`));
        const before = e.gw.audit(main.id);
        const res = await postChat(e.gw, main.key, { model: 'gpt-errs', messages });
        const error = assertErrorResponse(res, status, /./);
        assert.equal(error.message, `upstream says ${status}`);
        const audit = assertLedgerSettled(e.gw, main.id);
        assert.equal(audit.spent, before.spent);
        assert.equal(audit.usageRows - before.usageRows, 1);
      }
    });

    test('an upstream 401 becomes 502 upstream_auth_failed, never 401, and never shows the provider key', async () => {
      const { res } = await upstreamFailure({
        ...errs(errorReply(401, `Incorrect API key provided: ${SECRET}. You can find your API key at https://platform.openai.com/account/api-keys.`, { code: 'invalid_api_key' })),
        status: 502,
        code: 'upstream_auth_failed',
        attempt: 401,
      });
      assert.ok(!res.text.includes(SECRET), 'the provider key is not in the body');
      assert.ok(!res.text.includes('mock-upstream-secret'));
      for (const [name, value] of res.headers) assert.ok(!value.includes(SECRET), `header ${name}`);
    });

    test('an upstream 403 also becomes 502 upstream_auth_failed', async () => {
      await upstreamFailure({ ...errs(errorReply(403, 'Project does not have access')), status: 502, code: 'upstream_auth_failed', attempt: 403 });
    });

    test('an upstream 429 with Retry-After: 7 stays 429 upstream_rate_limited with retry-after 7', async () => {
      const reply = { ...errorReply(429, 'Rate limit reached for gpt-4o-mini'), headers: { 'retry-after': '7' } };
      const { res } = await upstreamFailure({ ...errs(reply), status: 429, code: 'upstream_rate_limited', attempt: 429 });
      assert.equal(res.headers.get('retry-after'), '7');
    });

    test('a streaming request whose upstream fails before the stream starts gets a JSON error, not SSE', async () => {
      e.mock.handle(errorReply(500, 'The server had an error while processing your request.'));
      const before = e.gw.audit(main.id);
      const res = await postChat(e.gw, main.key, { model: 'gpt-errs', messages, stream: true });
      assertErrorResponse(res, 502, 'upstream_error');
      assert.equal(e.mock.requests.length, 1);
      const audit = assertLedgerSettled(e.gw, main.id);
      assert.equal(audit.spent, before.spent);
      assert.equal(audit.usageRows - before.usageRows, 1);
    });

    test('an upstream 500 becomes 502 upstream_error', async () => {
      await upstreamFailure({ ...errs(errorReply(500, 'The server had an error while processing your request.')), status: 502, code: 'upstream_error', attempt: 500 });
    });

    test('an upstream that never answers within first_byte_ms becomes 504 upstream_timeout', async () => {
      e.mock.handle(stall());
      await upstreamFailure({ model: 'gpt-slow', provider: 'slow', calls: 1, status: 504, code: 'upstream_timeout' });
    });

    test('a refused connection becomes 502 upstream_error', async () => {
      await upstreamFailure({ model: 'gpt-dead', provider: 'dead', calls: 0, status: 502, code: 'upstream_error' });
    });

    test('a retryable upstream 500 is retried once on a provider with the default retries: 1, under one hold, with one charge', async () => {
      // The "mock" provider of mockConfig leaves retries at its default (1): 502 only "after retries" (§3, §6).
      e.mock.handle(inSequence(errorReply(500, 'The server had an error while processing your request.')));
      const before = e.gw.audit(main.id);
      const res = await postChat(e.gw, main.key, { model: 'gpt-test', messages });
      assert.equal(e.mock.requests.length, 2, 'one retry after the 500');
      assertChatOk(res, 'gpt-test');
      assert.equal(costOf(res.json.usage), chatCostNano(11, 7));
      const audit = assertLedgerSettled(e.gw, main.id);
      assert.equal(audit.spent - before.spent, chatCostNano(11, 7), 'charged once');
      assert.equal(audit.captures - before.captures, 1);
      expectedRows.add({
        label: 'retried 500',
        requestId: res.headers.get('x-request-id')!,
        keyId: main.id,
        model: 'gpt-test',
        upstreamModel: 'gpt-4o-mini',
        input: 11,
        output: 7,
        costNano: chatCostNano(11, 7),
        attempts: [500, 200],
      });
    });
  });

  test(
    '503 ledger_unavailable with Retry-After when the ledger cannot be written, and no upstream call',
    { timeout: 60_000 },
    async () => {
      const audit = e.gw.audit(main.id);
      const entries = ledgerKinds(e.gw, main.id).length;
      const calls = e.mock.requests.length;
      // Hold SQLite's write lock from outside the gateway until its answer arrives (its busy timeout may be seconds).
      const db = openSqliteFile(e.gw.dbPath);
      let res: RawResponse;
      try {
        db.exec('BEGIN EXCLUSIVE');
        res = await postChat(e.gw, main.key, { model: 'gpt-test', messages }, { signal: AbortSignal.timeout(50_000) });
      } finally {
        if (db.inTransaction) db.exec('ROLLBACK');
        db.close();
      }
      assertErrorResponse(res, 503, 'ledger_unavailable');
      assert.ok(res.headers.get('retry-after'), 'Retry-After header');
      assert.equal(e.mock.requests.length, calls, 'fail closed: no upstream call');
      assert.deepEqual(e.gw.audit(main.id), audit, 'no hold, no charge, no usage row');
      assert.equal(ledgerKinds(e.gw, main.id).length, entries);
      // Once the lock is gone the gateway serves again.
      const ok = await postChat(e.gw, main.key, { model: 'gpt-test', messages });
      assertChatOk(ok, 'gpt-test');
    },
  );

  test('every response carries an x-request-id, including unknown routes', async () => {
    const responses = await Promise.all([
      call(e.gw, 'GET', '/no-such-route', { key: main.key }),
      call(e.gw, 'POST', '/no-such-route', { key: main.key, body: {} }),
      call(e.gw, 'GET', '/no-such-route'),
      call(e.gw, 'GET', '//no-such-route'),
      call(e.gw, 'GET', '/models', { key: main.key }),
      call(e.gw, 'GET', '/key'),
    ]);
    const ids = responses.map((r) => r.headers.get('x-request-id'));
    for (const id of ids) assert.ok(id, 'x-request-id present');
    assert.equal(new Set(ids).size, ids.length, 'request ids are unique');
    for (const res of responses.slice(0, 4)) assertErrorResponse(res, 404, /./);
  });

  test('every billed request left one usage row and, for every key, the rows add up to a settled, consistent ledger', async () => {
    await expectedRows.verify(e.gw, [main.id, limited.id, poor.id, empty.id, revoked.id]);
  });
});

// Prices of product.md §13 end to end: Anthropic cache writes (5-minute and 1-hour) billed at their own
// prices, a request whose input crosses a tier boundary held at the estimate's tier and settled at the
// real usage's, and a fixed per-request fee — each checked in the response, the usage row and the ledger.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { assertLedgerSettled, holdOf } from '../support/ledger-check.js';
import { costOf, extendConfig, parseJsonOutput, postChat, call, stopE2E, startE2E, type E2E, type Json } from '../support/e2e.js';
import { ANTHROPIC_MOCK_KEY, startMockAnthropic, type MockAnthropic } from '../support/mock-anthropic.js';
import { mockConfig } from '../support/gateway-process.js';
import { chatCompletion, embeddingList, makeUsage } from '../support/mock-upstream.js';

const DOCS_STREAM = readFileSync(new URL('../fixtures/upstream/anthropic-docs/cache-write-mixed-ttl.sse', import.meta.url));

describe('prices: cache writes, tiers and the request fee', () => {
  let e: E2E;
  let anthropic: MockAnthropic;

  before(async () => {
    anthropic = await startMockAnthropic();
    e = await startE2E((mock) =>
      extendConfig(mockConfig(mock), {
        providers: `  anthropic-mock: { kind: anthropic, base_url: ${anthropic.url}, api_key: ${ANTHROPIC_MOCK_KEY} }`,
        models: `  claude-cache:
    upstreams: [{ provider: anthropic-mock, model: claude-sonnet-4-5 }]
    price: { input: 3, output: 15, cached_input: 0.30, cache_write: 3.75, cache_write_1h: 6 }
    max_output_tokens: 1000
  gpt-tiered:
    upstreams: [{ provider: mock, model: gpt-4o-mini }]
    price:
      input: 1
      output: 2
      tiers: [{ above_input_tokens: 100, input: 4, output: 8 }]
    max_output_tokens: 1000
  embed-fee:
    type: embedding
    upstreams: [{ provider: mock, model: text-embedding-3-small }]
    price: { input: 0.1, request: 0.00025 }`,
      }),
    );
  });

  after(async () => {
    await anthropic?.close();
    await stopE2E(e);
  });

  test('an Anthropic stream with 5-minute and 1-hour cache writes is billed at each price', async () => {
    anthropic.handle({ rawSse: DOCS_STREAM });
    const key = await e.gw.createKey({ name: 'cache', balance: 1 });
    const res = await postChat(e.gw, key.key, { model: 'claude-cache', stream: true, messages: [{ role: 'user', content: 'What does the manual say?' }] });
    assert.equal(res.status, 200);
    const chunks = res.text.split('\n\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)) as Json);
    const usage = chunks.at(-1).usage;
    assert.deepEqual(usage.prompt_tokens_details, { cached_tokens: 1000, cache_write_tokens: 3000 });
    assert.equal(usage.prompt_tokens, 4021);
    // 21 × $3 + 1000 × $0.30 + 2000 × $3.75 + 1000 × $6 + 12 × $15, per 1M tokens
    assert.equal(costOf(usage), 14_043_000);
    const rows = parseJsonOutput<Json[]>(await e.gw.cli(['usage', '--key', key.id, '--json']), 'usage --json');
    assert.equal(rows.length, 1);
    assert.equal(rows[0].cache_write_tokens, 3000);
    assert.equal(rows[0].cached_input_tokens, 1000);
    assert.equal(rows[0].input_tokens, 4021);
    const audit = assertLedgerSettled(e.gw, key.id);
    assert.equal(audit.spent, 14_043_000);
    // Metrics count the writes as their own token kind, apart from plain input and cache reads.
    const metrics = await (await fetch(`${e.gw.origin}/metrics`)).text();
    const tokens = (kind: string) => Number(new RegExp(`^tollgate_tokens_total\\{(?=[^}]*model="claude-cache")(?=[^}]*kind="${kind}")[^}]*\\} (\\d+)$`, 'm').exec(metrics)?.[1]);
    assert.deepEqual([tokens('input'), tokens('cached_input'), tokens('cache_write'), tokens('output')], [21, 1000, 3000, 12]);
  });

  test('a request whose real input crosses the tier boundary is held at the low tier and settled at the high one', async () => {
    e.mock.handle(() => ({ json: chatCompletion({ usage: makeUsage(150, 5) }) }));
    const key = await e.gw.createKey({ name: 'tier-cross', balance: 1 });
    const res = await postChat(e.gw, key.key, { model: 'gpt-tiered', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(res.status, 200);
    const requestId = res.headers.get('x-request-id')!;
    const hold = holdOf(e.gw, requestId)!;
    // Held at $1 / $2 (the estimate is far below 100 tokens): input_estimate × 1000 + 10 × 2000 nano.
    const inputPart = hold.amount - 10 * 2000;
    assert.ok(inputPart > 0 && inputPart % 1000 === 0 && inputPart / 1000 < 100, `hold ${hold.amount} is at the low tier`);
    assert.equal(res.json.usage.prompt_tokens, 150);
    // Settled at $4 / $8: 150 × 4000 + 5 × 8000 nano.
    assert.equal(costOf(res.json.usage), 640_000);
    assert.equal(assertLedgerSettled(e.gw, key.id).spent, 640_000);
  });

  test('a request whose estimate is above the boundary is held at the high tier', async () => {
    e.mock.handle(() => ({ json: chatCompletion({ usage: makeUsage(150, 5) }) }));
    const key = await e.gw.createKey({ name: 'tier-high', balance: 1 });
    const res = await postChat(e.gw, key.key, { model: 'gpt-tiered', max_tokens: 10, messages: [{ role: 'user', content: 'word '.repeat(140) }] });
    assert.equal(res.status, 200);
    const hold = holdOf(e.gw, res.headers.get('x-request-id')!)!;
    const inputPart = hold.amount - 10 * 8000;
    assert.ok(inputPart % 4000 === 0 && inputPart / 4000 > 100, `hold ${hold.amount} is at the high tier`);
    assert.equal(costOf(res.json.usage), 640_000);
  });

  test('a per-request fee is held and charged once, on top of the tokens', async () => {
    e.mock.handle(() => ({ json: embeddingList([[0.1, 0.2]], { promptTokens: 40 }) }));
    const key = await e.gw.createKey({ name: 'fee', balance: 1 });
    const res = await call(e.gw, 'POST', '/embeddings', { key: key.key, body: { model: 'embed-fee', input: 'hello fee' } });
    assert.equal(res.status, 200);
    const hold = holdOf(e.gw, res.headers.get('x-request-id')!)!;
    assert.equal((hold.amount - 250_000) % 100, 0, 'the hold is the counted input at $0.10/1M plus the $0.00025 fee');
    // 40 × 100 nano + 250_000 nano
    assert.equal(costOf(res.json.usage), 254_000);
    assert.equal(assertLedgerSettled(e.gw, key.id).spent, 254_000);
  });
});

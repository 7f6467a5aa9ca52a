// Price modifiers read from the response, end to end through chat completions (product.md §14): an
// Anthropic answer served at `speed: "fast"`, in the US, at priority, with web searches is charged the
// model's fast prices × its geo and tier multipliers + its per-call fees; an OpenAI answer at
// `service_tier: "flex"` or `"priority"` × its tier multiplier; an answer served by another configured
// model at that model's prices, by an unknown one at the requested model's — each checked to the
// nano-dollar in the answer's usage.cost, the usage row and the ledger.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertLedgerSettled } from '../support/ledger-check.js';
import { costOf, extendConfig, parseJsonOutput, postChat, startE2E, stopE2E, type E2E, type Json } from '../support/e2e.js';
import { ANTHROPIC_MOCK_KEY, anthropicReply, anthropicStreamEvents, startMockAnthropic, type MockAnthropic } from '../support/mock-anthropic.js';
import { mockConfig } from '../support/gateway-process.js';
import { chatChunks, chatCompletion, makeUsage, sseFromChunks, type JsonReply, type SseEvent } from '../support/mock-upstream.js';

const MESSAGES = [{ role: 'user', content: 'Search the web for the answer.' }];

describe('prices: modifiers the answer reports', () => {
  let e: E2E;
  let anthropic: MockAnthropic;

  before(async () => {
    anthropic = await startMockAnthropic();
    e = await startE2E((mock) =>
      extendConfig(mockConfig(mock), {
        providers: `  anthropic-mock: { kind: anthropic, base_url: ${anthropic.url}, api_key: ${ANTHROPIC_MOCK_KEY} }`,
        models: `  claude-opus:
    upstreams: [{ provider: anthropic-mock, model: claude-opus-4-6 }]
    price:
      input: 5
      output: 25
      fast: { input: 30, output: 150 }
      geo_multipliers: { us: 1.1 }
      tier_multipliers: { priority: 1.5 }
      per_call: { web_search: 0.01 }
    max_output_tokens: 1000
  claude-sonnet:
    upstreams: [{ provider: anthropic-mock, model: claude-sonnet-4-5 }]
    price: { input: 3, output: 15 }
    max_output_tokens: 1000
  gpt-tiers:
    upstreams: [{ provider: mock, model: gpt-tiers-upstream }]
    price: { input: 2, output: 8, tier_multipliers: { flex: 0.5, priority: 2 } }
    max_output_tokens: 1000
  gpt-small:
    upstreams: [{ provider: mock, model: gpt-small-upstream }]
    price: { input: 1, output: 2 }
    max_output_tokens: 1000
  gpt-big:
    upstreams: [{ provider: mock, model: gpt-big-upstream }]
    price: { input: 10, output: 20 }
    max_output_tokens: 1000`,
      }),
    );
  });

  after(async () => {
    await anthropic?.close();
    await stopE2E(e);
  });

  /** One call with a fresh key: the cost the answer reports, checked against the usage row and the ledger. */
  async function charged(model: string, stream = false): Promise<number> {
    const key = await e.gw.createKey({ name: `${model}-${stream ? 'stream' : 'whole'}`, balance: 1 });
    const res = await postChat(e.gw, key.key, { model, messages: MESSAGES, max_tokens: 100, ...(stream ? { stream: true } : {}) });
    assert.equal(res.status, 200, res.text);
    const usage = stream
      ? res.text
          .split('\n\n')
          .filter((l) => l.startsWith('data: {'))
          .map((l) => JSON.parse(l.slice(6)) as Json)
          .at(-1).usage
      : res.json.usage;
    const cost = costOf(usage);
    const rows = parseJsonOutput<Json[]>(await e.gw.cli(['usage', '--key', key.id, '--json']), 'usage --json');
    assert.equal(Math.round(rows[0].cost * 1e9), cost, 'the usage row has the cost the answer reported');
    assert.equal(assertLedgerSettled(e.gw, key.id).spent, cost, 'and the ledger charged it');
    return cost;
  }

  test('Anthropic fast, US-only, priority, two web searches: fast prices × 1.1 × 1.5, plus 2 × $0.01', async () => {
    anthropic.handle((req) => {
      const reply = anthropicReply(req) as JsonReply;
      const json = reply.json as Json;
      json.usage = { input_tokens: 1000, output_tokens: 40, speed: 'fast', inference_geo: 'us', service_tier: 'priority', server_tool_use: { web_search_requests: 2 } };
      return reply;
    });
    // (1000 × $30 + 40 × $150) / 1M × 1.1 × 1.5 = $0.0594, + $0.02
    assert.equal(await charged('claude-opus'), 59_400_000 + 20_000_000);
  });

  test('the same in a stream: message_start says fast and US, message_delta the web search', async () => {
    anthropic.handle((req) => {
      const events = anthropicStreamEvents(req.body as Record<string, unknown>).map((event): SseEvent => {
        const { event: name, data } = event as { event: string; data: string };
        const payload = JSON.parse(data) as Json;
        if (payload.type === 'message_start') payload.message.usage = { input_tokens: 1000, output_tokens: 1, speed: 'fast', inference_geo: 'us', service_tier: 'standard' };
        if (payload.type === 'message_delta') payload.usage = { output_tokens: 40, server_tool_use: { web_search_requests: 1 } };
        return { event: name, data: JSON.stringify(payload) };
      });
      return { sse: events };
    });
    // (1000 × $30 + 40 × $150) / 1M × 1.1 (no multiplier for "standard") = $0.0396, + $0.01
    assert.equal(await charged('claude-opus', true), 39_600_000 + 10_000_000);
  });

  test('an answer that reports no modifier is charged the usual prices', async () => {
    anthropic.handle((req) => {
      const reply = anthropicReply(req) as JsonReply;
      (reply.json as Json).usage = { input_tokens: 1000, output_tokens: 40 };
      return reply;
    });
    assert.equal(await charged('claude-opus'), 6_000_000);
  });

  test('an Anthropic answer served by another configured model is charged that model’s prices; an unknown one the requested model’s', async () => {
    const servedBy = (model: string) =>
      anthropic.handle((req) => {
        const reply = anthropicReply(req) as JsonReply;
        Object.assign(reply.json as Json, { model, usage: { input_tokens: 1000, output_tokens: 40 } });
        return reply;
      });
    servedBy('claude-opus-4-6');
    assert.equal(await charged('claude-sonnet'), 6_000_000, '1000 × $5 + 40 × $25 (opus), not $3 / $15');
    servedBy('claude-sonnet-4-5-20250929');
    assert.equal(await charged('claude-sonnet'), 3_600_000, 'a dated name the config does not know: sonnet’s prices');
  });

  test('OpenAI service_tier flex and priority: × 0.5 and × 2, whole and streamed', async () => {
    const usage = makeUsage(1000, 40);
    e.mock.handle(() => ({ json: { ...chatCompletion({ model: 'gpt-tiers-upstream', usage }), service_tier: 'flex' } }));
    // (1000 × $2 + 40 × $8) / 1M = $0.00232
    assert.equal(await charged('gpt-tiers'), 1_160_000);
    e.mock.handle(() => sseFromChunks(chatChunks({ model: 'gpt-tiers-upstream', usage }).map((chunk) => ({ ...chunk, service_tier: 'priority' }))));
    assert.equal(await charged('gpt-tiers', true), 4_640_000);
    e.mock.handle(() => ({ json: chatCompletion({ model: 'gpt-tiers-upstream', usage }) }));
    assert.equal(await charged('gpt-tiers'), 2_320_000, 'service_tier "default": no multiplier configured');
  });

  test('an OpenAI answer served by another configured model is charged its prices; a dated name the requested model’s', async () => {
    const usage = makeUsage(1000, 40);
    e.mock.handle(() => ({ json: chatCompletion({ model: 'gpt-big-upstream', usage }) }));
    assert.equal(await charged('gpt-small'), 10_800_000, '1000 × $10 + 40 × $20');
    e.mock.handle(() => ({ json: chatCompletion({ model: 'gpt-small-upstream-2026-01-01', usage }) }));
    assert.equal(await charged('gpt-small'), 1_080_000, '1000 × $1 + 40 × $2');
  });
});

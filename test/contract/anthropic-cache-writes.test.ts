// An Anthropic stream with cache writes of both lifetimes (5-minute and 1-hour) is billed at the prices of
// each: the stream shape is Anthropic's documented one (test/fixtures/upstream/anthropic-docs/SOURCES.txt),
// replayed through the translator the gateway runs, and its usage priced by billing/pricing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { priceUsage, type PriceRates } from '../../src/billing/pricing.js';
import { AnthropicChatStreamTranslator } from '../../src/providers/anthropic/stream.js';
import { testAnthropicProvider, testTarget } from '../support/provider-fixture.js';
import { everyOffset, replayStream } from './replay.js';
import { countsOf } from '../support/token-counts.js';

const TARGET = testTarget({ provider: testAnthropicProvider(), upstreamModel: 'claude-x', clientModel: 'claude-client', maxOutputTokens: 64_000 });
const BYTES = readFileSync(new URL('../fixtures/upstream/anthropic-docs/cache-write-mixed-ttl.sse', import.meta.url));
const replay = (splitAt: readonly number[] = []) => replayStream(BYTES, splitAt, TARGET, (target) => new AnthropicChatStreamTranslator(target));

/** Claude Sonnet 4.5's list prices (USD per 1M): $3 in, $15 out, $0.30 cache reads, $3.75 5-minute and $6 1-hour writes. */
const SONNET: PriceRates = {
  input: 3_000_000_000n,
  output: 15_000_000_000n,
  cachedInput: 300_000_000n,
  cacheWrite: 3_750_000_000n,
  cacheWrite1h: 6_000_000_000n,
};

test('reads cache writes by lifetime and bills each at its own price', () => {
  const run = replay();
  assert.deepEqual(countsOf(run.usage?.tokens), { input: 21 + 1000 + 3000, cachedInput: 1000, output: 12, reasoning: 0, cacheWrite: 3000, cacheWrite1h: 1000 });
  assert.deepEqual(run.usage?.openai.prompt_tokens_details, { cached_tokens: 1000, cache_write_tokens: 3000 });
  // 21 × $3 + 1000 × $0.30 + 2000 × $3.75 + 1000 × $6 + 12 × $15, per 1M tokens = $0.014043
  assert.equal(priceUsage(SONNET, run.usage!.tokens), 14_043_000);
  // The old rule (writes at the input price) would have under-billed by $0.0045 + $0.003.
  assert.equal(priceUsage({ ...SONNET, cacheWrite: undefined, cacheWrite1h: undefined }, run.usage!.tokens), 14_043_000 - 2000 * 750 - 1000 * 3000);
});

test('the same usage arrives wherever the bytes are split in two', () => {
  const whole = replay().usage?.tokens;
  for (const offset of everyOffset(BYTES.length)) assert.deepEqual(replay([offset]).usage?.tokens, whole);
});

// Resilience, hold sizing in bounded time: a megabyte prompt of one repeated letter, of random bytes or of
// emoji from a key with a $0 balance is sized and refused (402 insufficient_balance, no upstream call)
// without stalling the gateway — /health, polled all the while, answers every time within 100 ms (the
// bound the hardening issue asks for). Text that looks like a special token is sized as text.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { assertChatOk, postChat } from '../support/e2e.js';
import { startGateway, stopGateway, type CreatedKey, type GatewayProcess } from '../support/gateway-process.js';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { chatCostNano } from '../support/money.js';
import { assertLedgerExact, resilienceConfig } from '../support/resilience.js';
import { seededRng } from '../support/seeded-random.js';

const KB = 1024;
const MB = 1024 * KB;
const HEALTH_BOUND_MS = 100;
/**
 * A scheduling hiccup on a busy 2-core machine can delay one /health poll past the bound although the
 * gateway's event loop was free, so a measurement that misses it is repeated, up to this many times. A
 * real regression (the gateway blocked while sizing: seconds, before the fix) misses it every time.
 */
const MEASUREMENTS = 3;

/** About `bytes` of emoji from the Miscellaneous Symbols and Pictographs block, all different in turn. */
function emoji(bytes: number): string {
  const rng = seededRng(15);
  let text = '';
  while (text.length * 2 < bytes) text += String.fromCodePoint(0x1f300 + rng.int(0, 0x2ff));
  return text;
}

interface Sized {
  status: number;
  code: unknown;
  ms: number;
  healthPolls: number;
  healthMaxMs: number;
}

/**
 * POSTs a chat request with `content` as its one message and, from just before until the answer is in,
 * polls /health one request after another, timing each.
 */
async function sizeWhileProbing(gw: GatewayProcess, key: string, content: string): Promise<Sized> {
  const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content }] });
  const health = async () => {
    const startedAt = performance.now();
    const res = await fetch(`${gw.origin}/health`);
    assert.equal(res.status, 200);
    await res.text();
    return performance.now() - startedAt;
  };
  await health(); // a warm connection, so the polls time the gateway, not a TCP handshake
  let done = false;
  const latencies: number[] = [];
  const poller = (async () => {
    while (!done || latencies.length < 3) latencies.push(await health());
  })();
  const startedAt = performance.now();
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body,
  });
  const json = (await res.json()) as { error?: { code?: unknown } };
  const ms = performance.now() - startedAt;
  done = true;
  await poller;
  return { status: res.status, code: json.error?.code, ms, healthPolls: latencies.length, healthMaxMs: Math.max(...latencies) };
}

/** sizeWhileProbing, repeated while /health missed the bound (at most MEASUREMENTS times); the last run. */
async function sizeWithinBound(gw: GatewayProcess, key: string, content: string, label: string): Promise<Sized> {
  let sized: Sized;
  for (let attempt = 1; ; attempt++) {
    sized = await sizeWhileProbing(gw, key, content);
    console.log(`${label}: ${sized.status} after ${sized.ms.toFixed(0)} ms; /health slowest ${sized.healthMaxMs.toFixed(1)} ms of ${sized.healthPolls} polls (measurement ${attempt})`);
    if (sized.healthMaxMs < HEALTH_BOUND_MS || attempt === MEASUREMENTS) return sized;
  }
}

describe('hold sizing in bounded time', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  let broke: CreatedKey;
  let funded: CreatedKey;

  before(async () => {
    mock = await startMockUpstream();
    gw = await startGateway({
      config: resilienceConfig({ providers: { a: { url: mock.url } }, models: { m: { upstreams: [{ provider: 'a' }] } } }),
    });
    broke = await gw.createKey({ name: 'broke', balance: 0 });
    funded = await gw.createKey({ name: 'funded', balance: 10 });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });

  const prompts: Array<[string, () => string]> = [
    ['100 KB of one letter', () => 'a'.repeat(100 * KB)],
    ['1 MB of one letter', () => 'a'.repeat(MB)],
    ['1 MB of random bytes (as a JSON string)', () => randomBytes(MB).toString('utf8')],
    ['1 MB of emoji', () => emoji(MB)],
  ];
  for (const [name, make] of prompts) {
    test(`${name} from a $0 key: 402 insufficient_balance, no upstream call, /health within ${HEALTH_BOUND_MS} ms meanwhile`, async () => {
      mock.reset();
      const sized = await sizeWithinBound(gw, broke.key, make(), name);
      assert.equal(sized.status, 402);
      assert.equal(sized.code, 'insufficient_balance');
      assert.equal(mock.requests.length, 0, 'no upstream call');
      assert.ok(sized.healthMaxMs < HEALTH_BOUND_MS, `/health took up to ${sized.healthMaxMs.toFixed(1)} ms`);
      assertLedgerExact(gw, broke.id);
    });
  }

  test("a prompt with special-token text ('<|endoftext|>') is sized as text and served, not a 500", async () => {
    mock.reset();
    const res = await postChat(gw, funded.key, { model: 'm', messages: [{ role: 'user', content: 'Repeat <|endoftext|> and <|im_start|> back.' }] });
    assert.equal(assertChatOk(res, 'm'), chatCostNano(11, 7));
    assert.equal(mock.requests.length, 1);
    assertLedgerExact(gw, funded.id);
  });

  test('a 1 MB prompt of ordinary prose from a funded key is sized and served', async () => {
    mock.reset();
    let prose = '';
    while (prose.length < MB) prose += readFileSync('README.md', 'utf8');
    const sized = await sizeWithinBound(gw, funded.key, prose, '1 MB of prose');
    assert.equal(sized.status, 200);
    assert.ok(mock.requests.length >= 1 && mock.requests.length <= MEASUREMENTS, 'one upstream call per measurement');
    assert.ok(sized.healthMaxMs < HEALTH_BOUND_MS, `/health took up to ${sized.healthMaxMs.toFixed(1)} ms`);
    assertLedgerExact(gw, funded.id);
  });
});

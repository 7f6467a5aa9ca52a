// upstream.cooling / upstream.recovered written to the outbox from the health table's transitions
// (docs/adr/0052-signed-webhooks.md): the cooling event names the upstream, its end and last error, with a
// dedupe key per cool-down window (two gateways tripping together write one); a database that refuses the
// write is logged, never thrown into the request that tripped it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { upstreamEvents } from '../../../src/notifications/upstream-events.js';
import type { NewWebhookEvent, WebhookStore } from '../../../src/storage/types.js';

const T0 = 1_750_000_000_000;

test('cooling and recovered events, one dedupe key per upstream and window', async () => {
  const written: NewWebhookEvent[] = [];
  const store = { enqueue: async (event: NewWebhookEvent) => (written.push(event), true) } as unknown as WebhookStore;
  let now = T0;
  const events = upstreamEvents(store, pino({ level: 'silent' }), () => now);
  events.cooling('openai-main', 'gpt-4o', T0 + 30_000, { status: 503, message: 'overloaded' });
  now += 1_000; // another gateway, a second later, in the same window
  events.cooling('openai-main', 'gpt-4o', now + 30_000, { status: 503, message: 'overloaded' });
  events.recovered('openai-main', 'gpt-4o');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(written[0], {
    type: 'upstream.cooling',
    data: { provider: 'openai-main', upstream_model: 'gpt-4o', cooling_until: new Date(T0 + 30_000).toISOString(), last_error: { status: 503, message: 'overloaded' } },
    dedupeKey: `upstream.cooling:openai-main:gpt-4o:${Math.floor(T0 / 30_000)}`,
  });
  assert.equal(written[1]!.dedupeKey, written[0]!.dedupeKey);
  assert.deepEqual(written[2], { type: 'upstream.recovered', data: { provider: 'openai-main', upstream_model: 'gpt-4o' } });
});

test('a refused write is logged, not thrown', async () => {
  const lines: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
  const store = { enqueue: async () => Promise.reject(new Error('database is locked')) } as unknown as WebhookStore;
  upstreamEvents(store, log).recovered('p', 'm');
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.match(lines.join(''), /webhook event not written/);
});

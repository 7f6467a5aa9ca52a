// A Responses stream under a growing hold (billing.hold_mode: growing, product.md §13), in process: when
// the key cannot cover the next step of output, the stream ends — as a Responses stream must end — with a
// `response.incomplete` (reason max_output_tokens) carrying the usage charged: exactly the output delivered.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess, type InProcessGateway } from '../../support/in-process.js';
import { responseEvents, responsesConfig, sseOfEvents, startMockResponses, UPSTREAM_HEADERS, type MockResponses } from '../../support/mock-responses.js';
import { slowDrip } from '../../support/mock-upstream.js';
import { usdToNano } from '../../support/money.js';
import { assertMatchesSchema } from '../../support/openapi.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- events are arbitrary JSON
type Json = any;

const STEP = 10;
const BODY = { model: 'gpt-resp', input: 'Write at length.', stream: true };

describe('a Responses stream cut by a growing hold (in process)', () => {
  let upstream: MockResponses;
  let gw: InProcessGateway;

  before(async () => {
    upstream = await startMockResponses();
    gw = await startInProcess(() => responsesConfig(upstream, `billing:\n  hold_mode: growing\n  growing_step_tokens: ${STEP}\n`));
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  test('ends with response.incomplete (max_output_tokens) at the step the key could not cover, billed for the output delivered', async () => {
    // One token per delta, each its own upstream read.
    upstream.handle((req) => {
      const events = responseEvents(req.body).filter((e) => e.type !== 'response.output_text.delta');
      const at = events.findIndex((e) => e.type === 'response.output_text.done');
      const item = events.find((e) => e.type === 'response.output_item.added')!.item as { id: string };
      const deltas = Array.from({ length: 200 }, () => ({ type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: ' w', logprobs: [] }));
      const all = [...events.slice(0, at), ...deltas, ...events.slice(at)].map((e, i) => ({ ...e, sequence_number: i }));
      return slowDrip(2, { sse: sseOfEvents(all), headers: { ...UPSTREAM_HEADERS } })(req, undefined as never);
    });
    const probe = await gw.issueKey({ name: 'probe' });
    const quote = (await gw.call('POST', '/responses', { key: probe.secret, headers: { 'x-tollgate-dry-run': '1' }, body: BODY })).json<Json>();
    const firstHold = usdToNano(quote.hold);
    assert.equal(firstHold, quote.input_tokens * 1000 + STEP * 2000, 'the first hold: the input and one step');
    const key = await gw.issueKey({ name: 'three-steps', balance: firstHold + 2 * STEP * 2000 });
    const res = await gw.call('POST', '/responses', { key: key.secret, body: BODY });
    assert.equal(res.statusCode, 200);
    const events = res.body
      .slice(0, -2)
      .split('\n\n')
      .map((frame) => JSON.parse(frame.split('\n').at(-1)!.slice('data: '.length)) as Json);
    for (const event of events) assertMatchesSchema('ResponseStreamEvent', event);
    const last = events.at(-1);
    assert.equal(last.type, 'response.incomplete');
    // After the last upstream event read (the withheld read's events were numbered too: a gap, never a repeat).
    assert.ok(last.sequence_number > events.at(-2).sequence_number, 'numbered after the upstream events');
    assert.deepEqual(last.response.incomplete_details, { reason: 'max_output_tokens' });
    const usage = last.response.usage;
    const delivered = events.filter((e) => e.type === 'response.output_text.delta').length;
    assert.equal(usage.output_tokens, delivered, 'exactly the output that reached the client');
    assert.ok(delivered > 2 * STEP && delivered <= 3 * STEP, `ended at the third step (${delivered})`);
    assert.equal(usdToNano(usage.cost), quote.input_tokens * 1000 + delivered * 2000);
    const after = (await gw.store.keys.get(key.key.id))!;
    assert.equal(after.held, 0);
    assert.equal(after.balance, key.key.balance - usdToNano(usage.cost));
  });
});

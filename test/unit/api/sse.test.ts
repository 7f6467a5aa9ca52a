// The client-facing SSE framing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeSseData, SSE_DONE } from '../../../src/api/sse.js';
import { SseDecoder } from '../../../src/providers/framing/sse.js';

test('frames a payload as one data line followed by a blank line', () => {
  assert.equal(encodeSseData({ a: 'b\nc', n: 1 }), 'data: {"a":"b\\nc","n":1}\n\n');
  assert.equal(SSE_DONE, 'data: [DONE]\n\n');
});

test('round-trips through the decoder', () => {
  const payloads = [{ text: 'multi\nline' }, { emoji: '😀', cr: '\r' }];
  const events = new SseDecoder().push(payloads.map(encodeSseData).join('') + SSE_DONE);
  assert.deepEqual(events.map((e) => e.data), [...payloads.map((p) => JSON.stringify(p)), '[DONE]']);
});

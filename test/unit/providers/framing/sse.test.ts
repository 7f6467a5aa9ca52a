// Bytes → SSE events: line endings, comments, multi-line data, UTF-8 split across chunks, any chunking.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SseDecoder, SseOverflowError, type SseEvent } from '../../../../src/providers/framing/sse.js';

const FIXTURES = new URL('../../../fixtures/upstream/', import.meta.url);

type Pair = [event: string | null, data: string];

function pairs(events: readonly SseEvent[]): Pair[] {
  return events.map((e) => [e.event ?? null, e.data]);
}

/** Feeds the chunks in order, then end(); returns every event as [event, data]. */
function decode(chunks: ReadonlyArray<Buffer | string>, decoder = new SseDecoder()): Pair[] {
  const out: SseEvent[] = [];
  for (const chunk of chunks) out.push(...decoder.push(chunk));
  out.push(...decoder.end());
  return pairs(out);
}

function bytewise(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i++) out.push(bytes.subarray(i, i + 1));
  return out;
}

function data(...values: string[]): Pair[] {
  return values.map((value) => [null, value]);
}

describe('SseDecoder: line endings', () => {
  test('splits events on LF', () => {
    assert.deepEqual(decode(['data: a\n\ndata: b\n\n']), data('a', 'b'));
  });

  test('splits events on CRLF', () => {
    assert.deepEqual(decode(['data: a\r\n\r\ndata: b\r\n\r\n']), data('a', 'b'));
  });

  test('splits events on a bare CR', () => {
    assert.deepEqual(decode(['data: a\r\rdata: b\r\r']), data('a', 'b'));
  });

  test('accepts mixed line endings in one stream', () => {
    assert.deepEqual(decode(['data: a\r\n\ndata: b\r\rdata: c\n\r\n']), data('a', 'b', 'c'));
  });

  test('treats a CR ending one chunk and an LF starting the next as ONE line ending', () => {
    // Two line endings would make a blank line and split this into events "a" and "b".
    assert.deepEqual(decode(['data: a\r', '\ndata: b\r\n\r\n']), data('a\nb'));
    assert.deepEqual(decode(['data: a\r\n\r', '\ndata: b\r\n\r\n']), data('a', 'b'));
  });

  test('dispatches an event ended by a bare CR at a chunk edge once the next line ending arrives', () => {
    // The CR may be the first half of a CRLF, so the decoder may wait for the next line ending.
    const decoder = new SseDecoder();
    decoder.push('data: a\r\r');
    assert.deepEqual(pairs(decoder.push('data: b\r')), data('a'));
    assert.deepEqual(pairs(decoder.push('\r')), []);
    assert.deepEqual(pairs(decoder.push('data: c\n')), data('b'));
  });
});

describe('SseDecoder: fields', () => {
  test('ignores comment lines (keep-alives)', () => {
    assert.deepEqual(decode([': keep-alive\n\ndata: x\n: ping\n\n:\n\n']), data('x'));
  });

  test('joins multi-line data with \\n', () => {
    assert.deepEqual(decode(['data: line 1\ndata: line 2\ndata: line 3\n\n']), data('line 1\nline 2\nline 3'));
  });

  test('reads event names and resets them after each event', () => {
    const stream = 'event: message_start\ndata: {"a":1}\n\nevent: ping\ndata: {"type": "ping"}\n\ndata: plain\n\n';
    assert.deepEqual(decode([stream]), [
      ['message_start', '{"a":1}'],
      ['ping', '{"type": "ping"}'],
      [null, 'plain'],
    ]);
  });

  test('strips exactly one space after the colon', () => {
    assert.deepEqual(decode(['data:x\n\ndata:  y\n\n']), data('x', ' y'));
  });

  test('ignores id, retry and unknown fields', () => {
    assert.deepEqual(decode(['id: 7\nretry: 1000\nretry: soon\nfoo: bar\ndata: x\n\n']), data('x'));
  });

  test('dispatches nothing for an event without data lines', () => {
    assert.deepEqual(decode(['event: ping\n\n']), []);
  });

  test('dispatches an empty data line as an event with empty data', () => {
    assert.deepEqual(decode(['data:\n\n']), data(''));
  });

  test('returns no events for an empty chunk', () => {
    const decoder = new SseDecoder();
    assert.deepEqual(pairs(decoder.push(Buffer.alloc(0))), []);
    assert.deepEqual(pairs(decoder.push('')), []);
  });

  test('ignores a leading UTF-8 byte order mark, as the SSE specification requires', () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('data: first\n\ndata: second\n\n')]);
    assert.deepEqual(decode([bytes]), data('first', 'second'));
  });
});

describe('SseDecoder: chunking', () => {
  const UNICODE = 'data: {"t":"café 日本 😀"}\n\ndata: {"t":"ü"}\r\n\r\n';

  test('decodes a multi-byte character split across chunks', () => {
    const bytes = Buffer.from('data: é日😀\n\n');
    const e = bytes.indexOf(0xc3); // é is C3 A9
    assert.deepEqual(decode([bytes.subarray(0, e + 1), bytes.subarray(e + 1)]), data('é日😀'));
    const emoji = bytes.indexOf(0xf0); // 😀 is 4 bytes
    assert.deepEqual(
      decode([bytes.subarray(0, emoji + 1), bytes.subarray(emoji + 1, emoji + 3), bytes.subarray(emoji + 3)]),
      data('é日😀'),
    );
  });

  test('yields the same events fed whole and fed one byte at a time', () => {
    const bytes = Buffer.from(UNICODE);
    const whole = decode([bytes]);
    assert.deepEqual(whole, data('{"t":"café 日本 😀"}', '{"t":"ü"}'));
    assert.deepEqual(decode(bytewise(bytes)), whole);
  });

  test('yields the same events split in two at every byte boundary', () => {
    const stream = `: hi\r\nevent: a\r\ndata: x1\r\ndata: x2\r\n\r\n${UNICODE}data: cr\r\rdata: end\n\n`;
    const bytes = Buffer.from(stream);
    const whole = decode([bytes]);
    assert.deepEqual(whole, [['a', 'x1\nx2'], ...data('{"t":"café 日本 😀"}', '{"t":"ü"}', 'cr', 'end')]);
    for (let cut = 0; cut <= bytes.length; cut++) {
      assert.deepEqual(decode([bytes.subarray(0, cut), bytes.subarray(cut)]), whole, `split at byte ${cut}`);
    }
  });

  test('yields the same events split in three at every pair of boundaries', () => {
    const bytes = Buffer.from('data: é\r\n\r\nevent: x\rdata: 日\r\r');
    const whole = decode([bytes]);
    assert.deepEqual(whole, [[null, 'é'], ['x', '日']]);
    for (let a = 0; a <= bytes.length; a++) {
      for (let b = a; b <= bytes.length; b++) {
        assert.deepEqual(decode([bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)]), whole, `split at ${a}, ${b}`);
      }
    }
  });

  test('decodes a recorded Anthropic stream identically whole and byte by byte', () => {
    const bytes = readFileSync(new URL('anthropic-raw/tool_use_response.sse', FIXTURES));
    const whole = decode([bytes]);
    assert.ok(whole.length > 10, `expected a full recording, got ${whole.length} events`);
    for (const [event, payload] of whole) {
      assert.notEqual(event, null);
      assert.equal((JSON.parse(payload) as { type: string }).type, event);
    }
    assert.deepEqual(decode(bytewise(bytes)), whole);
  });

  test('decodes a recorded Gemini stream (CRLF framing) into exactly the recorded payloads', () => {
    const bytes = readFileSync(new URL('google-raw/google-stream-tool-call-arguments.reframed.sse', FIXTURES));
    const recorded = readFileSync(new URL('google/google-stream-tool-call-arguments.chunks.txt', FIXTURES), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '');
    assert.deepEqual(decode([bytes]), data(...recorded));
    assert.deepEqual(decode(bytewise(bytes)), data(...recorded));
  });
});

describe('SseDecoder: end()', () => {
  test('flushes a final event that has no trailing blank line', () => {
    const decoder = new SseDecoder();
    assert.deepEqual(pairs(decoder.push('data: a\n\ndata: last')), data('a'));
    assert.deepEqual(pairs(decoder.end()), data('last'));
  });

  test('flushes a final event that ends in a single line ending', () => {
    assert.deepEqual(decode(['data: last\n']), data('last'));
    assert.deepEqual(decode(['data: last\r']), data('last'));
    assert.deepEqual(decode(['data: last\r\n']), data('last'));
  });

  test('returns nothing more when the stream ended cleanly', () => {
    const decoder = new SseDecoder();
    assert.deepEqual(pairs(decoder.push('data: a\n\n')), data('a'));
    assert.deepEqual(pairs(decoder.end()), []);
  });
});

describe('SseDecoder: limits', () => {
  test('throws SseOverflowError for an event that grows past maxEventChars without ending', () => {
    const decoder = new SseDecoder(32);
    assert.deepEqual(pairs(decoder.push(`data: ${'x'.repeat(20)}`)), []);
    assert.throws(() => decoder.push('x'.repeat(20)), SseOverflowError);
  });

  test('throws SseOverflowError for an event of many data lines past the limit', () => {
    const decoder = new SseDecoder(32);
    decoder.push(`data: ${'y'.repeat(20)}\n`);
    assert.throws(() => decoder.push(`data: ${'y'.repeat(20)}\n`), SseOverflowError);
  });

  test('applies the limit per event, not to the whole stream', () => {
    const decoder = new SseDecoder(32);
    const events: SseEvent[] = [];
    for (let i = 0; i < 100; i++) events.push(...decoder.push(`data: ${String(i).padStart(20, '0')}\n\n`));
    assert.equal(events.length, 100);
    assert.equal(events[99]!.data, '00000000000000000099');
  });
});

// A native cell's body (src/api/raw-body.ts): the client's bytes, only `model` replaced, found through the
// text the parser read (non-ASCII escaped, so its offsets differ from the bytes'); the text let go once the
// bytes are made, and every later attempt (a failover) still given the same bytes.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { countMessagesInput } from '../../../src/api/anthropic-messages/count-input.js';
import { forwardedBody } from '../../../src/api/anthropic-messages/request.js';
import { nativeBodyText } from '../../../src/api/openai-responses/native-request.js';
import { rawTextOf, withRawText } from '../../../src/api/raw-body.js';
import { jsonBytes } from '../../../src/http/json-bytes.js';

function received(bytes: Buffer): { model: string } {
  const { text, read } = jsonBytes(bytes);
  return withRawText(JSON.parse(text) as { model: string }, text, read);
}

describe('the bytes a native cell forwards', () => {
  test('are the client bytes with only model replaced, after non-ASCII text, for every attempt', () => {
    const sent = '{"system":"Réponds en français — 日本 \u{1F600}","model":"claude-test","messages":[{"role":"user","content":"é"}],"max_tokens":5}';
    const body = received(Buffer.from(sent));
    const expected = Buffer.from(sent.replace('"claude-test"', '"claude-sonnet-4-5"'));
    assert.deepEqual(forwardedBody(body, 'claude-sonnet-4-5'), expected);
    assert.equal(rawTextOf(body), undefined, 'the text is let go once the bytes are made');
    assert.deepEqual(forwardedBody(body, 'claude-sonnet-4-5'), expected, 'a second attempt');
    assert.deepEqual(forwardedBody(body, 'claude-test'), Buffer.from(sent), 'the same model: the bytes as sent');
  });

  test('Responses: every top-level model replaced, the rest byte for byte', () => {
    const sent = '{"model":"a","input":"ü","model":"b"}';
    assert.deepEqual(nativeBodyText(received(Buffer.from(sent)), 'up'), Buffer.from('{"model":"up","input":"ü","model":"up"}'));
  });

  test('without kept bytes (invalid UTF-8 is not kept) the text is spliced, and a changed body is serialised', () => {
    const text = '{"model":"claude-test","max_tokens":5}';
    assert.equal(forwardedBody(withRawText(JSON.parse(text) as { model: string }, text), 'x'), '{"model":"x","max_tokens":5}');
    const changed: { model: string; max_tokens: number } = { model: 'claude-test', max_tokens: 5 };
    assert.equal(forwardedBody(changed, 'x'), '{"model":"x","max_tokens":5}');
  });

  test('the recorded Claude Code body: its estimate is the same before and after its text is let go', async () => {
    const bytes = readFileSync(new URL('../../fixtures/agents/claude-code-2.1.197-turn1.json', import.meta.url));
    const body = received(bytes) as unknown as Parameters<typeof countMessagesInput>[0] & { model: string };
    // Counted without a time budget: these are comparisons of exact counts, whatever the machine's load.
    const counted = await countMessagesInput(body, 800, Infinity);
    const forwarded = forwardedBody(body, 'claude-sonnet-4-5-20250929') as Buffer;
    assert.equal(forwarded.length, bytes.length + '-20250929'.length);
    assert.deepEqual(await countMessagesInput(body, 800, Infinity), counted);
    assert.deepEqual(await countMessagesInput(JSON.parse(bytes.toString('utf8')) as typeof body, 800, Infinity), counted, 'as for a body with no raw text');
  });
});

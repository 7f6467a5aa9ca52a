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
import { parseByMembers } from '../../../src/api/body-by-members.js';
import { asRead, jsonBytes } from '../../../src/http/json-bytes.js';

/** What goes upstream as one buffer: a native cell sends the client's bytes as pieces around the new model. */
function sent(body: string | Uint8Array | readonly Uint8Array[]): string | Buffer {
  return typeof body === 'string' ? body : Array.isArray(body) ? Buffer.concat(body as Uint8Array[]) : Buffer.from(body as Uint8Array);
}

function received(bytes: Buffer): { model: string } {
  const { text, read } = jsonBytes(bytes);
  return withRawText(JSON.parse(text) as { model: string }, text, read);
}

describe('the bytes a native cell forwards', () => {
  test('are the client bytes with only model replaced, after non-ASCII text, for every attempt', () => {
    const text = '{"system":"Réponds en français — 日本 \u{1F600}","model":"claude-test","messages":[{"role":"user","content":"é"}],"max_tokens":5}';
    const body = received(Buffer.from(text));
    const expected = Buffer.from(text.replace('"claude-test"', '"claude-sonnet-4-5"'));
    const pieces = forwardedBody(body, 'claude-sonnet-4-5');
    assert.ok(Array.isArray(pieces), 'pieces, not a copy');
    assert.deepEqual(sent(pieces), expected);
    assert.equal(rawTextOf(body), undefined, 'the text is let go once the bytes are made');
    assert.deepEqual(sent(forwardedBody(body, 'claude-sonnet-4-5')), expected, 'a second attempt');
    assert.deepEqual(forwardedBody(body, 'claude-test'), Buffer.from(text), 'the same model: the bytes as sent');
  });

  test('Responses: every top-level model replaced, the rest byte for byte', () => {
    assert.deepEqual(sent(nativeBodyText(received(Buffer.from('{"model":"a","input":"ü","model":"b"}')), 'up')), Buffer.from('{"model":"up","input":"ü","model":"up"}'));
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
    const forwarded = sent(forwardedBody(body, 'claude-sonnet-4-5-20250929'));
    assert.equal(forwarded.length, bytes.length + '-20250929'.length);
    assert.deepEqual(await countMessagesInput(body, 800, Infinity), counted);
    assert.deepEqual(await countMessagesInput(JSON.parse(bytes.toString('utf8')) as typeof body, 800, Infinity), counted, 'as for a body with no raw text');
    // Parsed member by member (body-by-members.ts: its raw text read as Latin-1), twice: the second from remembered blocks.
    for (let turn = 0; turn < 2; turn++) {
      const laid = parseByMembers(bytes)!;
      const byMembers = withRawText(laid.value, laid.text, asRead(bytes), laid.members) as unknown as typeof body;
      assert.deepEqual(await countMessagesInput(byMembers, 800, Infinity), counted, `parsed member by member, turn ${turn + 1}`);
      assert.deepEqual(sent(forwardedBody(byMembers, 'claude-sonnet-4-5-20250929')), forwarded);
    }
  });
});

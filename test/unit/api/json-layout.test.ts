// One scan of a client's JSON text (src/api/json-layout.ts): where each top-level member's value is and,
// for an array, each element — so a native cell can replace `model` in the bytes, and the input estimate
// can key remembered counts by the JSON the client sent.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { memberOf, spanText, topLevelMembers } from '../../../src/api/json-layout.js';

describe('topLevelMembers', () => {
  test('lists members in order with their value spans, array elements, escaped keys decoded', () => {
    const text = '{ "model" : "m", "tools":[ {"name":"a","x":"]}\\""} , {"name":"b"} ],"n":1.50,"mod\\u0065l":null }';
    const members = topLevelMembers(text)!;
    assert.deepEqual(
      members.map((m) => [m.key, m.escaped, m.isString, spanText(text, m.value)]),
      [
        ['model', false, true, '"m"'],
        ['tools', false, false, '[ {"name":"a","x":"]}\\""} , {"name":"b"} ]'],
        ['n', false, false, '1.50'],
        ['model', true, false, 'null'],
      ],
    );
    assert.deepEqual(
      members[1]!.elements!.map((span) => spanText(text, span)),
      ['{"name":"a","x":"]}\\""}', '{"name":"b"}'],
    );
    assert.equal(memberOf(members, 'model')!.escaped, true, 'a parser keeps the last');
    assert.deepEqual(topLevelMembers('{"a":[]}')![0]!.elements, []);
  });

  test('is undefined for anything but exactly one object', () => {
    for (const text of ['[1]', '{"a":1', '{"a":1} x', '{"a" 1}', '"x"']) assert.equal(topLevelMembers(text), undefined, text);
  });

  test('finds the 24 tool definitions of the recorded Claude Code body, each parsing to its tool', () => {
    const text = readFileSync(new URL('../../fixtures/agents/claude-code-2.1.197-turn1.json', import.meta.url), 'utf8');
    const body = JSON.parse(text) as { tools: unknown[] };
    const tools = memberOf(topLevelMembers(text)!, 'tools')!.elements!;
    assert.equal(tools.length, 24);
    tools.forEach((span, i) => assert.deepEqual(JSON.parse(spanText(text, span)), body.tools[i]));
  });
});

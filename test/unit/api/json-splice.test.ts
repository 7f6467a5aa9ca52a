// The native cells' one change to a client's body: the top-level `model` value, spliced into the text as it
// came — every other byte kept, including what a parse and a stringify would change.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spliceTopLevelString } from '../../../src/api/json-splice.js';

describe('spliceTopLevelString', () => {
  test('replaces only the top-level model value and keeps every other byte', () => {
    const text = '{ "model" : "gpt-test",\n "input":[{"model":"nested","x":1.50,"y":"\\u00e9\\"model\\": \\"no\\""}],"n":1e2 }';
    const out = spliceTopLevelString(text, 'model', 'gpt-4o-mini');
    assert.equal(out, '{ "model" : "gpt-4o-mini",\n "input":[{"model":"nested","x":1.50,"y":"\\u00e9\\"model\\": \\"no\\""}],"n":1e2 }');
  });

  test('finds the key after nested objects, arrays and strings with escaped quotes and backslashes', () => {
    const text = '{"a":{"b":[1,{"c":"}]\\\\"}],"d":"{"},"e":[[],{}],"f":"\\\\\\"","model":"m"}';
    assert.equal(spliceTopLevelString(text, 'model', 'up'), text.replace('"model":"m"', '"model":"up"'));
    assert.deepEqual(JSON.parse(spliceTopLevelString(text, 'model', 'up')!), { ...JSON.parse(text), model: 'up' });
  });

  test('replaces every top-level occurrence of a duplicated key, as a parser would keep the last', () => {
    assert.equal(spliceTopLevelString('{"model":"a","model":"b"}', 'model', 'c'), '{"model":"c","model":"c"}');
  });

  test('encodes the new value as a JSON string', () => {
    assert.equal(spliceTopLevelString('{"model":"a"}', 'model', 'dep"loy\\ment'), '{"model":"dep\\"loy\\\\ment"}');
  });

  test('gives up (the caller re-serialises) when the splice cannot be exact', () => {
    assert.equal(spliceTopLevelString('{"input":"x"}', 'model', 'm'), undefined, 'absent');
    assert.equal(spliceTopLevelString('{"model":5}', 'model', 'm'), undefined, 'not a string');
    assert.equal(spliceTopLevelString('{"mod\\u0065l":"a"}', 'model', 'm'), undefined, 'escaped spelling of the key');
    assert.equal(spliceTopLevelString('["model"]', 'model', 'm'), undefined, 'not an object');
    assert.equal(spliceTopLevelString('{"model":"a"', 'model', 'm'), undefined, 'truncated');
    assert.equal(spliceTopLevelString('{"model":"a"} x', 'model', 'm'), undefined, 'trailing text');
    assert.equal(spliceTopLevelString('\ufeff{"model":"a"}', 'model', 'm'), undefined, 'a byte-order mark');
  });

  test('keeps numbers, unicode and whitespace that a parse and a stringify would rewrite', () => {
    const text = '{\n\t"temperature": 1.0,\n\t"model": "x",\n\t"text": "caf\\u00e9 \u{1F600}",\n\t"big": 12345678901234567890\n}\n';
    assert.equal(spliceTopLevelString(text, 'model', 'y'), text.replace('"x"', '"y"'));
  });
});

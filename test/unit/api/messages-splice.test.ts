// The exact `model` splice of a native Messages cell (src/api/anthropic-messages/model-splice.ts): only the
// top-level "model" string changes, every other byte stays; anything it cannot do exactly is left to the
// caller (undefined), never guessed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { replaceModel } from '../../../src/api/anthropic-messages/model-splice.js';
import { seededRng, type Rng } from '../../support/seeded-random.js';

describe('replaceModel', () => {
  test('replaces the top-level model string and nothing else', () => {
    const text = '{"model":"claude-test","max_tokens":10,"messages":[{"role":"user","content":"model"}]}';
    assert.equal(replaceModel(text, 'claude-sonnet-4-5'), text.replace('claude-test', 'claude-sonnet-4-5'));
  });

  test('ignores "model" keys and strings nested in the body, and keys that only end in model', () => {
    const text = '{"metadata":{"model":"x"},"tools":[{"name":"model","input_schema":{"model":{"type":"string"}}}],"my_model":"y","model":"claude-test"}';
    const out = replaceModel(text, 'up');
    assert.deepEqual(JSON.parse(out!), { ...JSON.parse(text), model: 'up' });
    assert.equal(out, text.replace('"model":"claude-test"', '"model":"up"'));
  });

  test('keeps whitespace, escapes and number spellings; reads an escaped key; writes the new value as JSON', () => {
    const text = '{\n  "mod\\u0065l" :\t"claude-test" ,\n  "max_tokens": 1.0e2, "system":"a \\"quoted\\" \\\\ \\u00e9 text"}';
    assert.equal(replaceModel(text, 'up"quoted'), '{\n  "mod\\u0065l" :\t"up\\"quoted" ,\n  "max_tokens": 1.0e2, "system":"a \\"quoted\\" \\\\ \\u00e9 text"}');
  });

  test('handles strings that end in escaped backslashes and braces inside strings', () => {
    const text = '{"system":"ends in a backslash \\\\","x":"{[\\"}]","model":"m"}';
    assert.equal(replaceModel(text, 'n'), '{"system":"ends in a backslash \\\\","x":"{[\\"}]","model":"n"}');
  });

  test('gives up (undefined) on a model given twice, a model that is not a string, or none', () => {
    assert.equal(replaceModel('{"model":"a","model":"b"}', 'c'), undefined);
    assert.equal(replaceModel('{"model":1}', 'c'), undefined);
    assert.equal(replaceModel('{"messages":[]}', 'c'), undefined);
  });

  test('on random bodies, the result parses to the body with only model changed and keeps every other byte', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const rng = seededRng(seed);
      const body = randomObject(rng, 3);
      delete body.model;
      const entries = Object.entries(body);
      entries.splice(rng.int(0, entries.length), 0, ['model', 'claude-test']);
      const text = serialise(Object.fromEntries(entries), rng);
      const out = replaceModel(text, 'claude-sonnet-4-5');
      assert.ok(out !== undefined, `seed ${seed}`);
      assert.deepEqual(JSON.parse(out), { ...JSON.parse(text), model: 'claude-sonnet-4-5' }, `seed ${seed}`);
      // Only the value's bytes changed: the text before it and after it are the same.
      const at = out.indexOf('"claude-sonnet-4-5"');
      const tail = out.slice(at + '"claude-sonnet-4-5"'.length);
      assert.ok(text.startsWith(out.slice(0, at)) && text.endsWith(tail), `seed ${seed}`);
      assert.equal(JSON.parse(text.slice(at, text.length - tail.length)), 'claude-test', `seed ${seed}`);
    }
  });
});

const STRINGS = ['', 'model', '"model"', 'a\\b', '{[}]', 'é ü 日本', 'line\nbreak', '\u2028', '"', '\\', 'claude-test'];

function randomValue(rng: Rng, depth: number): unknown {
  switch (rng.int(0, depth > 0 ? 5 : 3)) {
    case 0:
      return rng.pick(STRINGS);
    case 1:
      return rng.int(-1000, 1000) / rng.pick([1, 10, 1000]);
    case 2:
      return rng.pick([true, false, null]);
    case 3:
      return rng.pick(STRINGS) + rng.pick(STRINGS);
    case 4:
      return Array.from({ length: rng.int(0, 4) }, () => randomValue(rng, depth - 1));
    default:
      return randomObject(rng, depth - 1);
  }
}

function randomObject(rng: Rng, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = rng.int(0, 5); i > 0; i--) out[rng.pick(['model', 'messages', 'system', 'x', 'model_', '\\model', 'mo"del'])] = randomValue(rng, depth);
  return out;
}

/** JSON with random whitespace between tokens and random \u escapes in strings. */
function serialise(value: unknown, rng: Rng): string {
  const space = () => rng.pick(['', '', ' ', '\n  ', '\t']);
  const string = (s: string) =>
    JSON.stringify(s)
      .split('')
      .map((c, i, all) => (i > 0 && i < all.length - 1 && /[a-z]/.test(c) && all[i - 1] !== '\\' && rng.chance(0.1) ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c))
      .join('');
  if (typeof value === 'string') return string(value);
  if (Array.isArray(value)) return `[${space()}${value.map((v) => serialise(v, rng)).join(`${space()},${space()}`)}${space()}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).map(([k, v]) => `${string(k)}${space()}:${space()}${serialise(v, rng)}`);
    return `{${space()}${members.join(`${space()},${space()}`)}${space()}}`;
  }
  return JSON.stringify(value);
}

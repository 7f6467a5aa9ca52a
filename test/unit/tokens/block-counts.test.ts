// The memory of long texts' token counts an agent sends on every turn (src/tokens/block-counts.ts): a
// hit only for exactly the same text, whatever object it comes in; bounded by count and by size, least
// recently used first; and never keeping a request's body alive through a key cut from it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BlockCounts, fingerprint } from '../../../src/tokens/block-counts.js';

const text = (seed: string, length = 1_000) => seed.repeat(Math.ceil(length / seed.length)).slice(0, length);

describe('BlockCounts', () => {
  test('finds a text by its content, in a new string or a slice of a larger one', () => {
    const counts = new BlockCounts();
    const system = text('You are Claude Code. ', 30_000);
    counts.set(system, 7_000);
    assert.equal(counts.get(JSON.parse(JSON.stringify(system)) as string), 7_000);
    assert.equal(counts.get(`{"system":"${system}"}`.slice(11, 11 + system.length)), 7_000);
  });

  test('a different text is a miss, even with the same length and the same sampled characters', () => {
    const counts = new BlockCounts();
    const a = text('abcdefgh', 10_000);
    // One character changed where the fingerprint does not look: same fingerprint, different text.
    const b = `${a.slice(0, 4_001)}Z${a.slice(4_002)}`;
    assert.equal(fingerprint(a), fingerprint(b));
    counts.set(a, 1);
    assert.equal(counts.get(b), undefined);
    // The two take each other's place: a recount, never the other's count.
    counts.set(b, 2);
    assert.equal(counts.get(b), 2);
    assert.equal(counts.get(a), undefined);
  });

  test('drops the least recently used first, by number of entries and by characters held', () => {
    const byCount = new BlockCounts(2, 1_000_000);
    byCount.set(text('a'), 1);
    byCount.set(text('b'), 2);
    byCount.get(text('a'));
    byCount.set(text('c'), 3);
    assert.deepEqual([byCount.get(text('a')), byCount.get(text('b')), byCount.get(text('c'))], [1, undefined, 3]);
    const bySize = new BlockCounts(100, 2_500);
    bySize.set(text('a'), 1);
    bySize.set(text('b'), 2);
    bySize.set(text('c'), 3);
    assert.equal(bySize.size, 2);
    assert.equal(bySize.get(text('a')), undefined);
    // A text longer than the whole memory is not kept.
    bySize.set(text('d', 3_000), 4);
    assert.equal(bySize.get(text('d', 3_000)), undefined);
  });
});

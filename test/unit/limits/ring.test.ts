// The ring behind the in-process limiter's windows behaves as an array used as a queue, through growth
// and shrinking, and gives a burst's memory back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ring } from '../../../src/limits/ring.js';
import { seededRng } from '../../support/seeded-random.js';

test('push, shift, at and first match an array queue over a random history that grows and shrinks', () => {
  const rng = seededRng(42);
  const ring = new Ring<number>();
  const model: number[] = [];
  let next = 0;
  for (let step = 0; step < 20_000; step++) {
    // Phases of growth and of draining, so the ring doubles and halves many times.
    const growing = Math.floor(step / 2_000) % 2 === 0;
    if (rng.chance(growing ? 0.7 : 0.3)) {
      ring.push(next);
      model.push(next++);
    } else {
      assert.equal(ring.shift(), model.shift());
    }
    assert.equal(ring.length, model.length);
    assert.equal(ring.first(), model[0]);
    if (model.length > 0) {
      const i = rng.int(0, model.length - 1);
      assert.equal(ring.at(i), model[i]);
      assert.equal(ring.at(model.length - 1), model[model.length - 1]);
    }
  }
});

test('shift on an empty ring returns undefined', () => {
  const ring = new Ring<string>();
  assert.equal(ring.shift(), undefined);
  assert.equal(ring.first(), undefined);
  ring.push('a');
  assert.equal(ring.shift(), 'a');
  assert.equal(ring.shift(), undefined);
  assert.equal(ring.length, 0);
});

test('after a burst drains, the ring gives its capacity back', () => {
  const ring = new Ring<number>();
  for (let i = 0; i < 100_000; i++) ring.push(i);
  for (let i = 0; i < 100_000; i++) ring.shift();
  const capacity = (ring as unknown as { items: unknown[] }).items.length;
  assert.ok(capacity <= 16, `capacity ${capacity}`);
});

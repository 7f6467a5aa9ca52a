// Shutdown waits for in-flight requests: drained() resolves once every tracked promise has settled.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { InFlightRequests } from '../../../src/pipeline/in-flight.js';
import { DrainSlots } from '../../../src/pipeline/drain-slots.js';
import { testProvider } from '../../support/provider-fixture.js';

describe('InFlightRequests', () => {
  test('drained() resolves at once when nothing runs, and after the last tracked request otherwise', async () => {
    const inFlight = new InFlightRequests();
    await inFlight.drained();
    let finishA!: () => void;
    let failB!: (e: Error) => void;
    const a = inFlight.track(new Promise<void>((resolve) => (finishA = resolve)));
    const b = inFlight.track(new Promise<void>((_, reject) => (failB = reject)));
    b.catch(() => undefined);
    assert.equal(inFlight.size, 2);
    let drained = false;
    const waiting = inFlight.drained().then(() => (drained = true));
    finishA();
    await a;
    await new Promise((r) => setImmediate(r));
    assert.equal(drained, false, 'one request still runs');
    failB(new Error('x'));
    await waiting;
    assert.equal(inFlight.size, 0);
  });
});

describe('DrainSlots', () => {
  test('grants drains only to providers configured to drain, up to drain_max_concurrent', () => {
    const slots = new DrainSlots();
    const abort = testProvider({ id: 'a', onClientDisconnect: 'abort' });
    const drain = testProvider({ id: 'd', onClientDisconnect: 'drain', drainMaxConcurrent: 2 });
    const [one, two, three] = [() => {}, () => {}, () => {}];
    assert.equal(slots.tryAcquire(abort, one), false);
    assert.equal(slots.tryAcquire(drain, one), true);
    assert.equal(slots.tryAcquire(drain, two), true);
    assert.equal(slots.tryAcquire(drain, three), false, 'the third concurrent drain is refused');
    slots.release(drain, one);
    slots.release(drain, one);
    assert.equal(slots.count('d'), 1, 'releasing the same drain twice frees one slot');
    assert.equal(slots.tryAcquire(drain, three), true);
  });

  test('shutdown cancels the running drains and refuses new ones', () => {
    const slots = new DrainSlots();
    const drain = testProvider({ id: 'd', onClientDisconnect: 'drain' });
    const cancelled: string[] = [];
    slots.tryAcquire(drain, () => cancelled.push('first'));
    slots.tryAcquire(drain, () => cancelled.push('second'));
    slots.shutdown();
    assert.deepEqual(cancelled.sort(), ['first', 'second']);
    assert.equal(slots.tryAcquire(drain, () => {}), false);
  });
});

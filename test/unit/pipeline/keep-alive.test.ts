// A stream's keep-alive frame (Anthropic's ping) goes out after a silence of `afterMs`, again after each
// further silence of that length, never while frames flow, and never once the stream is ending.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { KeepAlive } from '../../../src/pipeline/keep-alive.js';

describe('KeepAlive', () => {
  test('beats after each silence of afterMs; a frame sent meanwhile starts the silence again; stop() ends it', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let now = 0;
    let beats = 0;
    const advance = (ms: number) => {
      now += ms;
      t.mock.timers.tick(ms);
    };
    const keepAlive = new KeepAlive(15_000, () => beats++, () => now);
    advance(14_999);
    assert.equal(beats, 0);
    advance(1);
    assert.equal(beats, 1, 'after 15 s of silence');
    advance(15_000);
    assert.equal(beats, 2, 'and after each 15 s more');
    advance(10_000);
    keepAlive.heard();
    advance(10_000);
    assert.equal(beats, 2, 'a frame 10 s ago: not yet');
    advance(5_000);
    assert.equal(beats, 3, '15 s after that frame');
    keepAlive.stop();
    advance(60_000);
    assert.equal(beats, 3, 'nothing after stop()');
  });

  test('frames that keep flowing never let it beat', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let now = 0;
    let beats = 0;
    const keepAlive = new KeepAlive(15_000, () => beats++, () => now);
    for (let i = 0; i < 100; i++) {
      now += 1_000;
      t.mock.timers.tick(1_000);
      keepAlive.heard();
    }
    assert.equal(beats, 0);
    keepAlive.stop();
  });
});

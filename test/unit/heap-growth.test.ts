// The serve process's heap settings: V8's run-time flags, unless the operator chose otherwise.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_HEAP_GROWING_PERCENT, heapGrowingPercent, youngGenerationConfigured } from '../../src/heap-growth.js';
import { StartupError } from '../../src/startup-error.js';

describe('heapGrowingPercent', () => {
  test('defaults to 50% when nothing is configured', () => {
    assert.equal(heapGrowingPercent({}, []), DEFAULT_HEAP_GROWING_PERCENT);
    assert.equal(heapGrowingPercent({ TOLLGATE_HEAP_GROWING_PERCENT: '' }, []), DEFAULT_HEAP_GROWING_PERCENT);
  });

  test('takes TOLLGATE_HEAP_GROWING_PERCENT, and 0 leaves V8 its own heuristics', () => {
    assert.equal(heapGrowingPercent({ TOLLGATE_HEAP_GROWING_PERCENT: '100' }, []), 100);
    assert.equal(heapGrowingPercent({ TOLLGATE_HEAP_GROWING_PERCENT: '0' }, []), undefined);
  });

  test('leaves a flag given to node (command line or NODE_OPTIONS) alone', () => {
    assert.equal(heapGrowingPercent({}, ['--heap-growing-percent=20']), undefined);
    assert.equal(heapGrowingPercent({ NODE_OPTIONS: '--heap_growing_percent=20' }, []), undefined);
  });

  test('refuses a value that is not a percentage, naming the variable', () => {
    for (const text of ['fifty', '-1', '2.5', '1001']) {
      assert.throws(() => heapGrowingPercent({ TOLLGATE_HEAP_GROWING_PERCENT: text }, []), (error: unknown) => {
        return error instanceof StartupError && error.message.includes('TOLLGATE_HEAP_GROWING_PERCENT');
      });
    }
  });
});

describe('youngGenerationConfigured', () => {
  test('is true when node was given a semi-space flag, in either spelling', () => {
    assert.equal(youngGenerationConfigured({}, ['--max-semi-space-size=4']), true);
    assert.equal(youngGenerationConfigured({ NODE_OPTIONS: '--semi_space_growth_factor=1' }, []), true);
    assert.equal(youngGenerationConfigured({ NODE_OPTIONS: '--min-semi-space-size=2' }, []), true);
  });

  test('is false otherwise', () => {
    assert.equal(youngGenerationConfigured({}, []), false);
    assert.equal(youngGenerationConfigured({ NODE_OPTIONS: '--max-old-space-size=512' }, ['--enable-source-maps']), false);
  });
});

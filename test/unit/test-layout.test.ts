// Where a test file lives says what it needs, and scripts/run-tests.mjs picks its sets by folder:
//   test/unit, test/contract   nothing outside this process (npm run test:unit: no build, one file per core)
//   test/storage               a real PostgreSQL or Redis (npm run test:storage)
//   test/e2e                   the built gateway spawned as a process, or Chromium (npm run test:e2e)
// This test reads the imports (through test/ helpers, transitively) and fails when a file is in the wrong
// folder: a service test must never sit silently in the fast set, nor a service-free file in the slow one.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { importsOf, tsFilesUnder } from '../support/imports.js';

/**
 * What needs a service: its client packages, the helpers that reach one, the src modules that connect to one
 * (reading PostgreSQL's migration files, say, needs no server).
 */
const POSTGRES = ['pg', 'test/support/postgres.ts', 'src/storage/postgres/postgres-store.ts', 'src/storage/postgres/connection.ts'];
const REDIS = ['ioredis', 'test/support/redis.ts', 'src/limits/redis-limiter.ts', 'src/routing/shared-cooldowns.ts'];
const PROCESS_OR_BROWSER = ['playwright-core', 'test/support/browser.ts', 'test/support/gateway-process.ts'];

const LAYERS = ['test/unit/', 'test/contract/', 'test/storage/', 'test/e2e/'];

/** The first import chain from `file` (through files under test/) to something `markers` names, or undefined. */
function chainTo(file: string, markers: readonly string[], seen = new Set<string>()): string[] | undefined {
  seen.add(file);
  for (const edge of importsOf(file)) {
    const target = edge.file ?? edge.specifier;
    if (markers.some((m) => (m.endsWith('/') ? target.startsWith(m) : target === m || target.startsWith(`${m}/`)))) return [file, target];
    if (edge.file?.startsWith('test/') && !seen.has(edge.file)) {
      const rest = chainTo(edge.file, markers, seen);
      if (rest) return [file, ...rest];
    }
  }
  return undefined;
}

const testFiles = tsFilesUnder('test').filter((f) => f.endsWith('.test.ts'));

describe('the test layout', () => {
  test('every test file is in one of the four folders the runner knows', () => {
    assert.deepEqual(
      testFiles.filter((f) => !LAYERS.some((layer) => f.startsWith(layer))),
      [],
    );
  });

  test('no file of the fast set (test/unit, test/contract) needs PostgreSQL, Redis, Chromium or a gateway process', () => {
    const misplaced = testFiles
      .filter((f) => f.startsWith('test/unit/') || f.startsWith('test/contract/'))
      .flatMap((f) => {
        const chain = chainTo(f, [...POSTGRES, ...REDIS, ...PROCESS_OR_BROWSER]);
        return chain ? [chain.join(' → ')] : [];
      });
    assert.deepEqual(misplaced, [], 'move these to test/storage (PostgreSQL, Redis) or test/e2e (a gateway process, Chromium)');
  });

  test('every file in test/storage needs PostgreSQL or Redis (else it belongs in test/unit, where it runs on every save)', () => {
    const misplaced = testFiles.filter((f) => f.startsWith('test/storage/') && !chainTo(f, [...POSTGRES, ...REDIS]));
    assert.deepEqual(misplaced, []);
  });

  test('finds a service through the helpers, as it would in a misplaced file', () => {
    // test/storage/ledger-store.test.ts reaches PostgreSQL only through test/support/store-dialects.ts.
    assert.deepEqual(chainTo('test/storage/ledger-store.test.ts', POSTGRES), [
      'test/storage/ledger-store.test.ts',
      'test/support/store-dialects.ts',
      'pg',
    ]);
    assert.deepEqual(chainTo('test/e2e/chat.test.ts', PROCESS_OR_BROWSER)?.at(-1), 'test/support/gateway-process.ts');
    assert.equal(chainTo('test/unit/limits/ring.test.ts', [...POSTGRES, ...REDIS, ...PROCESS_OR_BROWSER]), undefined);
  });
});

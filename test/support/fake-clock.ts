// Moves the clock of gateway processes started with fakeClockEnv() (see fake-clock.mjs).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PRELOAD = fileURLToPath(new URL('./fake-clock.mjs', import.meta.url));

export interface FakeClock {
  /** Environment for the gateway and its CLI: their Date.now() follows this clock. */
  readonly env: NodeJS.ProcessEnv;
  /** Makes the processes' Date.now() read `at` (epoch ms) from now on, running on from there. */
  set(at: number): Promise<void>;
  remove(): void;
}

export function fakeClock(): FakeClock {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-clock-'));
  const file = join(dir, 'offset');
  writeFileSync(file, '0');
  return {
    env: { NODE_OPTIONS: `--import=${PRELOAD}`, TOLLGATE_TEST_CLOCK_FILE: file },
    async set(at) {
      writeFileSync(file, String(at - Date.now()));
      // The processes re-read the file at most every 20 ms.
      await new Promise((resolve) => setTimeout(resolve, 60));
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

// Test-only: shifts Date.now() of the process it is preloaded into (NODE_OPTIONS=--import=<this file>)
// by the number of milliseconds written in $TOLLGATE_TEST_CLOCK_FILE, re-read at most every 20 ms — so a
// test can move a running gateway (and its CLI) across a day boundary. Nothing in src/ knows about it.
import { readFileSync } from 'node:fs';

const file = process.env.TOLLGATE_TEST_CLOCK_FILE;
if (file) {
  const realNow = Date.now.bind(Date);
  let offset = 0;
  let readAt = -Infinity;
  Date.now = () => {
    const now = realNow();
    if (now - readAt >= 20) {
      readAt = now;
      try {
        offset = Number(readFileSync(file, 'utf8').trim()) || 0;
      } catch {
        offset = 0;
      }
    }
    return now + offset;
  };
}

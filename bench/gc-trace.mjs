// --gc: the gateway's garbage collections, read from V8's --trace-gc-nvp lines on its stdout. CPU per request
// on a shared machine moves with other people's load; what the gateway's heap does per request much less:
// bytes promoted to the old generation (objects that outlived two scavenges) and the full collections
// they cause move far less with the machine's load, so a change that keeps request objects alive
// longer shows there even when its CPU cost is lost in the noise (not wholly independent of the machine: a
// gateway starved of CPU keeps requests in flight longer, and more of them outlive two scavenges).
import { createInterface } from 'node:readline';

export const GC_TRACE_FLAG = '--trace-gc-nvp';

// "[pid:0x...]   12345 ms: pause=0.8 mutator=49.4 gc=s ... promoted=123456 ..." (ms since the isolate started).
const NVP_LINE = /^\[\d+:0x[0-9a-f]+\]\s+(\d+) ms: .*? gc=(\w+)/;
const PROMOTED = / promoted=(\d+)/;

/**
 * Collects the collections of `child` (started with GC_TRACE_FLAG at performance.now() `startedAt`).
 * V8 writes them through C stdio, which a pipe buffers: read them only once the process has exited (`done`).
 */
export function watchGc(child, startedAt) {
  const events = [];
  const done = new Promise((resolve) => {
    createInterface({ input: child.stdout })
      .on('line', (line) => {
        const match = NVP_LINE.exec(line);
        if (!match) return;
        const kind = match[2] === 's' ? 'scavenge' : match[2] === 'mc' || match[2] === 'ms' ? 'full' : 'other';
        events.push({ at: startedAt + Number(match[1]), kind, promoted: Number(PROMOTED.exec(line)?.[1] ?? 0) });
      })
      .once('close', resolve);
  });
  return { events, done };
}

/** The collections between `start` and `end` (performance.now()), per request of the `requests` completed then. */
export function gcOverWindow(gc, start, end, requests) {
  let scavenges = 0;
  let full = 0;
  let promoted = 0;
  for (const event of gc.events) {
    if (event.at < start || event.at > end) continue;
    if (event.kind === 'scavenge') {
      scavenges++;
      promoted += event.promoted;
    } else if (event.kind === 'full') {
      full++;
    }
  }
  if (requests <= 0) return null;
  return {
    promotedBytesPerRequest: Math.round(promoted / requests),
    scavengesPer10k: Math.round((scavenges / requests) * 1e5) / 10,
    fullGcsPer10k: Math.round((full / requests) * 1e5) / 10,
  };
}

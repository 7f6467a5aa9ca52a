// How much memory V8 may reserve ahead of the gateway's live heap, set by `serve` in its own process
// through V8 flags that are read at run time (docs/adr/0025-heap-growth.md). Two settings:
// - the old generation's growth between full collections: V8's default on a machine with more than
//   ~2 GB lets it reach up to 4× the live heap, and under load the gateway promotes short-lived request
//   garbage at ~10 MB/s, so a ~23 MB live heap let the old space reach ~90 MB before a collection. 50%
//   keeps it near 1.5× the live heap, for a few more full collections (concurrent marking, on another
//   thread). Not a cap: a heap that needs more still gets it.
// - the young generation during startup: loading the modules and the tokenizer's vocabulary survives
//   every scavenge, which made V8 grow the semi-spaces to their 16 MB maximum (32 MB reserved) before
//   the first request. It is held at its initial size until the server listens, then may grow again
//   under load as V8 sees fit.
// And one full collection once startup is done, before the server listens: startup's garbage (module
// sources, the vocabulary file's buffer) is returned then rather than by V8's memory reducer ~8 s later.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { StartupError } from './startup-error.js';

export const HEAP_GROWING_PERCENT_ENV = 'TOLLGATE_HEAP_GROWING_PERCENT';
export const DEFAULT_HEAP_GROWING_PERCENT = 50;
/** V8's default factor by which a young generation that keeps its objects grows. */
const SEMI_SPACE_GROWTH_FACTOR = 2;

/** The node flags of this process: its command line and NODE_OPTIONS. */
function nodeFlagsOf(env: NodeJS.ProcessEnv, execArgv: readonly string[]): string {
  return `${execArgv.join(' ')} ${env.NODE_OPTIONS ?? ''}`.replaceAll('_', '-');
}

/**
 * The percentage to apply, or undefined to leave V8's own heuristics: `0` in the environment, or the
 * flag already given to node (command line or NODE_OPTIONS: the operator's choice wins).
 */
export function heapGrowingPercent(env: NodeJS.ProcessEnv, execArgv: readonly string[]): number | undefined {
  if (nodeFlagsOf(env, execArgv).includes('--heap-growing-percent')) return undefined;
  const text = env[HEAP_GROWING_PERCENT_ENV];
  if (text === undefined || text === '') return DEFAULT_HEAP_GROWING_PERCENT;
  const percent = Number(text);
  if (!Number.isInteger(percent) || percent < 0 || percent > 1000) {
    throw new StartupError(`${HEAP_GROWING_PERCENT_ENV} must be an integer from 0 (V8's default) to 1000, got "${text}"`);
  }
  return percent === 0 ? undefined : percent;
}

/** Applies the old generation's growth limit to this process; returns it (undefined: V8's default). */
export function limitHeapGrowth(env: NodeJS.ProcessEnv = process.env, execArgv: readonly string[] = process.execArgv): number | undefined {
  const percent = heapGrowingPercent(env, execArgv);
  if (percent !== undefined) setFlagsFromString(`--heap-growing-percent=${percent}`);
  return percent;
}

/** Whether the operator sized the young generation with node flags (then this module leaves it alone). */
export function youngGenerationConfigured(env: NodeJS.ProcessEnv, execArgv: readonly string[]): boolean {
  return /--(?:max-semi-space-size|min-semi-space-size|semi-space-growth-factor)\b/.test(nodeFlagsOf(env, execArgv));
}

let youngGenerationHeld = false;

/** Keeps the young generation at its current size (call before the server's modules load). */
export function holdYoungGeneration(env: NodeJS.ProcessEnv = process.env, execArgv: readonly string[] = process.execArgv): void {
  if (youngGenerationHeld || youngGenerationConfigured(env, execArgv)) return;
  youngGenerationHeld = true;
  setFlagsFromString('--semi-space-growth-factor=1');
}

/** Lets the young generation grow again (V8's default policy), once startup's allocations are done. */
export function releaseYoungGeneration(): void {
  if (!youngGenerationHeld) return;
  youngGenerationHeld = false;
  setFlagsFromString(`--semi-space-growth-factor=${SEMI_SPACE_GROWTH_FACTOR}`);
}

/**
 * One full garbage collection, now (~10–20 ms, once, before the first request). `gc` exists only in
 * contexts created while --expose-gc is set; the flag is cleared again at once.
 */
export function collectStartupGarbage(): void {
  try {
    setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
  } catch {
    // A runtime without it: V8's memory reducer collects the same garbage a few seconds later.
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

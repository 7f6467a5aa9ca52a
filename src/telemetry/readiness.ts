// GET /ready's question (product.md §10): does the database answer, quickly, and is the gateway still
// taking work? A load balancer polls it, so the check is one trivial query with a short deadline.
import type { StoreProbe } from '../storage/types.js';

/** The longest /ready waits for the database (a load balancer's own timeout is typically 2–5 s). */
export const READY_TIMEOUT_MS = 1_000;

export type Readiness = { readonly ready: true } | { readonly ready: false; readonly reason: 'shutting_down' | 'database_unavailable' };

export async function checkReadiness(probe: StoreProbe, isClosing: () => boolean): Promise<Readiness> {
  if (isClosing()) return { ready: false, reason: 'shutting_down' };
  try {
    await withTimeout(probe.ping(), READY_TIMEOUT_MS);
  } catch {
    return { ready: false, reason: 'database_unavailable' };
  }
  // Shutdown may have begun while the query ran.
  return isClosing() ? { ready: false, reason: 'shutting_down' } : { ready: true };
}

/** `work`, or a rejection after `ms` (the work itself is not cancelled: its result is ignored). */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

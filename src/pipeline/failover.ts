// Retries and fallback (product.md §3): before any byte reaches the client, a retryable failure is
// retried on the same upstream (`retries`, jittered backoff, a short Retry-After honoured), then the
// next upstream is tried. Every attempt shares the request's one hold; at most one is charged.
import { setTimeout as sleep } from 'node:timers/promises';
import { UpstreamFailureError } from '../providers/types.js';
import type { Candidate } from '../routing/resolve-route.js';
import { TransportError } from '../upstream/transport.js';
import type { ClientRequest, PipelineDeps } from './deps.js';
import type { RequestBill } from './request-bill.js';

const BACKOFF_BASE_MS = 200;
const BACKOFF_CAP_MS = 2_000;
/** A longer Retry-After is not waited for: the next upstream is tried instead. */
const MAX_RETRY_AFTER_MS = 5_000;

/** Connection errors, timeouts, resets, 408, 429 and 5xx (Anthropic's 529 included); never 4xx otherwise. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof TransportError) return error.reason !== 'aborted' && error.reason !== 'too-large';
  if (error instanceof UpstreamFailureError) {
    const status = error.failure.status;
    // An error event inside a 200 stream (status 0) is the upstream's own failure.
    return status === 0 || status === 408 || status === 429 || status >= 500;
  }
  return false;
}

function retryAfterMs(error: unknown): number | undefined {
  if (!(error instanceof UpstreamFailureError) || !error.failure.retryAfter) return undefined;
  const text = error.failure.retryAfter;
  const seconds = Number(text);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Full-jitter exponential backoff, or the upstream's Retry-After; undefined: do not retry here. */
export function retryDelayMs(retryNumber: number, error: unknown, random: () => number = Math.random): number | undefined {
  const asked = retryAfterMs(error);
  if (asked !== undefined) return asked <= MAX_RETRY_AFTER_MS ? asked : undefined;
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (retryNumber - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * Runs `attempt` on each candidate in order, retrying retryable failures; returns the first success.
 * Throws the last failure (or the first non-retryable one). `attempt` records itself on the bill.
 */
export async function withFailover<T>(
  deps: PipelineDeps,
  client: ClientRequest,
  bill: RequestBill,
  candidates: readonly Candidate[],
  attempt: (candidate: Candidate) => Promise<T>,
): Promise<T> {
  let lastError: unknown;
  for (const candidate of candidates) {
    if (lastError !== undefined && deps.health.isCooling(candidate.provider.id)) continue;
    bill.useCandidate(candidate);
    for (let retry = 0; retry <= candidate.provider.retries; retry++) {
      if (retry > 0) {
        const delay = retryDelayMs(retry, lastError);
        if (delay === undefined) break;
        await sleep(delay, undefined, { signal: client.signal });
      }
      try {
        const result = await attempt(candidate);
        deps.health.recordSuccess(candidate.provider.id);
        return result;
      } catch (error) {
        if (client.signal.aborted || !isRetryable(error)) throw error;
        lastError = error;
        if (deps.health.recordFailure(candidate.provider)) {
          deps.log.warn({ provider: candidate.provider.id, seconds: candidate.provider.cooldown.seconds }, 'upstream cooling down');
          break;
        }
      }
    }
  }
  throw lastError;
}

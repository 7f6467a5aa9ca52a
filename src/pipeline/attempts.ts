// Retries and fallback (product.md §3): before any byte reaches the client, a retryable failure is
// retried on the same upstream (`retries`, jittered backoff, a short Retry-After honoured), then the
// next upstream is tried. Every attempt shares the request's one reservation; at most one is charged.
// The attempt log is a value: returned with the success, or carried by the failure.
import { setTimeout as sleep } from 'node:timers/promises';
import { UpstreamFailureError } from '../providers/types.js';
import type { CandidateOrder } from '../routing/order-candidates.js';
import type { Candidate } from '../routing/resolve-route.js';
import type { UpstreamFailureInfo } from '../routing/upstream-health.js';
import type { Attempt } from '../storage/types.js';
import { TransportError } from '../upstream/transport.js';
import type { ClientRequest, PipelineDeps } from './deps.js';
import { attemptStatusOf } from './upstream-error.js';

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

export function retryAfterMs(error: unknown): number | undefined {
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

/** What the health table records of a retryable failure. */
function failureInfo(error: unknown): UpstreamFailureInfo {
  return { status: attemptStatusOf(error), message: error instanceof Error ? error.message : String(error), retryAfterMs: retryAfterMs(error) };
}

/** One attempt's success: its value and the upstream's HTTP status. */
export interface Attempted<T> {
  readonly value: T;
  readonly status: number;
}

export interface Served<T> {
  readonly value: T;
  readonly served: Candidate;
  readonly attempts: readonly Attempt[];
}

/** Every attempt failed (or the request stopped first): the last failure, the upstream it came from, and the log. */
export class AttemptsFailed extends Error {
  constructor(
    override readonly cause: unknown,
    readonly last: Candidate,
    readonly attempts: readonly Attempt[],
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'AttemptsFailed';
  }
}

/**
 * Runs `attempt` on each candidate in order, retrying retryable failures; returns the first success with
 * the upstream that served it and every attempt made. Throws AttemptsFailed with the last failure (or
 * the first one that is not retryable). Only retryable failures count towards an upstream's cool-down; a
 * success resets it.
 */
export async function withFailover<T>(
  deps: PipelineDeps,
  client: ClientRequest,
  order: CandidateOrder,
  attempt: (candidate: Candidate) => Promise<Attempted<T>>,
): Promise<Served<T>> {
  const attempts: Attempt[] = [];
  let lastError: unknown;
  let current = order.candidates[0]!;
  try {
    for (const candidate of order.candidates) {
      // Another request may have cooled a later upstream meanwhile: skip it, unless all were cooling from the start.
      if (lastError !== undefined && !order.panic && deps.health.isCooling(candidate.target)) continue;
      current = candidate;
      for (let retry = 0; retry <= candidate.provider.retries; retry++) {
        if (retry > 0) {
          const delay = retryDelayMs(retry, lastError);
          if (delay === undefined) break;
          await sleep(delay, undefined, { signal: client.signal });
        }
        const startedAt = performance.now();
        try {
          const { value, status } = await attempt(candidate);
          attempts.push({ provider: candidate.provider.id, status, durationMs: Math.round(performance.now() - startedAt) });
          deps.health.recordSuccess(candidate.target);
          return { value, served: candidate, attempts };
        } catch (error) {
          attempts.push({ provider: candidate.provider.id, status: attemptStatusOf(error), durationMs: Math.round(performance.now() - startedAt) });
          if (client.signal.aborted || !isRetryable(error)) throw error;
          lastError = error;
          if (deps.health.recordFailure(candidate.target, failureInfo(error))) {
            const seconds = Math.ceil(deps.health.coolingRemainingMs(candidate.target) / 1000);
            deps.log.warn({ provider: candidate.provider.id, upstreamModel: candidate.target.upstreamModel, seconds }, 'upstream cooling down');
            break;
          }
        }
      }
    }
  } catch (error) {
    throw new AttemptsFailed(error, current, attempts);
  }
  throw new AttemptsFailed(lastError, current, attempts);
}

// When a failed delivery is tried again: exponential back-off (first_retry_seconds, doubling, at most
// max_retry_seconds) until give_up_hours after the event was written (or resent), with one last try at
// that moment; past it the event is marked failed.

export interface BackoffOptions {
  readonly firstRetryMs: number;
  readonly maxRetryMs: number;
  readonly giveUpMs: number;
}

/** After `attempts` failed attempts (1 or more): the next attempt's time, or undefined to give up. */
export function nextAttemptAt(attempts: number, retryFrom: number, now: number, options: BackoffOptions): number | undefined {
  const deadline = retryFrom + options.giveUpMs;
  if (now >= deadline) return undefined;
  const delay = Math.min(options.firstRetryMs * 2 ** Math.min(Math.max(attempts - 1, 0), 40), options.maxRetryMs);
  return Math.min(now + delay, deadline);
}

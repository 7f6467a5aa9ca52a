// OpenAI's rate-limit headers (product.md §8), on every answer to a key with request or token limits:
// x-ratelimit-{limit,remaining,reset}-{requests,tokens}. Resets are durations as OpenAI writes them
// ("20ms", "1.5s", "6m0s").
import type { RateLimitState, RateWindowState } from './rate-limiter.js';

export function formatResetDuration(ms: number): string {
  const rounded = Math.max(0, Math.ceil(ms));
  if (rounded < 1000) return `${rounded}ms`;
  if (rounded < 60_000) return `${Number((rounded / 1000).toFixed(1))}s`;
  const minutes = Math.floor(rounded / 60_000);
  return `${minutes}m${Math.floor((rounded % 60_000) / 1000)}s`;
}

function add(headers: Record<string, string>, kind: 'requests' | 'tokens', window: RateWindowState | undefined): void {
  if (!window) return;
  headers[`x-ratelimit-limit-${kind}`] = String(window.limit);
  headers[`x-ratelimit-remaining-${kind}`] = String(Math.max(0, window.remaining));
  headers[`x-ratelimit-reset-${kind}`] = formatResetDuration(window.resetMs);
}

export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  const headers: Record<string, string> = {};
  add(headers, 'requests', state.requests);
  add(headers, 'tokens', state.tokens);
  return headers;
}

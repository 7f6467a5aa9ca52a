// The pipeline's one question to the rate limiter (product.md §8), asked before the hold: admit this
// request under the key's rpm / tpm / max_concurrent, counting the hold's token estimate, or refuse
// with 429 rate_limited and Retry-After. The x-ratelimit-* headers go on the answer either way.
import { GatewayError } from '../../errors.js';
import { rateLimitHeaders } from '../../limits/headers.js';
import { NO_OP_TICKET, rateLimitsOf } from '../../limits/admission.js';
import { hasRateLimits, type RateAdmission, type RateTicket } from '../../limits/rate-limiter.js';
import type { ClientRequest, PipelineDeps } from '../deps.js';

function rateLimitedError(refusal: Extract<RateAdmission, { admitted: false }>): GatewayError {
  const seconds = Math.max(1, Math.ceil(refusal.retryAfterMs / 1000));
  const what = { rpm: 'requests per minute', tpm: 'tokens per minute', max_concurrent: 'requests in flight at once' }[refusal.limit];
  const message = refusal.neverFits
    ? `This request alone needs more tokens than the key's tokens-per-minute limit allows; lower max_tokens or shorten the prompt.`
    : `Rate limit reached for this key (${what}); retry in ${seconds} s.`;
  return new GatewayError('rate_limited', {
    message,
    metadata: { limit: refusal.limit, retry_after_ms: Math.max(1, Math.ceil(refusal.retryAfterMs)) },
    headers: { 'retry-after': String(seconds) },
  });
}

/** Admits the request or throws 429; `tokens` is the hold's estimate (input + max output). */
export async function admitRate(deps: PipelineDeps, client: ClientRequest, tokens: number): Promise<RateTicket> {
  const limits = rateLimitsOf(client.key, deps.config.limits);
  if (!hasRateLimits(limits)) return NO_OP_TICKET;
  const admission = await deps.limiter.admit(client.key.id, client.requestId, limits, tokens);
  for (const [name, value] of Object.entries(rateLimitHeaders(admission.state))) client.setHeader(name, value);
  if (!admission.admitted) throw rateLimitedError(admission);
  return admission.ticket;
}

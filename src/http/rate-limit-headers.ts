// The x-ratelimit-* headers on every answer to a key with request or token limits (product.md §8). Chat
// and embeddings set them when the limiter admits or refuses; any other answer — a GET, or an error
// before admission — reads the current state without counting anything.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LimitsConfig } from '../config/types.js';
import { rateLimitHeaders } from '../limits/headers.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import { rateLimitsOf } from '../limits/admission.js';

export async function addRateLimitHeaders(limiter: RateLimiter, defaults: LimitsConfig, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const key = request.apiKey;
  if (!key || reply.hasHeader('x-ratelimit-limit-requests') || reply.hasHeader('x-ratelimit-limit-tokens')) return;
  const limits = rateLimitsOf(key, defaults);
  if (limits.rpm === null && limits.tpm === null) return;
  reply.headers(rateLimitHeaders(await limiter.peek(key.id, limits)));
}

// The rate limiter the config asks for: counters in Redis shared by every gateway (`redis:`), else in
// this process. A Redis that does not answer at start does not stop the gateway: its limits fail open
// (a warning) until Redis answers.
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import { redactDatabaseUrl } from '../storage/database-url.js';
import { InProcessRateLimiter } from './in-process-limiter.js';
import type { RateLimiter } from './rate-limiter.js';

const READY_WAIT_MS = 2_000;

export async function openRateLimiter(config: Config, log: Logger): Promise<RateLimiter> {
  if (!config.redis) return new InProcessRateLimiter();
  // Loaded only when configured: gateways without Redis never load the client.
  const { RedisRateLimiter } = await import('./redis-limiter.js');
  const limiter = new RedisRateLimiter({ url: config.redis, logger: log });
  if (!(await limiter.ready(READY_WAIT_MS))) {
    log.warn({ redis: redactDatabaseUrl(config.redis) }, 'Redis does not answer yet: rate limits fail open until it does');
  }
  return limiter;
}

// The rate limiter the config asks for: counters in Redis shared by every gateway (`redis:`), else in
// this process. A Redis that does not answer at start does not stop the gateway: its limits fail open
// until Redis answers (its connection's failure is the Reachability's warn line).
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import type { Reachability } from '../telemetry/reachability.js';
import { InProcessRateLimiter } from './in-process-limiter.js';
import type { RateLimiter } from './rate-limiter.js';

const READY_WAIT_MS = 2_000;

/** `redisReachability`: where Redis going and coming back is reported (with `redis:` set). */
export async function openRateLimiter(config: Config, log: Logger, redisReachability?: Reachability): Promise<RateLimiter> {
  if (!config.redis) return new InProcessRateLimiter();
  // Loaded only when configured: gateways without Redis never load the client.
  const { RedisRateLimiter } = await import('./redis-limiter.js');
  const limiter = new RedisRateLimiter({ url: config.redis, logger: log, ...(redisReachability ? { reachability: redisReachability } : {}) });
  // So that the first requests are counted when Redis is there; when it is not, the wait is bounded.
  await limiter.ready(READY_WAIT_MS);
  return limiter;
}

/** Where the guess limit's counters live in Redis (apart from the rate limits'). */
export const REDEEM_REDIS_PREFIX = 'tollgate:redeem:';

/**
 * The limiter behind the redemption guess limit (limits/redeem-guard.ts): its own window, counters in
 * Redis under their own prefix when `redis:` is set (every gateway and worker shares them), else in this
 * process.
 */
export async function openRedeemLimiter(config: Config, log: Logger, redisReachability?: Reachability): Promise<RateLimiter> {
  const windowMs = config.limits.redeemWindowSeconds * 1000;
  if (!config.redis) return new InProcessRateLimiter({ windowMs });
  const { RedisRateLimiter } = await import('./redis-limiter.js');
  const limiter = new RedisRateLimiter({ url: config.redis, logger: log, prefix: REDEEM_REDIS_PREFIX, windowMs, ...(redisReachability ? { reachability: redisReachability } : {}) });
  await limiter.ready(READY_WAIT_MS);
  return limiter;
}

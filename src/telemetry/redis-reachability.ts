// Redis's reachability (`redis:`): the rate limiter's connection and the shared cool-downs' two report to
// one Reachability, so an outage is one warn line and its end one info line, whichever connection sees
// it first. Only ioredis's types are imported: gateways without Redis never load the client.
import type { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import { Reachability } from './reachability.js';

/** What a Redis outage means while it lasts, for the gateway (rate limits and shared cool-downs). */
export const REDIS_DOWN_MESSAGE =
  'Redis unreachable: rate limits fail open (requests are admitted uncounted) and cool-downs are not shared until it answers';
export const REDIS_UP_MESSAGE = 'Redis answers again: rate limits apply and cool-downs are shared';

export function redisReachability(url: string, log: Logger, downMessage = REDIS_DOWN_MESSAGE, upMessage = REDIS_UP_MESSAGE): Reachability {
  return new Reachability({ log, dependency: 'redis', url, downMessage, upMessage });
}

/** ioredis's errors for a command on a connection that is gone (before its 'close' is seen, it may still say 'ready'). */
const CONNECTION_GONE = /Stream isn't writeable|Connection is closed/;

/**
 * A command that failed because Redis could not be reached (the connection is not up, or is going):
 * the Reachability reports that, so the command's user need not. Otherwise Redis was slow or refused it.
 */
export function failedForLackOfConnection(connection: Redis, error: unknown): boolean {
  return connection.status !== 'ready' || CONNECTION_GONE.test(error instanceof Error ? error.message : String(error));
}

/**
 * Reports `connection` (named `name`) to `reachability`: an error while it is not connected (a connect or
 * reconnect that failed) is a failure, `ready` an answer. An error while connected is not news on its
 * own: a lost connection closes and reconnects, and only a reconnect that fails is. A slow Redis (a
 * command timing out on a live connection) is its users' to report.
 */
export function watchRedisConnection(connection: Redis, reachability: Reachability, name: string): void {
  connection.on('error', (error: Error) => {
    if (connection.status !== 'ready') reachability.failed(error, name);
  });
  connection.on('ready', () => reachability.succeeded(name));
}

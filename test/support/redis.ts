// Redis for the tests that need it (issue 9): TOLLGATE_TEST_REDIS_URL, default the local server.
// Unreachable, those tests are skipped with the reason — except under CI=true, where that is a failure.
// Tests share that server, so each one writes under its own key prefix (`freshRedisPrefix`).
// `startRedisServer` runs a throwaway redis-server of the test's own, to kill, pause and restart.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { redactDatabaseUrl } from '../../src/storage/database-url.js';
import { closedPort } from './e2e.js';

export const TEST_REDIS_URL = process.env.TOLLGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let reachable: Promise<string | undefined> | undefined;

/**
 * For `describe(name, { skip: await redisSkipReason() }, ...)`: undefined when Redis answers PING,
 * else why the tests are skipped. Under CI=true it throws instead: CI must not pass by skipping.
 */
export async function redisSkipReason(): Promise<string | undefined> {
  reachable ??= (async () => {
    const client = new Redis(TEST_REDIS_URL, { lazyConnect: true, connectTimeout: 3_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.ping();
      return undefined;
    } catch (error) {
      return `Redis unreachable at ${redactDatabaseUrl(TEST_REDIS_URL)}: ${(error as Error).message}`;
    } finally {
      client.disconnect();
    }
  })();
  const reason = await reachable;
  if (reason && process.env.CI === 'true') throw new Error(`${reason} (CI=true: the Redis tests must run)`);
  return reason;
}

/** Like redisSkipReason, for tests that start their own server: undefined when `redis-server` runs. */
export function redisServerSkipReason(): string | undefined {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  const reason = probe.error || probe.status !== 0 ? `redis-server not runnable: ${probe.error?.message ?? probe.stderr}` : undefined;
  if (reason && process.env.CI === 'true') throw new Error(`${reason} (CI=true: the Redis tests must run)`);
  return reason;
}

/** A key prefix no other test uses, e.g. for a RedisRateLimiter's `prefix` option. */
export function freshRedisPrefix(): string {
  return `tollgate-test:${randomBytes(6).toString('hex')}:`;
}

/** A client of the test server for inspecting keys (close it with `.disconnect()`). */
export function testRedisClient(url = TEST_REDIS_URL): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  return client;
}

/** Deletes every key under `prefix` (a test's clean-up; the limiter's keys also expire by themselves). */
export async function deleteRedisKeys(prefix: string, url = TEST_REDIS_URL): Promise<void> {
  const client = testRedisClient(url);
  try {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(...keys);
  } finally {
    client.disconnect();
  }
}

export interface ThrowawayRedis {
  readonly port: number;
  readonly url: string;
  /** SIGKILL, as a crash: connections drop without a goodbye. Resolves when the process is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty (nothing is persisted). */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: a server that accepts nothing and answers nothing, as an overloaded one. */
  pause(): void;
  resume(): void;
  /** Kills it if it runs; safe to call twice. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A redis-server of the test's own on a free loopback port, without persistence. */
export async function startRedisServer(): Promise<ThrowawayRedis> {
  const port = await closedPort();
  let child = await launch(port);
  const kill = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    restart: async () => {
      await kill();
      child = await launch(port);
    },
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    stop: kill,
  };
}

function launch(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (data: Buffer): void => {
      output += data.toString();
      if (!output.includes('Ready to accept connections')) return;
      child.stdout!.off('data', onData);
      child.stdout!.resume();
      resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.resume();
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`redis-server on port ${port} exited (${code ?? signal}) before it was ready:\n${output}`)));
  });
}

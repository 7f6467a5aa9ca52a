// Retries and fallback: which failures are retried, how long to wait, the order of attempts, and the
// attempt log returned with the success or carried by the failure.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { adapterFor } from '../../../src/providers/registry.js';
import { UpstreamFailureError } from '../../../src/providers/types.js';
import { AttemptsFailed, isRetryable, retryDelayMs, withFailover, type Attempted } from '../../../src/pipeline/attempts.js';
import type { PipelineDeps, ClientRequest } from '../../../src/pipeline/deps.js';
import type { Candidate } from '../../../src/routing/resolve-route.js';
import { UpstreamHealth } from '../../../src/routing/upstream-health.js';
import { TransportError } from '../../../src/upstream/transport.js';
import { testProvider } from '../../support/provider-fixture.js';

function failure(status: number, retryAfter?: string): UpstreamFailureError {
  return new UpstreamFailureError({ status, message: `HTTP ${status}`, type: undefined, code: undefined, param: undefined, retryAfter });
}

function candidate(id: string, retries: number, failures = 100): Candidate {
  const provider = testProvider({ id, retries, cooldown: { failures, seconds: 60 } });
  return { provider, adapter: adapterFor('openai'), weight: 1, target: { provider, upstreamModel: id, clientModel: 'm', maxOutputTokens: 10 } };
}

const inOrder = (...candidates: Candidate[]) => ({ candidates, panic: false });

function harness() {
  const deps = { health: new UpstreamHealth(), log: pino({ level: 'silent' }) } as unknown as PipelineDeps;
  const client = { requestId: 'r', signal: new AbortController().signal } as unknown as ClientRequest;
  return { deps, client };
}

/** An attempt's success, as the upstream's 200. */
const ok = <T>(value: T): Attempted<T> => ({ value, status: 200 });

/** The failure AttemptsFailed carries, checked by `check`. */
function failedWith(check: (cause: unknown) => boolean) {
  return (error: unknown) => error instanceof AttemptsFailed && check(error.cause);
}

describe('isRetryable', () => {
  test('retries connection errors, timeouts, resets, 408, 429, 5xx, 529 and in-stream error events', () => {
    for (const error of [
      new TransportError('connect', 'x'),
      new TransportError('timeout', 'x'),
      new TransportError('reset', 'x'),
      failure(408),
      failure(429),
      failure(500),
      failure(503),
      failure(529),
      failure(0),
    ]) {
      assert.equal(isRetryable(error), true, String(error.message));
    }
  });

  test('never retries 400, 401, 403, 404, 413, 422, a client abort, an oversized body or a gateway error', () => {
    for (const error of [failure(400), failure(401), failure(403), failure(404), failure(413), failure(422)]) {
      assert.equal(isRetryable(error), false, error.message);
    }
    assert.equal(isRetryable(new TransportError('aborted', 'x')), false);
    assert.equal(isRetryable(new TransportError('too-large', 'x')), false);
    assert.equal(isRetryable(new Error('bug')), false);
  });
});

describe('retryDelayMs', () => {
  test('backs off exponentially with jitter between half and all of the ceiling', () => {
    assert.equal(retryDelayMs(1, failure(500), () => 0), 100);
    assert.equal(retryDelayMs(1, failure(500), () => 1), 200);
    assert.equal(retryDelayMs(2, failure(500), () => 1), 400);
    assert.equal(retryDelayMs(10, failure(500), () => 1), 2000, 'capped');
  });

  test('honours a short Retry-After (seconds or HTTP date) and gives up on a long one', () => {
    assert.equal(retryDelayMs(1, failure(429, '2')), 2000);
    assert.equal(retryDelayMs(1, failure(429, '0.5')), 500);
    const soon = new Date(Date.now() + 3000).toUTCString();
    const delay = retryDelayMs(1, failure(429, soon))!;
    assert.ok(delay > 1000 && delay <= 3000, `HTTP date → ${delay}`);
    assert.equal(retryDelayMs(1, failure(429, '60')), undefined);
  });
});

describe('withFailover', () => {
  test('retries the same upstream, then falls back to the next, and returns the first success', async () => {
    const { deps, client } = harness();
    const tries: string[] = [];
    const result = await withFailover(deps, client, inOrder(candidate('a', 1), candidate('b', 1)), async (c) => {
      tries.push(c.provider.id);
      if (c.provider.id === 'a') throw new TransportError('reset', 'x');
      return ok('ok');
    });
    assert.equal(result.value, 'ok');
    assert.deepEqual(tries, ['a', 'a', 'b']);
    assert.equal(result.served.provider.id, 'b', 'the upstream that served');
    assert.deepEqual(
      result.attempts.map((a) => [a.provider, a.status]),
      [['a', 502], ['a', 502], ['b', 200]],
      'every attempt, in order, with its status',
    );
  });

  test('stops at once on a failure that must not be retried', async () => {
    const { deps, client } = harness();
    const tries: string[] = [];
    await assert.rejects(
      withFailover(deps, client, inOrder(candidate('a', 2), candidate('b', 2)), async (c) => {
        tries.push(c.provider.id);
        throw failure(400);
      }),
      failedWith((cause) => cause instanceof UpstreamFailureError && cause.failure.status === 400),
    );
    assert.deepEqual(tries, ['a']);
  });

  test('throws the last failure when every attempt failed, with the upstream it came from and every attempt', async () => {
    const { deps, client } = harness();
    let n = 0;
    await assert.rejects(
      withFailover(deps, client, inOrder(candidate('a', 0), candidate('b', 0)), async () => {
        throw failure(500 + n++);
      }),
      (error: unknown) =>
        error instanceof AttemptsFailed &&
        error.cause instanceof UpstreamFailureError &&
        error.cause.failure.status === 501 &&
        error.last.provider.id === 'b' &&
        error.attempts.map((a) => a.status).join() === '500,501',
    );
  });

  test('leaves an upstream as soon as its failure starts a cool-down, and skips it later', async () => {
    const { deps, client } = harness();
    const tries: string[] = [];
    const attempt = async (c: Candidate) => {
      tries.push(c.provider.id);
      if (c.provider.id === 'a') throw failure(503);
      return ok(c.provider.id);
    };
    const a = candidate('a', 5, 1);
    assert.equal((await withFailover(deps, client, inOrder(a, candidate('b', 0)), attempt)).value, 'b');
    assert.deepEqual(tries, ['a', 'b'], 'one failure cools a down (failures: 1): no retries on it');
    assert.equal(deps.health.isCooling(a.target), true);
  });

  test('counts only retryable failures towards a cool-down: a 400 leaves the count untouched', async () => {
    const { deps, client } = harness();
    const a = candidate('a', 0, 1);
    await assert.rejects(withFailover(deps, client, inOrder(a), async () => Promise.reject(failure(400))));
    await assert.rejects(withFailover(deps, client, inOrder(a), async () => Promise.reject(failure(404))));
    assert.equal(deps.health.isCooling(a.target), false);
    assert.equal(deps.health.state(a.target).consecutiveFailures, 0);
  });

  test('a success resets the count of consecutive failures', async () => {
    const { deps, client } = harness();
    const a = candidate('a', 1, 3);
    let n = 0;
    assert.equal((await withFailover(deps, client, inOrder(a), async () => (n++ === 0 ? Promise.reject(failure(500)) : ok('ok')))).value, 'ok');
    assert.equal(deps.health.state(a.target).consecutiveFailures, 0);
    assert.equal(deps.health.state(a.target).recentErrors, 1);
  });

  test('skips an upstream another request cooled down meanwhile, but not in panic routing', async () => {
    const { deps, client } = harness();
    const a = candidate('a', 0);
    const b = candidate('b', 0, 1);
    deps.health.recordFailure(b.target, { status: 500, message: 'x' });
    const tries: string[] = [];
    const attempt = async (c: Candidate) => {
      tries.push(c.provider.id);
      throw failure(500);
    };
    await assert.rejects(withFailover(deps, client, inOrder(a, b), attempt));
    assert.deepEqual(tries, ['a'], 'b was cooling: skipped after a failed');
    tries.length = 0;
    await assert.rejects(withFailover(deps, client, { candidates: [a, b], panic: true }, attempt));
    assert.deepEqual(tries, ['a', 'b'], 'panic routing tries every upstream');
  });

  test('a panic-routed upstream keeps its retries and cools down again when it fails', async () => {
    const { deps, client } = harness();
    const a = candidate('a', 1, 1);
    deps.health.recordFailure(a.target, { status: 500, message: 'x' });
    let tries = 0;
    await assert.rejects(
      withFailover(deps, client, { candidates: [a], panic: true }, async () => {
        tries++;
        throw failure(503);
      }),
    );
    assert.equal(tries, 2, 'one attempt and its retry');
    assert.equal(deps.health.isCooling(a.target), true);
    assert.equal(deps.health.state(a.target).lastError?.status, 503);
  });

  test('a 429 asking for longer than the cool-down cools the upstream for that long', async () => {
    const { deps, client } = harness();
    const a = candidate('a', 3);
    const b = candidate('b', 0);
    const tries: string[] = [];
    const result = await withFailover(deps, client, inOrder(a, b), async (c) => {
      tries.push(c.provider.id);
      if (c.provider.id === 'a') throw failure(429, '120');
      return ok('ok');
    });
    assert.equal(result.value, 'ok');
    assert.deepEqual(tries, ['a', 'b'], 'a long Retry-After is not waited for: the next upstream serves');
    const remaining = deps.health.coolingRemainingMs(a.target);
    assert.ok(remaining > 119_000 && remaining <= 120_000, `cooling for the Retry-After (${remaining} ms)`);
  });

  test('does not retry once the client has gone', async () => {
    const { deps } = harness();
    const controller = new AbortController();
    const client = { requestId: 'r', signal: controller.signal } as unknown as ClientRequest;
    let tries = 0;
    await assert.rejects(
      withFailover(deps, client, inOrder(candidate('a', 3)), async () => {
        tries++;
        controller.abort();
        throw new TransportError('aborted', 'x');
      }),
    );
    assert.equal(tries, 1);
  });
});

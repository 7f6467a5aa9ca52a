// Cool-down per upstream: consecutive retryable failures take one (provider, upstream model) pair out of
// rotation for a while — never the provider account's other models — then it is tried again.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_RETRY_AFTER_COOLDOWN_MS, UpstreamHealth, type UpstreamRef } from '../../../src/routing/upstream-health.js';
import { testProvider } from '../../support/provider-fixture.js';

const provider = testProvider({ cooldown: { failures: 3, seconds: 30 } });
const modelX: UpstreamRef = { provider, upstreamModel: 'model-x' };
const modelY: UpstreamRef = { provider, upstreamModel: 'model-y' };
const fail500 = { status: 500, message: 'HTTP 500' };

describe('UpstreamHealth', () => {
  test('cools an upstream down after the configured number of consecutive failures, for the configured time', () => {
    let now = 1_000_000;
    const health = new UpstreamHealth(() => now);
    assert.equal(health.recordFailure(modelX, fail500), false);
    assert.equal(health.recordFailure(modelX, fail500), false);
    assert.equal(health.isCooling(modelX), false);
    assert.equal(health.recordFailure(modelX, fail500), true, 'the third failure starts the cool-down');
    assert.equal(health.isCooling(modelX), true);
    assert.equal(health.coolingRemainingMs(modelX), 30_000);
    now += 29_999;
    assert.equal(health.isCooling(modelX), true);
    now += 1;
    assert.equal(health.isCooling(modelX), false, 'tried again once the cool-down has passed');
  });

  test('keys the table by (provider, upstream model): a failing model leaves the same account\'s other models alone', () => {
    const health = new UpstreamHealth(() => 0);
    for (let i = 0; i < 3; i++) health.recordFailure(modelX, fail500);
    assert.equal(health.isCooling(modelX), true);
    assert.equal(health.isCooling(modelY), false);
    assert.equal(health.coolingRemainingMs(modelY), 0);
    assert.equal(health.state(modelY).consecutiveFailures, 0);
  });

  test('keys the table by (provider, upstream model): the same model name on another account is another upstream', () => {
    const health = new UpstreamHealth(() => 0);
    const other: UpstreamRef = { provider: testProvider({ id: 'other', cooldown: { failures: 1, seconds: 5 } }), upstreamModel: 'model-x' };
    health.recordFailure(other, fail500);
    assert.equal(health.isCooling(other), true);
    assert.equal(health.isCooling(modelX), false);
  });

  test('a success resets the count of consecutive failures', () => {
    const health = new UpstreamHealth(() => 0);
    health.recordFailure(modelX, fail500);
    health.recordFailure(modelX, fail500);
    health.recordSuccess(modelX);
    assert.equal(health.recordFailure(modelX, fail500), false);
    assert.equal(health.recordFailure(modelX, fail500), false);
    assert.equal(health.isCooling(modelX), false);
  });

  test('after a cool-down an upstream needs as many new failures to cool down again', () => {
    let now = 0;
    const health = new UpstreamHealth(() => now);
    for (let i = 0; i < 3; i++) health.recordFailure(modelX, fail500);
    now += 30_000;
    assert.equal(health.recordFailure(modelX, fail500), false);
    assert.equal(health.isCooling(modelX), false);
  });

  test('a failure while cooling down (a panic-routed call) pushes the cool-down out without ending that call\'s retries', () => {
    let now = 0;
    const health = new UpstreamHealth(() => now);
    for (let i = 0; i < 3; i++) health.recordFailure(modelX, fail500);
    now += 10_000;
    assert.equal(health.recordFailure(modelX, fail500), false, 'false: it did not start a cool-down');
    assert.equal(health.coolingRemainingMs(modelX), 30_000, 'cooling for a full period from now');
  });

  test('a 429 whose Retry-After is longer than the configured cool-down cools the upstream at once, for the Retry-After', () => {
    const health = new UpstreamHealth(() => 0);
    assert.equal(health.recordFailure(modelX, { status: 429, message: 'slow down', retryAfterMs: 120_000 }), true);
    assert.equal(health.coolingRemainingMs(modelX), 120_000);
  });

  test('a Retry-After cool-down is bounded by 10 minutes', () => {
    const health = new UpstreamHealth(() => 0);
    health.recordFailure(modelX, { status: 429, message: 'slow down', retryAfterMs: 86_400_000 });
    assert.equal(health.coolingRemainingMs(modelX), MAX_RETRY_AFTER_COOLDOWN_MS);
    assert.equal(MAX_RETRY_AFTER_COOLDOWN_MS, 600_000);
  });

  test('a 429 with a Retry-After no longer than the cool-down counts as one failure like any other', () => {
    const health = new UpstreamHealth(() => 0);
    assert.equal(health.recordFailure(modelX, { status: 429, message: 'slow down', retryAfterMs: 5_000 }), false);
    assert.equal(health.isCooling(modelX), false);
    assert.equal(health.state(modelX).consecutiveFailures, 1);
  });

  test('a Retry-After on anything but a 429 is not a cool-down request', () => {
    const health = new UpstreamHealth(() => 0);
    assert.equal(health.recordFailure(modelX, { status: 503, message: 'busy', retryAfterMs: 120_000 }), false);
    assert.equal(health.isCooling(modelX), false);
  });

  test('reports the last error and the attempts and errors of the last five minutes', () => {
    let now = 10 * 60_000;
    const health = new UpstreamHealth(() => now);
    health.recordSuccess(modelX);
    health.recordFailure(modelX, { status: 503, message: 'overloaded' });
    now += 60_000;
    health.recordSuccess(modelX);
    const state = health.state(modelX);
    assert.deepEqual(state.lastError, { status: 503, message: 'overloaded', at: 10 * 60_000 });
    assert.equal(state.recentRequests, 3);
    assert.equal(state.recentErrors, 1);
    assert.equal(state.consecutiveFailures, 0);
    now += 4 * 60_000;
    const later = health.state(modelX);
    assert.equal(later.recentRequests, 1, 'only the minute still inside the window');
    assert.equal(later.recentErrors, 0);
    now += 60_000;
    assert.equal(health.state(modelX).recentRequests, 0);
    assert.deepEqual(health.state(modelY), { consecutiveFailures: 0, coolingUntil: 0, lastError: undefined, recentRequests: 0, recentErrors: 0 });
  });

  test('tells its listener of each cool-down it starts (to share it), and none for a failure that does not trip one', () => {
    const now = 5_000;
    const health = new UpstreamHealth(() => now);
    const told: Array<[string, string, number]> = [];
    health.onCooldown((p, m, until) => told.push([p, m, until]));
    health.recordFailure(modelX, fail500);
    health.recordFailure(modelX, fail500);
    assert.deepEqual(told, []);
    health.recordFailure(modelX, fail500);
    assert.deepEqual(told, [[provider.id, 'model-x', now + 30_000]]);
  });

  test('applies another gateway\'s cool-down: skips the upstream until then, never shortens its own, tells no listener', () => {
    let now = 10_000;
    const health = new UpstreamHealth(() => now);
    let told = 0;
    health.onCooldown(() => (told += 1));
    assert.equal(health.applyCooldown(provider.id, 'model-y', now + 5_000), true);
    assert.equal(health.isCooling(modelY), true);
    assert.equal(health.isCooling(modelX), false, 'only that upstream');
    assert.equal(health.applyCooldown(provider.id, 'model-y', now + 1_000), false, 'a shorter one changes nothing');
    assert.equal(health.coolingRemainingMs(modelY), 5_000);
    assert.equal(told, 0, 'a shared cool-down is not shared back');
    now += 5_000;
    assert.equal(health.isCooling(modelY), false);
  });
});

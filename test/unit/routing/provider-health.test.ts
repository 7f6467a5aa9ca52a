// Cool-down: consecutive failures take a provider out of rotation for a while, then it is tried again.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ProviderHealth } from '../../../src/routing/provider-health.js';
import { testProvider } from '../../support/provider-fixture.js';

describe('ProviderHealth', () => {
  const provider = testProvider({ cooldown: { failures: 3, seconds: 30 } });

  test('cools a provider down after the configured number of consecutive failures, for the configured time', () => {
    let now = 1_000_000;
    const health = new ProviderHealth(() => now);
    assert.equal(health.recordFailure(provider), false);
    assert.equal(health.recordFailure(provider), false);
    assert.equal(health.isCooling(provider.id), false);
    assert.equal(health.recordFailure(provider), true, 'the third failure starts the cool-down');
    assert.equal(health.isCooling(provider.id), true);
    assert.equal(health.coolingRemainingMs(provider.id), 30_000);
    now += 29_999;
    assert.equal(health.isCooling(provider.id), true);
    now += 1;
    assert.equal(health.isCooling(provider.id), false, 'tried again once the cool-down has passed');
  });

  test('a success resets the count of consecutive failures', () => {
    const health = new ProviderHealth(() => 0);
    health.recordFailure(provider);
    health.recordFailure(provider);
    health.recordSuccess(provider.id);
    assert.equal(health.recordFailure(provider), false);
    assert.equal(health.recordFailure(provider), false);
    assert.equal(health.isCooling(provider.id), false);
  });

  test('after a cool-down a provider needs as many new failures to cool down again', () => {
    let now = 0;
    const health = new ProviderHealth(() => now);
    for (let i = 0; i < 3; i++) health.recordFailure(provider);
    now += 30_000;
    assert.equal(health.recordFailure(provider), false);
    assert.equal(health.isCooling(provider.id), false);
  });

  test('keeps providers apart', () => {
    const health = new ProviderHealth(() => 0);
    const other = testProvider({ id: 'other', cooldown: { failures: 1, seconds: 5 } });
    health.recordFailure(other);
    assert.equal(health.isCooling('other'), true);
    assert.equal(health.isCooling(provider.id), false);
    assert.equal(health.coolingRemainingMs(provider.id), 0);
  });
});

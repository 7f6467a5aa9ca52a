// The usage row the storage tests settle and release with, where only its request, key and cost matter.
import type { UsageRecord } from '../../src/storage/types.js';

/** A successful upstream call's row for `requestId` on key_a, costing `cost`, at `overrides.time` or now. */
export function testUsage(requestId: string, cost: number, overrides: Partial<UsageRecord> = {}): UsageRecord {
  return {
    requestId,
    time: Date.now(),
    keyId: 'key_a',
    model: 'm',
    provider: 'p',
    upstreamModel: 'u',
    status: 200,
    inputTokens: 3,
    cachedInputTokens: 0,
    outputTokens: 4,
    reasoningTokens: 0,
    cost,
    usageSource: 'upstream',
    attempts: [{ provider: 'p', status: 200, durationMs: 1 }],
    endpoint: 'chat',
    errorCode: null,
    errorMessage: null,
    durationMs: 250,
    firstTokenMs: 40,
    sessionId: null,
    ...overrides,
  };
}

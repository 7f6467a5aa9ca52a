// Cool-down per provider account: after `cooldown.failures` consecutive failed attempts the provider is
// skipped for `cooldown.seconds`, then tried again (and needs as many new failures to cool down again).
import type { ProviderConfig } from '../config/types.js';

interface Health {
  consecutiveFailures: number;
  coolingUntil: number;
}

export class ProviderHealth {
  private readonly byProvider = new Map<string, Health>();

  constructor(private readonly now: () => number = Date.now) {}

  isCooling(providerId: string): boolean {
    const health = this.byProvider.get(providerId);
    return health !== undefined && health.coolingUntil > this.now();
  }

  /** Milliseconds until the provider is tried again (0 when it is not cooling down). */
  coolingRemainingMs(providerId: string): number {
    const health = this.byProvider.get(providerId);
    return health ? Math.max(0, health.coolingUntil - this.now()) : 0;
  }

  recordSuccess(providerId: string): void {
    const health = this.byProvider.get(providerId);
    if (health) health.consecutiveFailures = 0;
  }

  /** Returns true when this failure started a cool-down. */
  recordFailure(provider: ProviderConfig): boolean {
    let health = this.byProvider.get(provider.id);
    if (!health) this.byProvider.set(provider.id, (health = { consecutiveFailures: 0, coolingUntil: 0 }));
    health.consecutiveFailures += 1;
    if (health.consecutiveFailures < provider.cooldown.failures) return false;
    health.consecutiveFailures = 0;
    health.coolingUntil = this.now() + provider.cooldown.seconds * 1000;
    return true;
  }
}

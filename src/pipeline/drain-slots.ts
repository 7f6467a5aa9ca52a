// `on_client_disconnect: drain`: a stream whose client left keeps reading its upstream until the usage
// arrives, so it is billed exactly — at most `drain_max_concurrent` at once per provider (beyond that,
// the upstream call is aborted and the request settled on an estimate).
import type { ProviderConfig } from '../config/types.js';

export class DrainSlots {
  private readonly inUse = new Map<string, number>();

  tryAcquire(provider: ProviderConfig): boolean {
    if (provider.onClientDisconnect !== 'drain') return false;
    const used = this.inUse.get(provider.id) ?? 0;
    if (used >= provider.drainMaxConcurrent) return false;
    this.inUse.set(provider.id, used + 1);
    return true;
  }

  release(provider: ProviderConfig): void {
    const used = this.inUse.get(provider.id) ?? 0;
    if (used <= 1) this.inUse.delete(provider.id);
    else this.inUse.set(provider.id, used - 1);
  }

  count(providerId: string): number {
    return this.inUse.get(providerId) ?? 0;
  }
}

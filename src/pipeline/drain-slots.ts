// `on_client_disconnect: drain`: a stream whose client left keeps reading its upstream until the usage
// arrives, so it is billed exactly — at most `drain_max_concurrent` at once per provider (beyond that,
// the upstream call is aborted and the request settled on an estimate). Shutdown does not wait for
// drains: it cancels them, and they settle on an estimate like an aborted stream.
import type { ProviderConfig } from '../config/types.js';

export class DrainSlots {
  private readonly inUse = new Map<string, number>();
  private readonly active = new Set<() => void>();
  private closed = false;

  /** `cancel` aborts the drain if the gateway shuts down; call release() when the drain ends. */
  tryAcquire(provider: ProviderConfig, cancel: () => void): boolean {
    if (this.closed || provider.onClientDisconnect !== 'drain') return false;
    const used = this.inUse.get(provider.id) ?? 0;
    if (used >= provider.drainMaxConcurrent) return false;
    this.inUse.set(provider.id, used + 1);
    this.active.add(cancel);
    return true;
  }

  release(provider: ProviderConfig, cancel: () => void): void {
    if (!this.active.delete(cancel)) return;
    const used = this.inUse.get(provider.id) ?? 0;
    if (used <= 1) this.inUse.delete(provider.id);
    else this.inUse.set(provider.id, used - 1);
  }

  count(providerId: string): number {
    return this.inUse.get(providerId) ?? 0;
  }

  /** Refuses new drains and cancels the running ones. */
  shutdown(): void {
    this.closed = true;
    for (const cancel of [...this.active]) cancel();
  }
}

// The billing rules on top of the ledger store: holds with an expiry, settlement from usage, release on
// failure. Fails closed: if the store cannot place a hold, the request is refused (503) before any
// upstream call.
import type { Logger } from 'pino';
import type { BillingConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { Admission, LedgerStore, ReleaseOutcome, SettleOutcome, UsageRecord } from '../storage/types.js';
import type { Nano } from './money.js';

export class Ledger {
  constructor(
    private readonly store: LedgerStore,
    private readonly billing: BillingConfig,
    private readonly log: Logger,
  ) {}

  async hold(keyId: string, requestId: string, amount: Nano): Promise<Admission> {
    const now = Date.now();
    try {
      return await this.store.placeHold({
        requestId,
        keyId,
        amount,
        now,
        expiresAt: now + this.billing.holdTtlSeconds * 1000,
      });
    } catch (error) {
      this.log.error({ err: error, requestId }, 'ledger: cannot place hold');
      throw new GatewayError('ledger_unavailable', { headers: { 'retry-after': '1' }, cause: error });
    }
  }

  /** Never throws: the upstream work is done; a failure is logged with everything needed to reconcile it. */
  async settle(requestId: string, cost: Nano, usage: UsageRecord): Promise<SettleOutcome | 'failed'> {
    try {
      const outcome = await this.store.settle({ requestId, cost, usage, now: Date.now() });
      if (outcome === 'late') this.log.warn({ requestId, cost }, 'ledger: settled after the hold had expired');
      if (outcome === 'duplicate' || outcome === 'missing') this.log.warn({ requestId, outcome }, 'ledger: nothing to settle');
      return outcome;
    } catch (error) {
      this.log.error({ err: error, requestId, cost, usage }, 'ledger: settlement failed; the hold will expire');
      return 'failed';
    }
  }

  async release(requestId: string, usage: UsageRecord | undefined): Promise<ReleaseOutcome | 'failed'> {
    try {
      return await this.store.release(requestId, usage, Date.now());
    } catch (error) {
      this.log.error({ err: error, requestId }, 'ledger: release failed; the hold will expire');
      return 'failed';
    }
  }

  async extend(requestId: string): Promise<void> {
    try {
      await this.store.extendHold(requestId, Date.now() + this.billing.holdTtlSeconds * 1000);
    } catch (error) {
      this.log.warn({ err: error, requestId }, 'ledger: could not extend hold');
    }
  }
}

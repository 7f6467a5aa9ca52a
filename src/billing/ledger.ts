// The billing rules on top of the ledger store: holds with an expiry, settlement from usage, release on
// failure. Fails closed: if the store cannot place a hold, the request is refused (503) before any
// upstream call.
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { BillingConfig, LimitsConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { Admission, KeyRecord, LedgerStore, ReleaseOutcome, RenewOutcome, SettleResult, UsageRecord } from '../storage/types.js';
import { accountBudgetWindowOf, budgetWindowOf } from './budget.js';
import type { Nano } from './money.js';

/** Settlement retries: about 3 s in all, well inside any hold's TTL. */
const SETTLE_RETRY_DELAYS_MS = [50, 150, 400, 900, 1500];

export class Ledger {
  constructor(
    private readonly store: LedgerStore,
    private readonly billing: BillingConfig,
    private readonly limits: LimitsConfig,
    private readonly log: Logger,
    /** Told how long each ledger write took, in seconds (the metrics' histogram). */
    private readonly observeWrite: (seconds: number) => void = () => {},
    /** False while the database is known to be down (its warn line said why): a refused hold is then no news. */
    private readonly databaseReachable: () => boolean = () => true,
  ) {}

  /** Runs one store write, timing it whether it succeeds or fails. */
  private async timed<T>(write: () => Promise<T>): Promise<T> {
    const startedAt = performance.now();
    try {
      return await write();
    } finally {
      this.observeWrite((performance.now() - startedAt) / 1000);
    }
  }

  /** Atomic admission against the key's caps and its account's balance and budget (a refusal says which). */
  async hold(key: KeyRecord, requestId: string, amount: Nano): Promise<Admission> {
    const now = Date.now();
    try {
      return await this.timed(() => this.store.placeHold({
        requestId,
        keyId: key.id,
        amount,
        now,
        expiresAt: now + this.billing.holdTtlSeconds * 1000,
        budget: budgetWindowOf(key, this.limits, now),
        accountBudget: accountBudgetWindowOf(key, now),
      }));
    } catch (error) {
      // During an outage every request would add this line: the outage's one warn line says it instead.
      this.log[this.databaseReachable() ? 'error' : 'debug']({ err: error, requestId }, 'ledger: cannot place hold');
      throw new GatewayError('ledger_unavailable', { headers: { 'retry-after': '1' }, cause: error });
    }
  }

  /**
   * Never throws: the upstream work is done. A transient failure (the database locked by another
   * process) is retried — settlement is idempotent — and a lasting one is logged with everything
   * needed to reconcile it.
   */
  async settle(key: KeyRecord, requestId: string, cost: Nano, usage: UsageRecord): Promise<SettleResult | 'failed'> {
    const result = await this.persist(() => {
      const now = Date.now();
      return this.store.settle({ requestId, cost, usage, now, budget: budgetWindowOf(key, this.limits, now), accountBudget: accountBudgetWindowOf(key, now) });
    });
    if (result === 'failed') {
      this.log.error({ requestId, cost, usage }, 'ledger: settlement failed; the hold will expire');
      return result;
    }
    const { outcome, charged } = result;
    if (outcome === 'late') this.log.warn({ requestId, cost }, 'ledger: settled after the hold had expired, admitted again');
    if (outcome === 'late-capped') {
      this.log.warn({ requestId, cost, charged, uncollected: cost - charged }, 'ledger: settled after the hold had expired; the key could cover only part of the cost');
    }
    if (outcome === 'duplicate' || outcome === 'missing') this.log.warn({ requestId, outcome }, 'ledger: nothing to settle');
    return result;
  }

  async release(requestId: string, usage: UsageRecord | undefined): Promise<ReleaseOutcome | 'failed'> {
    const outcome = await this.persist(() => this.store.release(requestId, usage, Date.now()));
    if (outcome === 'failed') this.log.error({ requestId }, 'ledger: release failed; the hold will expire');
    return outcome;
  }

  private async persist<T>(write: () => Promise<T>): Promise<T | 'failed'> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.timed(write);
      } catch (error) {
        if (attempt >= SETTLE_RETRY_DELAYS_MS.length) {
          this.log.error({ err: error }, 'ledger: write failed');
          return 'failed';
        }
        await delay(SETTLE_RETRY_DELAYS_MS[attempt]);
      }
    }
  }

  /**
   * Grows a live request's hold by `amount` through the same atomic admission as a new hold (growing
   * holds, ADR 0020); a hold the sweeper expired meanwhile is renewed first. False when the key (balance
   * or budget) cannot cover it, or on a database error: the stream then ends, never overdraws.
   */
  async grow(key: KeyRecord, requestId: string, amount: Nano): Promise<boolean> {
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const now = Date.now();
        const budget = budgetWindowOf(key, this.limits, now);
        const result = await this.store.growHold({ requestId, amount, now, budget, accountBudget: accountBudgetWindowOf(key, now) });
        if (result.outcome === 'grown') return true;
        if (result.outcome !== 'expired') return false;
        const renewed = await this.renew(key, requestId);
        if (renewed === 'failed' || (renewed.outcome !== 'readmitted' && renewed.outcome !== 'extended')) return false;
      }
      return false;
    } catch (error) {
      this.log.warn({ err: error, requestId }, 'ledger: could not grow hold');
      return false;
    }
  }

  /** Keeps a live request's hold (extends it, or re-admits it if a sweeper expired it); 'failed' on a database error. */
  async renew(key: KeyRecord, requestId: string): Promise<RenewOutcome | 'failed'> {
    const now = Date.now();
    try {
      const budget = budgetWindowOf(key, this.limits, now);
      const accountBudget = accountBudgetWindowOf(key, now);
      const result = await this.timed(() => this.store.renewHold({ requestId, expiresAt: now + this.billing.holdTtlSeconds * 1000, now, budget, accountBudget }));
      if (result.outcome === 'readmitted') this.log.warn({ requestId }, 'ledger: the hold had expired while its request ran; admitted again');
      if (result.outcome === 'refused') this.log.warn({ requestId, reason: result.refusal.reason }, 'ledger: the hold had expired and the key no longer covers it');
      return result;
    } catch (error) {
      this.log.warn({ err: error, requestId }, 'ledger: could not extend hold');
      return 'failed';
    }
  }
}

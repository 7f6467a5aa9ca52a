// The one thing that moves a request's money: its rate-limit ticket and its hold, kept alive while the
// request runs (a long stream, a slow first byte), grown step by step for a growing hold, and closed
// exactly once with the settlement the flow decided — captured at the exact price, captured at an
// estimate capped at what is held, or released. If the hold is lost meanwhile (it expired and the key can
// no longer cover it), `stopReason` says why and the running upstream attempt is stopped.
import type { HoldSizing } from '../../billing/insufficient-balance.js';
import type { Nano } from '../../billing/money.js';
import { priceUsage, type PriceRates, type TokenUsage } from '../../billing/pricing.js';
import { refusalError } from '../../billing/refusal-error.js';
import type { ModelConfig } from '../../config/types.js';
import type { GatewayError } from '../../errors.js';
import { NO_OP_TICKET } from '../../limits/admission.js';
import type { RateTicket } from '../../limits/rate-limiter.js';
import { servedModelRates, type ServedModelRates } from '../../routing/served-model.js';
import type { Attempt, UsageRecord } from '../../storage/types.js';
import { outcomeFields } from '../../telemetry/request-outcome.js';
import type { AttemptStopper } from '../../upstream/attempt-signal.js';
import type { ClientRequest, PipelineDeps } from '../deps.js';
import type { Settlement } from '../settlement.js';

/** Which upstream the row names, and what each attempt did. */
export interface UsageDraft {
  readonly provider: string;
  readonly upstreamModel: string;
  readonly attempts: readonly Attempt[];
  /** performance.now() when the first chunk of a stream went to the client. */
  readonly firstTokenAt: number | undefined;
}

/** What closing charged: the decision, the nano-dollars captured (0 for a release) and the usage row written. */
export interface Charge {
  readonly settlement: Settlement;
  readonly cost: Nano;
  readonly record: UsageRecord;
}

const ZERO_USAGE: TokenUsage = { input: 0, cachedInput: 0, output: 0, reasoning: 0 };

export class Reservation implements AttemptStopper {
  private closed = false;
  private readonly keepAlive: NodeJS.Timeout;
  private renewing: Promise<void> | undefined;
  /** Set, with the error to answer, when the hold expired while the request ran and the key can no longer cover it. */
  stopReason: GatewayError | undefined;
  /**
   * The running upstream attempt's listener for stopReason. Plain functions, not an AbortSignal: a request is
   * stopped almost never, and Node's EventTarget costs ~2 µs per request to create and subscribe to.
   */
  private stopListeners: Set<() => void> | undefined;
  /** What the hold amounts to now: the sizing's hold, plus the steps a growing hold added. */
  private held: Nano;

  private constructor(
    private readonly deps: PipelineDeps,
    private readonly client: ClientRequest,
    private readonly model: ModelConfig,
    readonly sizing: HoldSizing,
    private readonly rate: RateTicket,
    private readonly servedRates: ServedModelRates,
  ) {
    this.held = sizing.hold;
    const everyMs = (deps.config.billing.holdTtlSeconds * 1000) / 3;
    this.keepAlive = setInterval(() => {
      rate.renew();
      this.renewing ??= this.renewHold().finally(() => (this.renewing = undefined));
    }, everyMs);
    this.keepAlive.unref();
  }

  /**
   * Admits the request (atomically, balance and budget) or throws 402 / 401 / 503. A refused request
   * counts for nothing against the rate limits that had admitted it (`rate` is cancelled).
   */
  static async open(
    deps: PipelineDeps,
    client: ClientRequest,
    model: ModelConfig,
    sizing: HoldSizing,
    rate: RateTicket = NO_OP_TICKET,
    servedRates: ServedModelRates = servedModelRates(deps.config),
  ): Promise<Reservation> {
    let admission;
    try {
      admission = await deps.ledger.hold(client.key, client.requestId, sizing.hold);
    } catch (error) {
      rate.cancel();
      throw error;
    }
    if (!admission.admitted) {
      rate.cancel();
      throw refusalError(admission, sizing, client.key, deps.config.limits, Date.now());
    }
    return new Reservation(deps, client, model, sizing, rate, servedRates);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  addStopListener(listener: () => void): void {
    (this.stopListeners ??= new Set()).add(listener);
  }

  removeStopListener(listener: () => void): void {
    this.stopListeners?.delete(listener);
  }

  /** Grows the hold by `amount` (atomic admission, like a new hold); false when the key cannot cover it. */
  async grow(amount: Nano): Promise<boolean> {
    if (this.closed || !(await this.deps.ledger.grow(this.client.key, this.client.requestId, amount))) return false;
    this.held += amount;
    return true;
  }

  /**
   * Closes the reservation with the flow's decision: prices it (an estimate never above what is held),
   * writes the capture or the release with the usage row, frees the rate ticket. Once: a second close
   * is a bug.
   */
  async close(settlement: Settlement, draft: UsageDraft): Promise<Charge> {
    if (this.closed) throw new Error(`request ${this.client.requestId} settled twice`);
    this.closed = true;
    const tokens = settlement.kind === 'release' ? ZERO_USAGE : settlement.tokens;
    // tpm counts what the request really used from now on, not the hold's estimate.
    this.rate.finish(tokens.input + tokens.output);
    clearInterval(this.keepAlive);
    await this.renewing;
    if (settlement.kind === 'release') {
      const record = this.usageRecord(draft, settlement, tokens, 0);
      await this.deps.ledger.release(this.client.requestId, record);
      return { settlement, cost: 0, record };
    }
    const priced = priceUsage(this.ratesFor(draft, tokens), tokens);
    const cost = settlement.kind === 'estimate' ? Math.min(priced, this.held) : priced;
    const record = this.usageRecord(draft, settlement, tokens, cost);
    const result = await this.deps.ledger.settle(this.client.key, this.client.requestId, cost, record);
    // Less only when an expired hold could not be admitted again (late-capped).
    const charged = result !== 'failed' && result.outcome === 'late-capped' ? result.charged : cost;
    return { settlement, cost: charged, record: charged === cost ? record : { ...record, cost: charged } };
  }

  /**
   * The model's prices, or those of the model the upstream says served the request when it is another
   * one the config knows (an estimate has no answer to read: the requested model's).
   */
  private ratesFor(draft: UsageDraft, tokens: TokenUsage): PriceRates {
    const served = tokens.modifiers?.servedModel;
    return (served !== undefined ? this.servedRates(draft.provider, draft.upstreamModel, served) : undefined) ?? this.model.rates;
  }

  private async renewHold(): Promise<void> {
    const result = await this.deps.ledger.renew(this.client.key, this.client.requestId);
    if (result === 'failed' || result.outcome !== 'refused' || this.closed) return;
    clearInterval(this.keepAlive);
    this.stopReason = refusalError(result.refusal, this.sizing, this.client.key, this.deps.config.limits, Date.now());
    for (const listener of this.stopListeners ?? []) listener();
  }

  private usageRecord(draft: UsageDraft, settlement: Settlement, tokens: TokenUsage, cost: Nano): UsageRecord {
    const { client } = this;
    return {
      requestId: client.requestId,
      time: Date.now(),
      keyId: client.key.id,
      model: this.model.id,
      provider: draft.provider,
      upstreamModel: draft.upstreamModel,
      status: settlement.status,
      inputTokens: tokens.input,
      cachedInputTokens: tokens.cachedInput,
      outputTokens: tokens.output,
      reasoningTokens: tokens.reasoning,
      cacheWriteTokens: tokens.cacheWrite ?? 0,
      cost,
      // A release writes the row of a failure: no usage to speak of, as the upstream reported none.
      usageSource: settlement.kind === 'estimate' ? 'estimated' : 'upstream',
      attempts: draft.attempts,
      ...outcomeFields(client, settlement.status, settlement.failure, draft.firstTokenAt),
    };
  }
}

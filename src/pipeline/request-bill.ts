// The billing side of one request: places the hold, records each upstream attempt, and closes the
// hold exactly once — captured at the exact price of the upstream's usage, captured at an estimate
// (capped at the hold) when there is none, or released when the upstream failed before any output.
import type { HoldSizing } from '../billing/insufficient-balance.js';
import { nanoToUsd, type Nano } from '../billing/money.js';
import { priceUsage, type TokenUsage } from '../billing/pricing.js';
import { refusalError } from '../billing/refusal-error.js';
import { NO_OP_TICKET } from '../limits/admission.js';
import type { RateTicket } from '../limits/rate-limiter.js';
import type { ModelConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { JsonObject } from '../json-object.js';
import type { ReportedUsage } from '../providers/types.js';
import type { Candidate } from '../routing/resolve-route.js';
import type { Attempt, UsageRecord, UsageSource } from '../storage/types.js';
import { outcomeFields } from '../telemetry/request-outcome.js';
import { ClientGoneError, type ClientRequest, type PipelineDeps } from './deps.js';
import { TransportError } from '../upstream/transport.js';
import { toGatewayError } from './upstream-error.js';

export interface Charge {
  readonly cost: Nano;
  /** The OpenAI-shaped usage for the client, with `cost` in USD. */
  readonly usage: JsonObject;
}

export class RequestBill {
  private readonly attempts: Attempt[] = [];
  private closed = false;
  /** While the request is in flight its hold is kept from expiring (a long stream, a slow first byte). */
  private readonly keepAlive: NodeJS.Timeout;
  private renewing: Promise<void> | undefined;
  /**
   * Set, with the GatewayError to answer, when the hold expired while the request ran (a paused
   * process, another gateway's sweeper) and the key can no longer cover it: the request must end.
   */
  stopReason: GatewayError | undefined;
  /**
   * The running upstream attempt's listener for stopReason. Plain functions, not an AbortSignal: a bill
   * is stopped almost never, and Node's EventTarget costs ~2 µs per request to create and subscribe to.
   */
  private stopListeners: Set<() => void> | undefined;
  /** Set once an upstream answered with success: from then on it has done work that a fault must not make free. */
  private outputSoFar: (() => number) | undefined;
  /** What the hold amounts to now: the sizing's hold, plus the steps a growing hold added. */
  private held: Nano;

  private constructor(
    private readonly deps: PipelineDeps,
    private readonly client: ClientRequest,
    private readonly model: ModelConfig,
    private candidate: Candidate,
    private readonly sizing: HoldSizing,
    private readonly rate: RateTicket,
  ) {
    this.held = sizing.hold;
    const everyMs = (deps.config.billing.holdTtlSeconds * 1000) / 3;
    this.keepAlive = setInterval(() => {
      rate.renew();
      this.renewing ??= this.renewHold().finally(() => (this.renewing = undefined));
    }, everyMs);
    this.keepAlive.unref();
  }

  private async renewHold(): Promise<void> {
    const result = await this.deps.ledger.renew(this.client.key, this.client.requestId);
    if (result === 'failed' || result.outcome !== 'refused' || this.closed) return;
    clearInterval(this.keepAlive);
    this.stopReason = refusalError(result.refusal, this.sizing, this.client.key, this.deps.config.limits, Date.now());
    for (const listener of this.stopListeners ?? []) listener();
  }

  /**
   * Admits the request (atomically, balance and budget) or throws 402 / 401 / 503. A refused request
   * counts for nothing against the rate limits that had admitted it (`rate` is cancelled).
   */
  static async open(
    deps: PipelineDeps,
    client: ClientRequest,
    model: ModelConfig,
    candidate: Candidate,
    sizing: HoldSizing,
    rate: RateTicket = NO_OP_TICKET,
  ): Promise<RequestBill> {
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
    client.trace.billOpened(candidate.provider.id);
    return new RequestBill(deps, client, model, candidate, sizing, rate);
  }

  /** Calls `listener` when the request is stopped (stopReason set). */
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

  /** The upstream that served (or is serving) the request. */
  useCandidate(candidate: Candidate): void {
    this.candidate = candidate;
  }

  /** An upstream accepted the request (a 2xx answer began); `outputTokens` reads what it has delivered so far. */
  upstreamServed(outputTokens: () => number): void {
    this.outputSoFar = outputTokens;
  }

  recordAttempt(provider: string, status: number, startedAt: number): void {
    this.attempts.push({ provider, status, durationMs: Math.round(performance.now() - startedAt) });
  }

  /** Exact settlement from the upstream's usage; `failure`: the error the client got, if any (a stream that broke). */
  async settleExact(reported: ReportedUsage, status: number, failure?: GatewayError): Promise<Charge> {
    const cost = await this.close(priceUsage(this.model.rates, reported.tokens), reported.tokens, 'upstream', status, failure);
    return { cost, usage: { ...reported.openai, cost: nanoToUsd(cost) } };
  }

  /** No usage from the upstream: the input estimate plus the output actually delivered, never more than the hold. */
  async settleEstimated(outputTokens: number, status: number, failure?: GatewayError): Promise<Charge> {
    const tokens: TokenUsage = { input: this.sizing.inputTokens, cachedInput: 0, output: outputTokens, reasoning: 0 };
    const cost = await this.close(Math.min(priceUsage(this.model.rates, tokens), this.held), tokens, 'estimated', status, failure);
    const usage: JsonObject = { prompt_tokens: tokens.input, total_tokens: tokens.input + tokens.output, cost: nanoToUsd(cost) };
    if (this.model.type === 'chat') {
      usage.completion_tokens = tokens.output;
    }
    return { cost, usage };
  }

  /** Upstream failure before any output: the hold is released, nothing is charged. */
  async release(status: number, failure?: GatewayError): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.rate.finish(0);
    await this.stopKeepAlive();
    const record = this.usageRecord(ZERO_USAGE, 0, 'upstream', status, failure);
    await this.deps.ledger.release(this.client.requestId, record);
    this.client.trace.billClosed(record);
  }

  /**
   * Closes a hold that an unexpected error left open. An upstream that served the request did work: it
   * is charged the estimate (input plus the output delivered, or the whole hold if that cannot be read),
   * capped at the hold — never released for free. Before that, nothing is charged.
   */
  async closeAfterFault(status: number): Promise<void> {
    if (this.closed) return;
    const failure = new GatewayError('internal_error');
    if (!this.outputSoFar) return this.release(status, failure);
    let output: number;
    try {
      output = this.outputSoFar();
    } catch {
      // The most output the hold was sized for: its price reaches the hold, which is what is charged.
      output = (this.sizing.modelMaxOutput ?? 0) * this.sizing.n;
    }
    await this.settleEstimated(output, status, failure);
  }

  /**
   * The call failed before any output reached the client. Returns the error to throw: the client's
   * own disconnect is charged the input estimate (the upstream had read the prompt); an upstream
   * failure releases the hold.
   */
  async abandon(error: unknown): Promise<Error> {
    if (this.stopReason) {
      // The hold was lost while an upstream call ran: it had read the prompt (charged only through admission).
      const lost = this.stopReason;
      await this.settleEstimated(0, lost.status, lost);
      return lost;
    }
    if (this.client.signal.aborted) {
      // Gone while an upstream call was running: that upstream had read the prompt. Gone while waiting
      // to retry after a failure: no upstream did any work, so nothing is charged.
      if (error instanceof TransportError && error.reason === 'aborted') await this.settleEstimated(0, 499);
      else await this.release(499);
      return new ClientGoneError();
    }
    const gatewayError = toGatewayError(error, this.candidate.provider);
    await this.release(gatewayError.status, gatewayError);
    return gatewayError;
  }

  /** Captures `cost`; returns what was charged (less only when an expired hold could not be admitted again). */
  private async close(cost: Nano, tokens: TokenUsage, source: UsageSource, status: number, failure: GatewayError | undefined): Promise<Nano> {
    if (this.closed) throw new Error(`request ${this.client.requestId} settled twice`);
    this.closed = true;
    // tpm counts what the request really used from now on, not the hold's estimate.
    this.rate.finish(tokens.input + tokens.output);
    await this.stopKeepAlive();
    const record = this.usageRecord(tokens, cost, source, status, failure);
    const result = await this.deps.ledger.settle(this.client.key, this.client.requestId, cost, record);
    const charged = result !== 'failed' && result.outcome === 'late-capped' ? result.charged : cost;
    this.client.trace.billClosed(charged === cost ? record : { ...record, cost: charged });
    return charged;
  }

  private async stopKeepAlive(): Promise<void> {
    clearInterval(this.keepAlive);
    await this.renewing;
  }

  private usageRecord(tokens: TokenUsage, cost: Nano, source: UsageSource, status: number, failure: GatewayError | undefined): UsageRecord {
    const { trace } = this.client;
    return {
      requestId: this.client.requestId,
      time: Date.now(),
      keyId: this.client.key.id,
      model: this.model.id,
      provider: this.candidate.provider.id,
      upstreamModel: this.candidate.target.upstreamModel,
      status,
      inputTokens: tokens.input,
      cachedInputTokens: tokens.cachedInput,
      outputTokens: tokens.output,
      reasoningTokens: tokens.reasoning,
      cacheWriteTokens: tokens.cacheWrite ?? 0,
      cost,
      usageSource: source,
      attempts: this.attempts,
      ...outcomeFields(trace, status, failure),
    };
  }
}

const ZERO_USAGE: TokenUsage = { input: 0, cachedInput: 0, output: 0, reasoning: 0 };

// A request's flow from admission to its close, shared by the whole and the streamed answer: what it
// carries (the reservation, the plan, what has been learnt of the upstream), what it leaves for the
// request's outcome, and the two closes that are not an ordinary end — before any output, and after a bug.
import { GatewayError } from '../errors.js';
import type { JsonObject } from '../json-object.js';
import type { Candidate } from '../routing/resolve-route.js';
import type { UsageRecord } from '../storage/types.js';
import { TransportError } from '../upstream/transport.js';
import type { Admitted, HoldRequest } from './admission/admit.js';
import type { UsageDraft } from './admission/reservation.js';
import { AttemptsFailed } from './attempts.js';

import { ClientGoneError, type ClientRequest } from './deps.js';
import { decideSettlement, type SettlementFacts } from './settlement.js';
import { toGatewayError } from './upstream-error.js';

/** The usage row's draft, filled in as the flow learns which upstream serves (one object per request). */
export type MutableDraft = { -readonly [F in keyof UsageDraft]: UsageDraft[F] };

/** Records the upstream that served (or was last tried) and every attempt made. */
export function servedBy(flow: FlowState<JsonObject>, candidate: Candidate, attempts: UsageDraft['attempts']): void {
  flow.draft.provider = candidate.provider.id;
  flow.draft.upstreamModel = candidate.target.upstreamModel;
  flow.draft.attempts = attempts;
}

export type FlowAnswer = { readonly kind: 'json'; readonly body: JsonObject } | { readonly kind: 'streamed' };

/** What a request's flow leaves for its outcome (the usage row, the access log, the metrics). */
export interface FlowReport {
  /** The usage row written with the ledger, when the request held money. */
  readonly billed?: UsageRecord;
  /** performance.now() when the first streamed frame went to the client. */
  readonly firstTokenAt?: number;
  /** A non-stream answer, for the access log (kept only with `log.bodies`). */
  readonly answer?: JsonObject;
}

export type FlowResult =
  | { readonly ok: true; readonly answer: FlowAnswer; readonly report: FlowReport }
  | { readonly ok: false; readonly error: unknown; readonly report: FlowReport };

/** The state a flow carries from admission to its close: what has been learnt so far, for a fault's close. */
export interface FlowState<Body extends JsonObject> extends Admitted<Body> {
  readonly hold: HoldRequest;
  /** The upstream that serves (or was last tried) and every attempt made; the first candidate until attempts run. */
  readonly draft: MutableDraft;
  /** Set once an upstream answered with success: from then on it has done work that a fault must not make free. */
  delivered: { delivered(): number } | undefined;
}

/**
 * Every attempt failed, or the request stopped, before an upstream's answer reached the client: settles
 * as decided and says what to answer — the lost hold's error, nothing (the client left), or the failure.
 */
export async function closeBeforeOutput(client: ClientRequest, flow: FlowState<JsonObject>, error: unknown): Promise<FlowResult> {
  const failed = error instanceof AttemptsFailed ? error : undefined;
  const cause = failed ? failed.cause : error;
  if (failed) servedBy(flow, failed.last, failed.attempts);
  const provider = failed?.last.provider ?? flow.plan.candidates[0]!.provider;
  const facts: SettlementFacts = {
    phase: 'before-output',
    holdLost: flow.reservation.stopReason,
    clientGone: client.signal.aborted,
    callRunning: cause instanceof TransportError && cause.reason === 'aborted',
    failure: toGatewayError(cause, provider),
  };
  const settlement = decideSettlement(facts, flow.hold.inputTokens);
  const charge = await flow.reservation.close(settlement, flow.draft);
  const answerError = facts.holdLost ?? (facts.clientGone ? new ClientGoneError() : facts.failure);
  return { ok: false, error: answerError, report: { billed: charge.record } };
}

/** A bug after admission: the hold must not stay stranded until it expires, nor an upstream's work go free. */
export async function closeAfterFault(flow: FlowState<JsonObject>, error: unknown): Promise<FlowResult> {
  // Rendered (and logged, with its cause) as an internal error by the error handler.
  const failure = new GatewayError('internal_error', { cause: error });
  const { sizing } = flow.reservation;
  const facts: SettlementFacts = {
    phase: 'fault',
    served: flow.delivered !== undefined,
    delivered: () => flow.delivered?.delivered() ?? 0,
    heldOutput: (sizing.modelMaxOutput ?? 0) * sizing.n,
    failure,
  };
  const charge = await flow.reservation.close(decideSettlement(facts, flow.hold.inputTokens), flow.draft);
  return { ok: false, error: failure, report: { billed: charge.record, ...(flow.draft.firstTokenAt !== undefined ? { firstTokenAt: flow.draft.firstTokenAt } : {}) } };
}

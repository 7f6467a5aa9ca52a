// What a request is charged, decided in one pure function from what happened to it. Every path of the
// flow ends by describing its facts and closing its reservation with this decision; no other code
// chooses between releasing a hold, charging the upstream's exact usage and charging an estimate.
// The rows of docs/architecture.md's settlement table are the cases below, in order.
import type { TokenUsage } from '../billing/pricing.js';
import type { GatewayError } from '../errors.js';
import { incompleteStreamError } from './upstream-error.js';

/**
 * release: nothing is charged, the hold goes back. exact: the upstream's usage at the model's prices.
 * estimate: the input estimate plus the output delivered, priced and capped at what the hold covers.
 * `failure`: the error the client was (or would have been) given; none for a success.
 */
export type Settlement =
  | { readonly kind: 'release'; readonly status: number; readonly failure?: GatewayError }
  | { readonly kind: 'exact'; readonly tokens: TokenUsage; readonly status: number; readonly failure?: GatewayError }
  | { readonly kind: 'estimate'; readonly tokens: TokenUsage; readonly status: number; readonly failure?: GatewayError };

/** The request's own status when its client left before the answer was complete. */
export const CLIENT_GONE_STATUS = 499;

/** Every attempt failed, or the request stopped, before an upstream's answer reached the client. */
export interface BeforeOutputFacts {
  readonly phase: 'before-output';
  /** The reservation's hold was lost (expired and not re-admitted) while an upstream call ran. */
  readonly holdLost: GatewayError | undefined;
  readonly clientGone: boolean;
  /** The client left while an upstream call was running (it had read the prompt), not between attempts. */
  readonly callRunning: boolean;
  /** The last attempt's failure, mapped to the registry. */
  readonly failure: GatewayError;
}

/** A whole answer came back (non-stream chat, embeddings). */
export interface AnsweredFacts {
  readonly phase: 'answered';
  readonly usage: TokenUsage | null;
  /** Tokenizer count of the output in the answer; read only when there is no usage. */
  readonly delivered: () => number;
}

/** A stream was committed to the client (its first chunk went out) and has ended. */
export interface StreamedFacts {
  readonly phase: 'streamed';
  readonly clientGone: boolean;
  readonly holdLost: GatewayError | undefined;
  /** How the upstream stream failed, if it did (`connectionDrop`: the connection broke, not the upstream's own error). */
  readonly failure: { readonly error: GatewayError; readonly connectionDrop: boolean } | undefined;
  /** The upstream's end marker or a finish reason arrived. */
  readonly completed: boolean;
  readonly sawOutput: boolean;
  readonly sawFinish: boolean;
  readonly usage: TokenUsage | null;
  readonly delivered: () => number;
  /** The input the upstream reported before its output (Anthropic's message_start): an estimate charges it. */
  readonly knownInput?: TokenUsage | null;
}

/** A growing hold could not cover the next step: the stream was ended after `delivered` output tokens. */
export interface CutFacts {
  readonly phase: 'cut';
  readonly clientGone: boolean;
  readonly delivered: number;
  /** As StreamedFacts.knownInput. */
  readonly knownInput?: TokenUsage | null;
}

/** A bug after admission: whatever the flow was doing threw. */
export interface FaultFacts {
  readonly phase: 'fault';
  /** An upstream had answered with success (it did work a fault must not make free). */
  readonly served: boolean;
  /** Output delivered so far; may throw (then the most output the hold was sized for is charged). */
  readonly delivered: () => number;
  /** The most output the hold was sized for (max output × choices). */
  readonly heldOutput: number;
  readonly failure: GatewayError;
}

export type SettlementFacts = BeforeOutputFacts | AnsweredFacts | StreamedFacts | CutFacts | FaultFacts;

/**
 * What the hold covers of input — or the input the upstream itself reported, when it did before its
 * output — and the output delivered: an estimate settles on them (the upstream read the prompt).
 */
function estimate(input: number | TokenUsage, output: number, status: number, failure?: GatewayError): Settlement {
  const tokens: TokenUsage = typeof input === 'number' ? { input, cachedInput: 0, output, reasoning: 0 } : { ...input, output, reasoning: 0 };
  return failure ? { kind: 'estimate', tokens, status, failure } : { kind: 'estimate', tokens, status };
}

function exactOrEstimate(usage: TokenUsage | null, delivered: () => number, input: number | TokenUsage, status: number, failure?: GatewayError): Settlement {
  if (usage) return failure ? { kind: 'exact', tokens: usage, status, failure } : { kind: 'exact', tokens: usage, status };
  return estimate(input, delivered(), status, failure);
}

/** `inputTokens`: the hold's input estimate (what an estimate charges for the prompt). */
export function decideSettlement(facts: SettlementFacts, inputTokens: number): Settlement {
  switch (facts.phase) {
    case 'before-output':
      // The hold was lost while an upstream call ran: that upstream read the prompt.
      if (facts.holdLost) return estimate(inputTokens, 0, facts.holdLost.status, facts.holdLost);
      if (facts.clientGone) {
        // Gone during a call: the upstream read the prompt. Gone while waiting to retry: no one did any work.
        return facts.callRunning ? estimate(inputTokens, 0, CLIENT_GONE_STATUS) : { kind: 'release', status: CLIENT_GONE_STATUS };
      }
      return { kind: 'release', status: facts.failure.status, failure: facts.failure };
    case 'answered':
      return exactOrEstimate(facts.usage, facts.delivered, inputTokens, 200);
    case 'streamed':
      return decideStreamed(facts, inputTokens);
    case 'cut':
      return estimate(facts.knownInput ?? inputTokens, facts.delivered, facts.clientGone ? CLIENT_GONE_STATUS : 200);
    case 'fault': {
      if (!facts.served) return { kind: 'release', status: facts.failure.status, failure: facts.failure };
      let output: number;
      try {
        output = facts.delivered();
      } catch {
        // The most output the hold was sized for: its price reaches the hold, which is what is charged.
        output = facts.heldOutput;
      }
      return estimate(inputTokens, output, facts.failure.status, facts.failure);
    }
  }
}

function decideStreamed(facts: StreamedFacts, inputTokens: number): Settlement {
  const input = facts.knownInput ?? inputTokens;
  // Nobody to answer: settle on what is known (exact usage if it had arrived, or was drained).
  if (facts.clientGone) return exactOrEstimate(facts.usage, facts.delivered, input, CLIENT_GONE_STATUS);
  // A lost hold cut the stream on purpose: it ends with that error. A stream that just stopped before its
  // end marker or a finish is a broken connection like any other.
  const failure = facts.holdLost
    ? { error: facts.holdLost, connectionDrop: false }
    : (facts.failure ?? (facts.completed ? undefined : { error: incompleteStreamError(), connectionDrop: true }));
  if (failure) {
    // A connection that dropped after the finish chunk *and* the usage lost nothing the client needs.
    const harmless = failure.connectionDrop && facts.sawFinish && facts.usage !== null;
    if (!harmless) {
      if (!facts.sawOutput) return { kind: 'release', status: failure.error.status, failure: failure.error };
      return exactOrEstimate(facts.usage, facts.delivered, input, failure.error.status, failure.error);
    }
  }
  return exactOrEstimate(facts.usage, facts.delivered, input, 200);
}

// A streamed answer. Until the first frame is ready for the client, a failing upstream can still be
// retried or replaced (attempts.ts); from then on the stream is committed: each upstream read is relayed
// as it arrives, the reservation is kept alive, the API's keep-alive frame fills a long upstream silence,
// and the stream ends with the API's own last frames — the usage with the cost, a growing hold's "length"
// end, or an error.
import type { TokenUsage } from '../billing/pricing.js';
import { GatewayError } from '../errors.js';
import type { JsonObject } from '../json-object.js';
import type { Candidate } from '../routing/resolve-route.js';
import { AttemptSignal, type DrainPermit } from '../upstream/attempt-signal.js';
import { TransportError } from '../upstream/transport.js';
import { OutputGrowth } from './admission/growth.js';
import { withFailover, type Attempted } from './attempts.js';
import { readUpstreamFailure } from './call-upstream.js';
import type { ClientApi } from './client-api.js';
import type { ClientRequest, PipelineDeps, SseSink } from './deps.js';
import { closeAfterFault, closeBeforeOutput, servedBy, type FlowResult, type FlowState } from './flow.js';
import { KeepAlive } from './keep-alive.js';
import { decideSettlement, type SettlementFacts } from './settlement.js';
import { recordStoredIds } from './stored-ids.js';
import { toGatewayError } from './upstream-error.js';
import { UpstreamStream } from './upstream-stream.js';

interface OpenedStream {
  readonly stream: UpstreamStream;
  readonly firstFrames: string;
}

/** A growing hold that the key could not extend: the stream ended after `delivered` output tokens. */
interface CutShort {
  readonly delivered: number;
  readonly choices: number;
}

export async function streamAnswer<Body extends JsonObject>(
  api: ClientApi<Body>,
  deps: PipelineDeps,
  client: ClientRequest,
  flow: FlowState<Body>,
  openSink: () => SseSink,
): Promise<FlowResult> {
  let opened: OpenedStream;
  try {
    const served = await withFailover(deps, client, flow.plan, (candidate) => openStream(api, deps, client, flow, candidate));
    servedBy(flow, served.served, served.attempts);
    opened = served.value;
  } catch (error) {
    return closeBeforeOutput(client, flow, error);
  }
  const { stream } = opened;
  flow.delivered = stream.client;
  flow.draft.firstTokenAt = performance.now();
  let sink: SseSink | undefined;
  try {
    sink = openSink();
    return await relayToEnd(deps, client, flow, opened, sink);
  } catch (error) {
    // A bug while the stream was open: the upstream is closed, the stream (if it had begun) ends with an
    // error frame, and the request is settled as a fault.
    deps.log.error({ err: error, requestId: client.requestId }, 'stream failed after it started');
    stream.close();
    const result = flow.reservation.isClosed ? undefined : await closeAfterFault(flow, error);
    if (!sink) return result ?? { ok: false, error, report: {} };
    sink.end(stream.client.error(new GatewayError('internal_error')));
    return { ok: true, answer: { kind: 'streamed' }, report: { ...result?.report, firstTokenAt: flow.draft.firstTokenAt! } };
  }
}

async function relayToEnd<Body extends JsonObject>(deps: PipelineDeps, client: ClientRequest, flow: FlowState<Body>, opened: OpenedStream, sink: SseSink): Promise<FlowResult> {
  const { stream } = opened;
  const growth = flow.hold.growing && flow.budget
    ? new OutputGrowth(flow.reservation, flow.hold.route.model.rates, flow.hold.inputTokens, flow.budget.choices, deps.config.billing.growingStepTokens, flow.budget.maxOutput)
    : undefined;
  let failure: unknown;
  let cut: CutShort | undefined;
  const quiet = stream.client.keepAlive;
  // A drained stream (the client gone) has no one to keep listening.
  const keepAlive = quiet && new KeepAlive(quiet.afterMs, () => void (client.signal.aborted || sink.write(quiet.frame)));
  try {
    cut = await relay(client, opened, sink, growth, keepAlive);
  } catch (error) {
    failure = error;
  } finally {
    keepAlive?.stop();
    stream.close();
  }
  const knownInput = stream.client.knownInput ?? null;
  const facts = cut ? ({ phase: 'cut', clientGone: client.signal.aborted, delivered: cut.delivered, knownInput } as const) : streamedFacts(client, flow, stream, failure, knownInput);
  const settlement = decideSettlement(facts, flow.hold.inputTokens);
  const charge = await flow.reservation.close(settlement, flow.draft);
  await recordStoredIds(deps, client, flow.draft, charge, stream.client.stored?.());
  const report = { billed: charge.record, firstTokenAt: flow.draft.firstTokenAt! };
  if (client.signal.aborted) return { ok: true, answer: { kind: 'streamed' }, report };
  if (cut) sink.end(stream.client.cut(charge, cut.choices));
  else if (settlement.failure) sink.end(stream.client.error(settlement.failure, charge));
  else sink.end(stream.client.final(charge));
  return { ok: true, answer: { kind: 'streamed' }, report };
}

/** What a committed stream's end looks like to the settlement (a function of its own: its closure holds only these). */
function streamedFacts(client: ClientRequest, flow: FlowState<JsonObject>, stream: UpstreamStream, failure: unknown, knownInput: TokenUsage | null): SettlementFacts {
  const frames = stream.client;
  return {
    phase: 'streamed',
    clientGone: client.signal.aborted,
    holdLost: flow.reservation.stopReason,
    failure: failure === undefined ? undefined : { error: toGatewayError(failure, stream.candidate.provider), connectionDrop: failure instanceof TransportError },
    completed: frames.finished || frames.sawFinish,
    sawOutput: frames.sawOutput,
    sawFinish: frames.sawFinish,
    usage: frames.usage?.tokens ?? null,
    delivered: () => frames.delivered(),
    knownInput,
  };
}

/**
 * One attempt: send, check the status, and read until the first frame that carries output (content,
 * reasoning, a tool call, a finish) — a bare role chunk is held back with it, so an upstream that fails
 * right after announcing the assistant role can still be retried or replaced.
 */
async function openStream<Body extends JsonObject>(
  api: ClientApi<Body>,
  deps: PipelineDeps,
  client: ClientRequest,
  flow: FlowState<Body>,
  candidate: Candidate,
): Promise<Attempted<OpenedStream>> {
  const attempt = new AttemptSignal(client.signal, candidate.provider.timeouts.totalMs, drainPermit(deps, candidate), flow.reservation);
  let stream: UpstreamStream | undefined;
  try {
    const request = flow.plan.requestFor(candidate);
    const response = await deps.transport.send(candidate.provider, request, attempt.signal);
    if (response.status >= 300) throw await readUpstreamFailure(candidate, request, response, attempt.signal);
    stream = new UpstreamStream(candidate, api.openStream(flow.body, candidate, client.requestId, flow.hold.inputTokens), response, attempt);
    let firstFrames = '';
    const frames = stream.client;
    while (!stream.ended && !frames.sawOutput && !frames.sawFinish && !frames.finished) firstFrames += await stream.next();
    if (!firstFrames && !frames.finished && !frames.usage) {
      throw new TransportError('reset', 'the upstream stream ended before its first chunk');
    }
    return { value: { stream, firstFrames }, status: response.status };
  } catch (error) {
    if (stream) stream.close();
    else attempt.dispose();
    throw error;
  }
}

function drainPermit(deps: PipelineDeps, candidate: Candidate): DrainPermit | undefined {
  if (candidate.provider.onClientDisconnect !== 'drain') return undefined;
  return {
    tryStart: (cancel) => deps.drains.tryAcquire(candidate.provider, cancel),
    finish: (cancel) => deps.drains.release(candidate.provider, cancel),
  };
}

/**
 * Relays every upstream read as it arrives (the reservation is kept alive meanwhile). With a growing
 * hold, a read is relayed only once the hold covers the output so far; when it cannot grow, the read is
 * withheld and the relay stops (returns what had been delivered).
 */
async function relay(client: ClientRequest, opened: OpenedStream, sink: SseSink, growth: OutputGrowth | undefined, keepAlive: KeepAlive | undefined): Promise<CutShort | undefined> {
  let text = opened.firstFrames;
  let delivered = 0;
  for (;;) {
    // A drain (the client gone, read on for exact usage) grows the hold too: it must never read past it.
    if (growth && text) {
      const tokens = opened.stream.client.delivered();
      if (!(await growth.cover(tokens))) return { delivered, choices: growth.n };
      delivered = tokens;
      opened.stream.client.markDelivered?.();
    }
    // A drained stream (client gone, exact usage wanted) reads on without writing.
    if (text && !client.signal.aborted) {
      keepAlive?.heard();
      const backpressure = sink.write(text);
      if (backpressure) await backpressure;
    }
    if (opened.stream.ended) return undefined;
    text = await opened.stream.next();
  }
}

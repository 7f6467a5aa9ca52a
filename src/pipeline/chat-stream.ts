// Streaming chat. Until the first chunk is ready for the client, a failing upstream can still be
// retried or replaced (withFailover); from then on the stream is committed: each upstream read is
// relayed as it arrives, the hold is kept alive, and the gateway ends with its own usage chunk (with
// the cost) and [DONE] — or, after a failure, an error event and [DONE].
import type { ChatRequestBody } from '../providers/types.js';
import type { Candidate } from '../routing/resolve-route.js';
import { encodeSseData, SSE_DONE } from '../streaming/sse-encoder.js';
import { AttemptSignal, type DrainPermit } from '../upstream/attempt-signal.js';
import { TransportError } from '../upstream/transport.js';
import { readUpstreamFailure } from './call-upstream.js';
import type { ClientRequest, PipelineDeps, SseSink } from './deps.js';
import { withFailover } from './failover.js';
import type { OutputGrowth } from './output-growth.js';
import type { RequestBill } from './request-bill.js';
import type { UpstreamPlan } from './upstream-plan.js';
import { attemptStatusOf, toGatewayError } from './upstream-error.js';
import { UpstreamStream } from './upstream-stream.js';

interface OpenedStream {
  readonly stream: UpstreamStream;
  readonly firstText: string;
}

export async function streamChat(
  deps: PipelineDeps,
  client: ClientRequest,
  body: ChatRequestBody,
  plan: UpstreamPlan,
  bill: RequestBill,
  openSink: () => SseSink,
  growth?: OutputGrowth,
): Promise<void> {
  let opened: OpenedStream;
  try {
    opened = await withFailover(deps, client, bill, plan, (candidate) => openStream(deps, client, candidate, body, plan, bill));
  } catch (error) {
    throw await bill.abandon(error);
  }
  const { stream } = opened;
  bill.upstreamServed(() => stream.meter.tokens());
  const sink = openSink();
  let failure: unknown;
  let cut: CutShort | undefined;
  try {
    cut = await relay(client, opened, sink, growth);
  } catch (error) {
    failure = error;
  } finally {
    stream.close();
  }
  if (cut) return endForLength(client, stream, bill, sink, cut);
  await finish(client, stream, bill, sink, failure);
}

/** A growing hold that the key could not extend: the stream ended after `delivered` output tokens. */
interface CutShort {
  readonly delivered: number;
  readonly choices: number;
}

/**
 * One attempt: send, check the status, and read until the first chunk that carries output (content,
 * reasoning, a tool call, a finish) — a bare role chunk is held back with it, so an upstream that fails
 * right after announcing the assistant role can still be retried or replaced.
 */
async function openStream(
  deps: PipelineDeps,
  client: ClientRequest,
  candidate: Candidate,
  body: ChatRequestBody,
  plan: UpstreamPlan,
  bill: RequestBill,
): Promise<OpenedStream> {
  const attempt = new AttemptSignal(client.signal, candidate.provider.timeouts.totalMs, drainPermit(deps, candidate), bill);
  const startedAt = performance.now();
  let stream: UpstreamStream | undefined;
  try {
    const response = await deps.transport.send(candidate.provider, plan.requestFor(candidate), attempt.signal);
    if (response.status >= 300) throw await readUpstreamFailure(candidate, response, attempt.signal);
    stream = new UpstreamStream(candidate, body, response, attempt);
    let firstText = '';
    const { meter, translator } = stream;
    while (!stream.ended && !meter.sawOutput && !meter.sawFinish && !translator.finished) firstText += await stream.next();
    if (!firstText && !translator.finished && !translator.usage) {
      throw new TransportError('reset', 'the upstream stream ended before its first chunk');
    }
    bill.recordAttempt(candidate.provider.id, response.status, startedAt);
    return { stream, firstText };
  } catch (error) {
    if (stream) stream.close();
    else attempt.dispose();
    bill.recordAttempt(candidate.provider.id, attemptStatusOf(error), startedAt);
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
 * Relays every upstream read as it arrives (the request's bill keeps its hold alive meanwhile). With a
 * growing hold, a read is relayed only once the hold covers the output so far; when it cannot grow, the
 * read is withheld and the relay stops (returns what had been delivered).
 */
async function relay(client: ClientRequest, opened: OpenedStream, sink: SseSink, growth: OutputGrowth | undefined): Promise<CutShort | undefined> {
  let text = opened.firstText;
  let delivered = 0;
  for (;;) {
    if (growth && text && !client.signal.aborted) {
      const tokens = opened.stream.meter.tokens();
      if (!(await growth.cover(tokens))) return { delivered, choices: growth.n };
      delivered = tokens;
    }
    // A drained stream (client gone, exact usage wanted) reads on without writing.
    if (text && !client.signal.aborted) {
      const backpressure = sink.write(text);
      if (backpressure) await backpressure;
    }
    if (opened.stream.ended) return undefined;
    text = await opened.stream.next();
  }
}

/**
 * The key could not cover the next step of a growing hold: the stream ends as a model that reached its
 * output limit ends (finish_reason "length", then the usage chunk and [DONE]), charged for the input
 * estimate plus the output delivered — which the hold covers, so the balance never goes below zero.
 */
async function endForLength(client: ClientRequest, stream: UpstreamStream, bill: RequestBill, sink: SseSink, cut: CutShort): Promise<void> {
  const { translator } = stream;
  const charge = await bill.settleEstimated(cut.delivered, client.signal.aborted ? 499 : 200);
  if (client.signal.aborted) return;
  const base = {
    id: translator.id || `chatcmpl-${client.requestId}`,
    object: 'chat.completion.chunk',
    created: translator.created || Math.floor(Date.now() / 1000),
    model: stream.candidate.target.clientModel,
  };
  const finishChunk = { ...base, choices: Array.from({ length: cut.choices }, (_, index) => ({ index, delta: {}, finish_reason: 'length' })) };
  sink.end(encodeSseData(finishChunk) + encodeSseData({ ...base, choices: [], usage: charge.usage }) + SSE_DONE);
}

/** Settles the request and ends the client's stream, whatever happened. */
async function finish(client: ClientRequest, stream: UpstreamStream, bill: RequestBill, sink: SseSink, failure: unknown): Promise<void> {
  const { translator, meter } = stream;
  // The hold was lost (it expired while the stream ran and the key can no longer cover it): the stream
  // was cut short on purpose and ends with that error.
  if (bill.stopReason) failure = bill.stopReason;
  if (client.signal.aborted) {
    // Nobody to answer: settle on what is known (exact usage if it had arrived, or was drained).
    if (translator.usage) await bill.settleExact(translator.usage, 499);
    else await bill.settleEstimated(meter.tokens(), 499);
    return;
  }
  // Complete: the upstream's end marker or a finish_reason arrived. A connection that drops after the
  // finish chunk *and* the usage lost nothing the client needs; anything else is a mid-stream failure.
  const completed = translator.finished || meter.sawFinish;
  const harmlessDrop = failure instanceof TransportError && meter.sawFinish && translator.usage !== null;
  if (!failure && !completed) failure = new TransportError('reset', 'the upstream stream ended before it completed');
  if (failure && !harmlessDrop) {
    const gatewayError = toGatewayError(failure, stream.candidate.provider);
    if (!meter.sawOutput) await bill.release(gatewayError.status, gatewayError);
    else if (translator.usage) await bill.settleExact(translator.usage, gatewayError.status, gatewayError);
    else await bill.settleEstimated(meter.tokens(), gatewayError.status, gatewayError);
    sink.end(encodeSseData(gatewayError.toBody()) + SSE_DONE);
    return;
  }
  const charge = translator.usage ? await bill.settleExact(translator.usage, 200) : await bill.settleEstimated(meter.tokens(), 200);
  const finalChunk = {
    id: translator.id || `chatcmpl-${client.requestId}`,
    object: 'chat.completion.chunk',
    created: translator.created || Math.floor(Date.now() / 1000),
    model: stream.candidate.target.clientModel,
    choices: [],
    usage: charge.usage,
  };
  sink.end(encodeSseData(finalChunk) + SSE_DONE);
}

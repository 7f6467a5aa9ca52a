// Streaming chat: upstream SSE → adapter translator → client SSE, chunk by chunk as the bytes arrive
// (never buffered), then the gateway's own final usage chunk (with the cost) and [DONE].
import { SseDecoder, SseOverflowError, type SseEvent } from '../streaming/sse-decoder.js';
import { encodeSseData, SSE_DONE } from '../streaming/sse-encoder.js';
import type { JsonObject } from '../json-object.js';
import { UpstreamFailureError, type ChatRequestBody, type ChatStreamTranslator } from '../providers/types.js';
import type { Candidate } from '../routing/resolve-route.js';
import { AttemptSignal } from '../upstream/attempt-signal.js';
import { toTransportError, TransportError, type UpstreamResponse } from '../upstream/transport.js';
import { readUpstreamFailure } from './call-upstream.js';
import type { ClientRequest, PipelineDeps, SseSink } from './deps.js';
import { OutputMeter } from './output-meter.js';
import type { RequestBill } from './request-bill.js';
import { attemptStatusOf, toGatewayError } from './upstream-error.js';

export async function streamChat(
  deps: PipelineDeps,
  client: ClientRequest,
  body: ChatRequestBody,
  candidate: Candidate,
  bill: RequestBill,
  openSink: () => SseSink,
): Promise<void> {
  const attempt = new AttemptSignal(client.signal, candidate.provider.timeouts.totalMs);
  const startedAt = performance.now();
  let response: UpstreamResponse;
  try {
    response = await deps.transport.send(candidate.provider, candidate.adapter.buildChatRequest(body, candidate.target), attempt.signal);
    if (response.status >= 300) throw await readUpstreamFailure(candidate, response, attempt.signal);
  } catch (error) {
    attempt.dispose();
    bill.recordAttempt(candidate.provider.id, attemptStatusOf(error), startedAt);
    throw await bill.abandon(error);
  }
  bill.recordAttempt(candidate.provider.id, response.status, startedAt);

  const translator = candidate.adapter.createChatStreamTranslator(candidate.target);
  const meter = new OutputMeter();
  const sink = openSink();
  let failure: unknown;
  try {
    await relay(response, translator, meter, sink);
  } catch (error) {
    failure = error instanceof UpstreamFailureError || error instanceof SseOverflowError ? error : toTransportError(error, attempt.signal);
  } finally {
    attempt.dispose();
  }

  if (client.signal.aborted) {
    // Nobody to answer: settle on what is known (exact usage if it had arrived) and stop.
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
    const gatewayError = toGatewayError(failure, candidate.provider);
    if (!meter.sawOutput) await bill.release(gatewayError.status);
    else if (translator.usage) await bill.settleExact(translator.usage, gatewayError.status);
    else await bill.settleEstimated(meter.tokens(), gatewayError.status);
    if (!sink.started) throw gatewayError;
    sink.end(encodeSseData(gatewayError.toBody()) + SSE_DONE);
    return;
  }
  const charge = translator.usage ? await bill.settleExact(translator.usage, 200) : await bill.settleEstimated(meter.tokens(), 200);
  const finalChunk = {
    id: translator.id || `chatcmpl-${client.requestId}`,
    object: 'chat.completion.chunk',
    created: translator.created || Math.floor(Date.now() / 1000),
    model: candidate.target.clientModel,
    choices: [],
    usage: charge.usage,
  };
  sink.end(encodeSseData(finalChunk) + SSE_DONE);
}

/** Pumps the upstream body through the translator to the client, honouring the client's backpressure. */
async function relay(response: UpstreamResponse, translator: ChatStreamTranslator, meter: OutputMeter, sink: SseSink): Promise<void> {
  const decoder = new SseDecoder();
  for await (const data of response.body) {
    await forward(decoder.push(data as Buffer), translator, meter, sink);
  }
  await forward(decoder.end(), translator, meter, sink);
}

/** All chunks of one upstream read go out in one write; an error event still lets earlier chunks through. */
async function forward(events: readonly SseEvent[], translator: ChatStreamTranslator, meter: OutputMeter, sink: SseSink): Promise<void> {
  if (events.length === 0) return;
  let text = '';
  let failure: unknown;
  for (const event of events) {
    let chunk: JsonObject | null;
    try {
      chunk = translator.onEvent(event);
    } catch (error) {
      failure = error;
      break;
    }
    if (chunk) {
      meter.observeChunk(chunk);
      text += encodeSseData(chunk);
    }
  }
  if (text) {
    const backpressure = sink.write(text);
    if (backpressure) await backpressure;
  }
  if (failure) throw failure;
}

// One streamed upstream response, read as client text: bytes → SSE events → the adapter's translator →
// encoded chunks, metered on the way. next() returns the text of the next upstream read that produced
// any, so the relay writes each read as it arrives and never buffers the stream.
import type { JsonObject } from '../json-object.js';
import { UpstreamFailureError, type ChatRequestBody, type ChatStreamTranslator } from '../providers/types.js';
import type { Candidate } from '../routing/resolve-route.js';
import { SseDecoder, SseOverflowError, type SseEvent } from '../streaming/sse-decoder.js';
import { encodeSseData } from '../streaming/sse-encoder.js';
import type { AttemptSignal } from '../upstream/attempt-signal.js';
import { toTransportError, type UpstreamResponse } from '../upstream/transport.js';
import { OutputMeter } from './output-meter.js';

export class UpstreamStream {
  readonly meter = new OutputMeter();
  readonly translator: ChatStreamTranslator;
  /** The upstream body has ended (or failed). */
  ended = false;
  private readonly decoder = new SseDecoder();
  private readonly reads: AsyncIterator<unknown>;
  /** A failure met after some text of the same read; thrown by the next call, after that text went out. */
  private pendingFailure: unknown;

  constructor(
    readonly candidate: Candidate,
    body: ChatRequestBody,
    private readonly response: UpstreamResponse,
    readonly attempt: AttemptSignal,
  ) {
    this.translator = candidate.adapter.createChatStreamTranslator(candidate.target, body);
    this.reads = response.body[Symbol.asyncIterator]();
  }

  /** The next client text ('' once the stream has ended). Throws classified failures. */
  async next(): Promise<string> {
    if (this.pendingFailure !== undefined) throw this.fail(this.pendingFailure);
    while (!this.ended) {
      let events: readonly SseEvent[];
      try {
        const read = await this.reads.next();
        if (read.done) {
          this.ended = true;
          events = this.decoder.end();
        } else {
          events = this.decoder.push(read.value as Buffer);
        }
      } catch (error) {
        throw this.fail(error);
      }
      const text = this.translate(events);
      if (text) return text;
      if (this.pendingFailure !== undefined) throw this.fail(this.pendingFailure);
    }
    return '';
  }

  /** Stops reading (the connection is closed, not reused, if the body had not ended). */
  close(): void {
    this.attempt.dispose();
    if (!this.ended) this.response.body.destroy();
  }

  private translate(events: readonly SseEvent[]): string {
    let text = '';
    for (const event of events) {
      let chunk: JsonObject | null;
      try {
        chunk = this.translator.onEvent(event);
      } catch (error) {
        this.pendingFailure = error;
        break;
      }
      if (chunk) {
        this.meter.observeChunk(chunk);
        text += encodeSseData(chunk);
      }
    }
    return text;
  }

  private fail(error: unknown): unknown {
    this.ended = true;
    this.pendingFailure = undefined;
    if (error instanceof UpstreamFailureError || error instanceof SseOverflowError) return error;
    return toTransportError(error, this.attempt.signal);
  }
}

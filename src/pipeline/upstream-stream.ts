// One streamed upstream response, read as client frames: bytes → events (the kind's framing) → the client
// API's stream for this attempt (translated, metered, framed). next() returns the frames of the next
// upstream read that produced any, so the relay writes each read as it arrives and never buffers.
import type { ClientStream } from './client-api.js';
import { UpstreamFailureError, type FramedEvent } from '../providers/types.js';
import type { Candidate } from '../routing/resolve-route.js';
import { frameDecoder, type FrameDecoder } from '../providers/framing/index.js';
import { SseOverflowError } from '../providers/framing/sse.js';
import type { AttemptSignal } from '../upstream/attempt-signal.js';
import { toTransportError, type UpstreamResponse } from '../upstream/transport.js';

export class UpstreamStream {
  /** The upstream body has ended (or failed). */
  ended = false;
  private readonly decoder: FrameDecoder;
  private readonly reads: AsyncIterator<unknown>;
  /** A failure met after some frames of the same read; thrown by the next call, after those frames went out. */
  private pendingFailure: unknown;

  constructor(
    readonly candidate: Candidate,
    readonly client: ClientStream,
    private readonly response: UpstreamResponse,
    readonly attempt: AttemptSignal,
  ) {
    this.decoder = frameDecoder(candidate.adapter.framing);
    this.reads = response.body[Symbol.asyncIterator]();
  }

  /** The next client frames ('' once the stream has ended). Throws classified failures. */
  async next(): Promise<string> {
    if (this.pendingFailure !== undefined) throw this.fail(this.pendingFailure);
    while (!this.ended) {
      let events: readonly FramedEvent[];
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

  private translate(events: readonly FramedEvent[]): string {
    let text = '';
    for (const event of events) {
      try {
        text += this.client.push(event);
      } catch (error) {
        this.pendingFailure = error;
        break;
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

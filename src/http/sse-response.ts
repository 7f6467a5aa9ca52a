// The client's SSE response on Node's ServerResponse: opened on the first write, with backpressure
// (a slow client pauses the upstream read instead of growing a buffer) and a bound on how long it may
// pause it (a client that stops reading is cut after server.write_stall_ms).
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { Logger } from '../log.js';
import type { SseSink } from '../pipeline/deps.js';
import type { RecordingText } from './idempotency.js';

export interface SseResponseOptions {
  readonly requestId: string;
  /** Aborted when the client's connection closes. */
  readonly clientGone: AbortSignal;
  /** How long one write may wait for the client to drain its socket before the connection is cut. */
  readonly writeStallMs: number;
  readonly log: Logger;
  /**
   * Idempotency-Key requests: what the client is sent is also recorded (up to a cap), and handed to `save`
   * before the response ends — so a retry that follows the end finds the answer, never a running claim.
   * `save` returns trailers to send (the response says so when the answer was too large to keep).
   */
  readonly record?: { readonly text: RecordingText; save(text: string | undefined): Promise<Record<string, string> | undefined> };
}

export class SseResponse implements SseSink {
  started = false;
  /** Settles when the response has ended (after a recorded answer was saved). */
  closing: Promise<void> = Promise.resolve();
  private readonly raw: ServerResponse;

  constructor(
    private readonly reply: FastifyReply,
    private readonly options: SseResponseOptions,
  ) {
    this.raw = reply.raw;
  }

  write(text: string): Promise<void> | undefined {
    if (!this.started) this.open();
    this.options.record?.text.add(text);
    if (this.raw.destroyed || this.raw.writableEnded) return undefined;
    if (this.raw.write(text)) return undefined;
    return this.waitForDrain();
  }

  end(text: string): void {
    if (!this.started) this.open();
    const record = this.options.record;
    if (!record) {
      if (!this.raw.destroyed && !this.raw.writableEnded) this.raw.end(text);
      return;
    }
    record.text.add(text);
    if (!this.raw.destroyed && !this.raw.writableEnded) this.raw.write(text);
    this.closing = record.save(record.text.text()).then((trailers) => {
      if (this.raw.destroyed || this.raw.writableEnded) return;
      if (trailers) this.raw.addTrailers(trailers);
      this.raw.end();
    });
  }

  private open(): void {
    this.started = true;
    this.reply.hijack();
    this.raw.writeHead(200, {
      // Headers the pipeline set on the reply before the stream opened (x-ratelimit-*).
      ...(this.reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': this.options.requestId,
    });
  }

  /**
   * Waits for the client to read. A client that never does would otherwise hold its stream, the
   * upstream call and the hold (kept alive meanwhile) forever; after writeStallMs the connection is
   * cut, which the pipeline sees as a client disconnect (it closes the upstream and settles as such).
   * The one timer is armed only here, when a write found the socket full: the hot path has none.
   */
  private async waitForDrain(): Promise<void> {
    const { clientGone, writeStallMs, requestId, log } = this.options;
    const stalled = setTimeout(() => {
      log.info({ requestId, writeStallMs }, 'the client stopped reading; its stream is cut');
      this.raw.destroy();
    }, writeStallMs);
    try {
      await once(this.raw, 'drain', { signal: clientGone });
    } catch {
      // The client left (or was cut); the pipeline sees the aborted signal and settles.
    } finally {
      clearTimeout(stalled);
    }
  }
}

// The client's SSE response on Node's ServerResponse: opened on the first write, with backpressure
// (a slow client pauses the upstream read instead of growing a buffer).
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { SseSink } from '../pipeline/deps.js';

export class SseResponse implements SseSink {
  started = false;
  private readonly raw: ServerResponse;

  constructor(
    private readonly reply: FastifyReply,
    private readonly requestId: string,
    private readonly clientGone: AbortSignal,
  ) {
    this.raw = reply.raw;
  }

  write(text: string): Promise<void> | undefined {
    if (!this.started) this.open();
    if (this.raw.destroyed || this.raw.writableEnded) return undefined;
    if (this.raw.write(text)) return undefined;
    return this.waitForDrain();
  }

  end(text: string): void {
    if (!this.started) this.open();
    if (!this.raw.destroyed && !this.raw.writableEnded) this.raw.end(text);
  }

  private open(): void {
    this.started = true;
    this.reply.hijack();
    this.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': this.requestId,
    });
  }

  private async waitForDrain(): Promise<void> {
    try {
      await once(this.raw, 'drain', { signal: this.clientGone });
    } catch {
      // The client left; the pipeline sees the aborted signal and settles.
    }
  }
}

// A body over server.max_body_bytes is refused (413) before the client has finished sending it. Answered at
// once, the connection then closes with the rest of the body unread, the kernel resets it, and the client
// — still writing — gets EPIPE or a reset instead of the answer (the openai SDK: APIConnectionError). So
// the gateway first reads the rest of the refused body and throws it away, then answers and closes: the
// client has finished sending and reads the 413. Draining is bounded, in bytes and in time, so a client
// that never stops sending holds a socket and a little CPU for a while, not forever; past a bound the
// answer goes out anyway and the connection is closed (that client may see the reset).
import type { IncomingMessage } from 'node:http';

/**
 * The most of a refused body the gateway reads and discards. Twice the default max_body_bytes, so a body
 * that overshoots the default by as much as its size again is still answered; discarding 64 MiB on
 * loopback takes a few tens of milliseconds of CPU. A body that declares a larger Content-Length is not
 * drained at all: it could not finish within the bound.
 */
export const DRAIN_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The longest the gateway drains one refused body. Enough for 64 MiB at ~50 Mbit/s; a client dripping
 * bytes is cut off after it, whatever it has sent.
 */
export const DRAIN_MAX_MS = 10_000;

export interface DrainBounds {
  readonly maxBytes: number;
  readonly maxMs: number;
}

/**
 * Reads the rest of `req`'s body and discards it. Resolves true when the body ended (the client can now
 * read the answer), false when a bound was hit, the declared length is over the byte bound, or the
 * connection failed. Once draining began the body stays flowing, so bytes that arrive until the
 * connection closes are discarded rather than left unread.
 */
export function drainRefusedBody(req: IncomingMessage, bounds: DrainBounds = { maxBytes: DRAIN_MAX_BYTES, maxMs: DRAIN_MAX_MS }): Promise<boolean> {
  if (req.complete) return Promise.resolve(true);
  if (req.destroyed || Number(req.headers['content-length']) > bounds.maxBytes) return Promise.resolve(false);
  return new Promise((resolve) => {
    let drained = 0;
    const finish = (ended: boolean) => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onFail);
      req.off('close', onFail);
      resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > bounds.maxBytes) finish(false);
    };
    const onEnd = () => finish(true);
    const onFail = () => finish(req.complete);
    const timer = setTimeout(() => finish(false), bounds.maxMs);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onFail);
    req.once('close', onFail);
    req.resume();
  });
}

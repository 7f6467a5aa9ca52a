// The decoder of a kind's stream framing (providers/kinds.ts): bytes in, events out. Server-Sent Events
// for every kind today; another framing (a binary event stream, a JSON array) is another case here.
import type { Framing } from '../kinds.js';
import { SseDecoder, type SseEvent } from './sse.js';

export interface FrameDecoder {
  /** The events the bytes complete (a partial event waits for the next push). */
  push(bytes: Buffer): readonly SseEvent[];
  /** The stream ended: whatever event it completes. */
  end(): readonly SseEvent[];
}

export function frameDecoder(framing: Framing): FrameDecoder {
  switch (framing) {
    case 'sse':
      return new SseDecoder();
  }
}

// Bytes → Server-Sent Events, once for every provider. UTF-8 is decoded across chunk edges (a character
// may arrive split), and eventsource-parser handles CR/LF/CRLF, comments and multi-line data fields.
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceParser } from 'eventsource-parser';

export interface SseEvent {
  /** The `event:` field, when the server named one (Anthropic does; OpenAI and Gemini do not). */
  readonly event: string | undefined;
  readonly data: string;
}

export class SseOverflowError extends Error {
  constructor(limit: number) {
    super(`upstream SSE event exceeded ${limit} characters without ending`);
    this.name = 'SseOverflowError';
  }
}

/** Incremental decoder: push() the body's chunks as they arrive, end() once it is over. */
export class SseDecoder {
  private readonly text = new StringDecoder('utf8');
  private readonly parser: EventSourceParser;
  private pending: SseEvent[] = [];
  private overflow: SseOverflowError | undefined;
  private atStart = true;

  /** @param maxEventChars bounds an event that never ends (a malformed or hostile stream). */
  constructor(maxEventChars = 16 * 1024 * 1024) {
    this.parser = createParser({
      maxBufferSize: maxEventChars,
      onEvent: (message) => {
        this.pending.push({ event: message.event, data: message.data });
      },
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') this.overflow = new SseOverflowError(maxEventChars);
        // Unknown fields and bad retry values are ignored, as the SSE specification says.
      },
    });
  }

  /** Returns the events completed by this chunk (possibly none). Throws SseOverflowError. */
  push(chunk: Buffer | string): readonly SseEvent[] {
    let decoded = typeof chunk === 'string' ? chunk : this.text.write(chunk);
    if (this.atStart && decoded.length > 0) {
      // The SSE specification ignores one leading byte order mark.
      this.atStart = false;
      if (decoded.charCodeAt(0) === 0xfeff) decoded = decoded.slice(1);
    }
    if (decoded.length > 0) this.parser.feed(decoded);
    return this.drain();
  }

  /**
   * Flushes a final event that was not followed by a blank line (a stream cut mid-event yields its
   * partial data, which the caller will fail to parse — as it should).
   */
  end(): readonly SseEvent[] {
    const rest = this.text.end();
    this.parser.feed(`${rest}\n\n`);
    return this.drain();
  }

  private drain(): readonly SseEvent[] {
    if (this.overflow) throw this.overflow;
    if (this.pending.length === 0) return NO_EVENTS;
    const events = this.pending;
    this.pending = [];
    return events;
  }
}

const NO_EVENTS: readonly SseEvent[] = Object.freeze([]);

// Thinking blocks in a Messages history, by who signed them (product.md §14, "Translated"). An Anthropic
// upstream signs its thinking and accepts it back only with that signature; a translated cell makes
// thinking of its own from a chat upstream's `reasoning_content` and marks it `tollgate.v1.<SHA-256 of the
// text>`. A mark is not a proof: it only says "made by the gateway, drop it before any upstream" — forging
// one gets a block dropped, nothing more. So: marked (or unsigned) blocks never reach any upstream; blocks an
// Anthropic upstream signed go back only to a native cell (cells.ts keeps fallback there), and are dropped
// before a chat upstream, which could not read them.
import { createHash, type Hash } from 'node:crypto';
import { isJsonObject, type JsonObject } from '../../json-object.js';

const MARK = 'tollgate.v1.';

/** The mark of one thinking block's text, fed as it streams. */
export class ThinkingMark {
  private readonly hash: Hash = createHash('sha256');

  update(text: string): void {
    this.hash.update(text);
  }

  signature(): string {
    return MARK + this.hash.digest('base64url');
  }
}

/** The mark of a whole thinking text. */
export function thinkingMark(text: string): string {
  const mark = new ThinkingMark();
  mark.update(text);
  return mark.signature();
}

/** A thinking block the gateway made (or one nobody signed): never sent to an upstream. */
function isOwnThinking(block: JsonObject): boolean {
  return block.type === 'thinking' && (typeof block.signature !== 'string' || block.signature === '' || block.signature.startsWith('tollgate.'));
}

/** Thinking an upstream signed: a thinking block with its signature, or a redacted one. */
function isSignedThinking(block: JsonObject): boolean {
  return block.type === 'redacted_thinking' || (block.type === 'thinking' && !isOwnThinking(block));
}

export interface HistoryThinking {
  /** Some block carries an upstream's signature: only a native cell can take it back. */
  readonly upstreamSigned: boolean;
  /** Some block is the gateway's own (or unsigned): dropped before a native upstream too. */
  readonly own: boolean;
}

const NONE: HistoryThinking = { upstreamSigned: false, own: false };
/** Per messages array (a clamp or stripped fields copy the body, not its messages): read once per request. */
const seen = new WeakMap<readonly unknown[], HistoryThinking>();

/** What thinking the assistant turns of `messages` carry. */
export function historyThinking(messages: readonly unknown[]): HistoryThinking {
  const known = seen.get(messages);
  if (known) return known;
  let upstreamSigned = false;
  let own = false;
  for (const message of messages) {
    if (!isJsonObject(message) || message.role !== 'assistant' || !Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (!isJsonObject(block)) continue;
      if (isSignedThinking(block)) upstreamSigned = true;
      else if (isOwnThinking(block)) own = true;
    }
  }
  const facts = upstreamSigned || own ? { upstreamSigned, own } : NONE;
  seen.set(messages, facts);
  return facts;
}

/**
 * `messages` without the gateway's own thinking blocks (for a native upstream, which would refuse their
 * signature); an assistant turn left empty is dropped with them.
 */
export function withoutOwnThinking(messages: readonly unknown[]): unknown[] {
  const kept: unknown[] = [];
  for (const message of messages) {
    if (!isJsonObject(message) || message.role !== 'assistant' || !Array.isArray(message.content)) {
      kept.push(message);
      continue;
    }
    const content = message.content.filter((block) => !(isJsonObject(block) && isOwnThinking(block)));
    if (content.length === message.content.length) kept.push(message);
    else if (content.length > 0) kept.push({ ...message, content });
  }
  return kept;
}

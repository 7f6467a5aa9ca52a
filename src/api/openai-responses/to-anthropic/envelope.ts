// The reasoning envelope (product.md §14, "Translated"; docs/adr/0045-responses-to-anthropic.md): thinking
// blocks an Anthropic upstream signed travel to a Responses client as a `reasoning` item's
// `encrypted_content`, and come back on the next turn (Codex sends `store: false` and echoes its reasoning
// items). The envelope is `tgrs1.<payload>.<mac>`: the payload the blocks as JSON (thinking text and
// signature, or redacted data, byte-for-byte), base64url; the mac HMAC-SHA256 over the payload with a key
// derived from the upstream provider's own credential and id — stable across restarts and `--workers`
// (every process reads the same config), no new secret to manage, and bound to the account whose model
// signed the thinking (a signature is only good there). An envelope whose mac does not verify (tampered,
// another gateway's, another provider's) is dropped, never forwarded.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isJsonObject, type JsonObject } from '../../../json-object.js';

const PREFIX = 'tgrs1.';

/** What signs and verifies envelopes for one upstream provider. */
export interface EnvelopeKey {
  readonly key: Buffer;
}

/** The key of a provider: HMAC-SHA256(its credential, a fixed label and its id). */
export function envelopeKey(provider: { readonly id: string; readonly apiKey: string }): EnvelopeKey {
  return { key: createHmac('sha256', provider.apiKey).update(`tollgate/responses-reasoning-envelope/v1\0${provider.id}`).digest() };
}

function mac(key: EnvelopeKey, payload: string): Buffer {
  return createHmac('sha256', key.key).update(payload).digest();
}

/** A thinking block as Anthropic made it, or undefined for anything else. */
function thinkingBlockOf(block: unknown): JsonObject | undefined {
  if (!isJsonObject(block)) return undefined;
  if (block.type === 'thinking' && typeof block.thinking === 'string' && typeof block.signature === 'string') {
    return { type: 'thinking', thinking: block.thinking, signature: block.signature };
  }
  if (block.type === 'redacted_thinking' && typeof block.data === 'string') return { type: 'redacted_thinking', data: block.data };
  return undefined;
}

/** The envelope of `blocks` (thinking and redacted_thinking blocks, as the upstream sent them). */
export function sealThinking(key: EnvelopeKey, blocks: readonly JsonObject[]): string {
  const kept = blocks.map(thinkingBlockOf).filter((block): block is JsonObject => block !== undefined);
  const payload = Buffer.from(JSON.stringify(kept)).toString('base64url');
  return `${PREFIX}${payload}.${mac(key, payload).toString('base64url')}`;
}

/** True for text shaped as a Tollgate envelope (whoever made it: binding a history to its cell needs no key). */
export function looksLikeEnvelope(content: unknown): content is string {
  return typeof content === 'string' && content.startsWith(PREFIX);
}

/** The blocks of a genuine envelope; undefined for a tampered, foreign or malformed one. */
export function openThinking(key: EnvelopeKey, content: unknown): JsonObject[] | undefined {
  if (!looksLikeEnvelope(content)) return undefined;
  const [payload, given, ...rest] = content.slice(PREFIX.length).split('.');
  if (payload === undefined || given === undefined || rest.length > 0) return undefined;
  const expected = mac(key, payload);
  const actual = Buffer.from(given, 'base64url');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return undefined;
  let blocks: unknown;
  try {
    blocks = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(blocks)) return undefined;
  const kept = blocks.map(thinkingBlockOf);
  return kept.every((block) => block !== undefined) ? (kept as JsonObject[]) : undefined;
}

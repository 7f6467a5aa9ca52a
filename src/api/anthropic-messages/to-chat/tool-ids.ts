// Tool-call ids across Messages and chat completions (product.md §14: ids the target API would reject are
// mapped deterministically). OpenAI takes ids matching ^[A-Za-z0-9_-]{1,40}$; Anthropic's are
// ^[a-zA-Z0-9_-]+$. An id either side accepts passes unchanged; another becomes a prefix and a hash of it.
// Both directions are pure functions of the id: a later turn's tool_result, which echoes the id the client
// was given, maps to the same id as the tool_use it answers — no state is kept between requests.
import { createHash } from 'node:crypto';

const CHAT_ID = /^[A-Za-z0-9_-]{1,40}$/;
const MESSAGES_ID = /^[A-Za-z0-9_-]+$/;

/** 24 characters of base64url: 144 bits, and every character valid in both APIs' ids. */
function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 24);
}

/** A Messages tool_use id as a chat tool-call id: `call_` + its hash when chat would reject it. */
export function chatToolCallId(id: string): string {
  return CHAT_ID.test(id) ? id : `call_${digest(id)}`;
}

/**
 * A chat tool-call id as a Messages tool_use id: `toolu_tg` + its hash when Anthropic's clients would
 * reject it (`functions.Read:0`, an empty id). 32 characters: valid for chat too, so it goes back unchanged.
 * `seed` stands for a missing id (the answer's id and the call's index).
 */
export function messagesToolUseId(id: unknown, seed: string): string {
  if (typeof id === 'string' && MESSAGES_ID.test(id)) return id;
  return `toolu_tg${digest(typeof id === 'string' && id !== '' ? id : seed)}`;
}

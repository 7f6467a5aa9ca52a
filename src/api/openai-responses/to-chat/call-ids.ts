// Function-call ids across Responses and chat completions (product.md §14: ids the target API would reject
// are mapped deterministically). Chat completions on OpenAI take tool-call ids matching
// ^[A-Za-z0-9_-]{1,40}$; a Responses `call_id` is any string the client echoes. An id chat accepts passes
// unchanged both ways; another becomes `call_` + a hash of it. Both directions are pure functions of the
// id, so a later turn's function_call_output, echoing the call_id the client was given, maps to the same
// chat id as the call it answers — no state is kept between requests.
import { createHash } from 'node:crypto';

const CHAT_ID = /^[A-Za-z0-9_-]{1,40}$/;

/** 24 characters of base64url (144 bits), each valid in a chat tool-call id. */
function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 24);
}

/** A Responses call_id as a chat tool_call_id. */
export function chatCallId(callId: string): string {
  return CHAT_ID.test(callId) ? callId : `call_${digest(callId)}`;
}

/**
 * A chat tool-call id as a Responses call_id: unchanged when chat accepts it (it then goes back unchanged),
 * else `call_` + its hash (Kimi's `functions.Read:0`, an id over 40 characters). `seed` stands for a
 * missing id (the response id and the call's index), so the same answer always gets the same id.
 */
export function responsesCallId(id: unknown, seed: string): string {
  if (typeof id === 'string' && CHAT_ID.test(id)) return id;
  return `call_${digest(typeof id === 'string' && id !== '' ? id : seed)}`;
}

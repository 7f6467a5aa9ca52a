// A Messages request to an upstream that speaks Messages (a native cell, product.md §14): the client's
// body as it sent it, only `model` replaced (and thinking a translated cell made dropped), posted to the kind's Messages path with the client's
// `anthropic-*` headers (anthropic-version defaulting to 2023-06-01). The client's credentials never go
// upstream: the transport signs each attempt with the provider's own key.
import type { ClientHeaders } from '../../pipeline/client-api.js';
import type { UpstreamRequest } from '../../providers/types.js';
import type { Candidate } from '../../routing/resolve-route.js';
import { rawLayoutOf, splicedRaw } from '../raw-body.js';
import { modelSpan } from './model-splice.js';
import { historyThinking, withoutOwnThinking } from './thinking.js';

export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

/**
 * How Messages reaches `candidate`: natively when the provider serves it; translated when it serves chat
 * completions and its kind has the translation (to-chat/); else not at all (Gemini's cells come later).
 */
export function messagesCellFor(candidate: Candidate): 'native' | 'translated' | undefined {
  const { serves } = candidate.provider;
  if (serves.includes('messages')) return 'native';
  return serves.includes('chat') && candidate.adapter.chatTranslation?.from.includes('messages') ? 'translated' : undefined;
}

/** The headers a native cell sends: the client's `anthropic-*` ones, as it sent them (never a credential). */
export function forwardedHeaders(client: ClientHeaders, stream: boolean): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' };
  for (const name in client) {
    if (!name.startsWith('anthropic-')) continue;
    const value = client[name];
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  headers['anthropic-version'] ??= DEFAULT_ANTHROPIC_VERSION;
  return headers;
}

/**
 * The body as the client sent it (its bytes, when kept) with `model` replaced; a body the gateway changed
 * (a clamp lowered max_tokens, strip_fields removed a field) has no text kept with it and is serialised
 * instead — as is one whose history holds thinking a translated cell made, which no Anthropic upstream
 * would accept back.
 */
export function forwardedBody(body: object & { model: string; messages?: unknown }, upstreamModel: string): UpstreamRequest['body'] & {} {
  if (Array.isArray(body.messages) && historyThinking(body.messages).own) {
    return JSON.stringify({ ...body, model: upstreamModel, messages: withoutOwnThinking(body.messages) });
  }
  const layout = rawLayoutOf(body);
  const span = layout && modelSpan(layout.members);
  const spliced = span && splicedRaw(body, body.model === upstreamModel ? [] : [span], JSON.stringify(upstreamModel));
  return spliced ?? JSON.stringify({ ...body, model: upstreamModel });
}

/** The native request to `candidate` at `path` under its base URL (the Messages path, or count_tokens beside it). */
export function nativeRequest(body: object & { model: string }, candidate: Candidate, headers: ClientHeaders, stream: boolean, path: string): UpstreamRequest {
  return {
    method: 'POST',
    path: `${candidate.target.provider.basePath}${path}`,
    headers: forwardedHeaders(headers, stream),
    body: forwardedBody(body, candidate.target.upstreamModel),
    native: true,
  };
}

/** The kind's Messages path (config only lets a provider serve Messages where its kind has one). */
export function messagesPath(candidate: Candidate): string {
  const path = candidate.adapter.nativePaths.messages;
  if (path === undefined) throw new Error(`provider kind ${candidate.provider.kind} has no Messages path`);
  return path;
}

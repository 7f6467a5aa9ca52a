// The adapter contract: pure translation between the OpenAI API the clients speak and one upstream
// API. Adapters build requests and read responses; transport, credentials' storage and billing live
// elsewhere. Translators *report* usage; they never bill.
import type { TokenUsage } from '../billing/pricing.js';
import { isJsonObject, type JsonObject } from '../json-object.js';
import type { SseEvent } from './framing/sse.js';
import type { ProviderKindInfo } from './kinds.js';

export type { JsonObject };

/** One event of an upstream stream, as its framing delivers it (SSE for every kind today). */
export type FramedEvent = SseEvent;

export type { ProviderKindInfo } from './kinds.js';

/** One HTTP call upstream. `path` is joined to the provider's configured origin by the transport, so an
 * adapter can never send a request to a host the config does not name. */
export interface UpstreamRequest {
  readonly method: 'POST' | 'GET';
  /** Path and query, starting with '/'. */
  readonly path: string;
  readonly headers: Record<string, string>;
  /**
   * JSON text, or a native cell's bytes as the client sent them (only `model` replaced): one piece, or
   * pieces sent in order (views of the client's bytes around the new `model`, never copied into one).
   */
  readonly body: string | Uint8Array | readonly Uint8Array[] | undefined;
  /** Convention fields the upstream's API has no place for, dropped (logged at debug, listed in docs/adr). */
  readonly dropped?: readonly string[];
  /** A native cell: the upstream speaks the client's API, so its error answers are kept as sent (`UpstreamFailure.body`). */
  readonly native?: boolean;
}

/** A request an adapter translated: always JSON text. */
export interface TranslatedRequest extends UpstreamRequest {
  readonly body: string | undefined;
}

/**
 * What a translator knows of the provider account it writes for: where its API lives. Never a credential
 * (upstream/auth.ts signs each attempt) nor a retry or timeout setting (the pipeline's).
 */
export interface ProviderEndpoint {
  /** The path of the provider's base_url, prefixed to every request's path. */
  readonly basePath: string;
  /** Kinds that take an `api_version` (Azure). */
  readonly apiVersion: string | undefined;
}

export interface UpstreamTarget {
  readonly provider: ProviderEndpoint;
  /** The model name the upstream knows. */
  readonly upstreamModel: string;
  /** The model ID the client asked for; responses carry it back. */
  readonly clientModel: string;
  /** The model's max_output_tokens (for APIs where the output limit is required, like Anthropic's). */
  readonly maxOutputTokens: number | undefined;
}

/** Usage as the upstream reported it: counts for billing, and the OpenAI-shaped object for the client. */
export interface ReportedUsage {
  readonly tokens: TokenUsage;
  readonly openai: JsonObject;
}

/** An error the upstream reported (HTTP status, or an error event inside a 200 stream). */
export interface UpstreamFailure {
  /** HTTP status, or 0 for an error event inside a stream. */
  readonly status: number;
  readonly message: string;
  readonly type: string | undefined;
  readonly code: string | undefined;
  readonly param: string | undefined;
  /** Seconds or HTTP-date, as the upstream sent it. */
  readonly retryAfter: string | undefined;
  /** The error answer's text as the upstream sent it; kept only for a native cell (a client that speaks that API). */
  readonly body?: string;
}

/** Thrown by translators when the upstream reports an error, or sends something that is not its API. */
export class UpstreamFailureError extends Error {
  constructor(readonly failure: UpstreamFailure) {
    super(failure.message);
    this.name = 'UpstreamFailureError';
  }
}

/** The upstream answered something that is not its API (a 502, retryable like any upstream fault). */
export function malformed(what: string): UpstreamFailureError {
  return new UpstreamFailureError(plainFailure(502, `the upstream sent a malformed ${what}`));
}

/** The JSON object one stream event carries; anything else is a malformed stream (502). */
export function parseStreamEvent(event: SseEvent): JsonObject {
  let payload: unknown;
  try {
    payload = JSON.parse(event.data);
  } catch {
    throw malformed('stream event');
  }
  if (!isJsonObject(payload)) throw malformed('stream event');
  return payload;
}

/** A failure with only a status and a message (no type, code or param). */
export function plainFailure(status: number, message: string, retryAfter?: string): UpstreamFailure {
  return { status, message, type: undefined, code: undefined, param: undefined, retryAfter };
}

/** An error body in no known shape (a proxy's HTML page, an empty body): its status and a short snippet. */
export function unrecognisedFailure(status: number, bodyText: string, retryAfter: string | undefined): UpstreamFailure {
  const snippet = bodyText.trim().slice(0, 200);
  return plainFailure(status, snippet ? `upstream returned HTTP ${status}: ${snippet}` : `upstream returned HTTP ${status}`, retryAfter);
}

export type ChatRequestBody = JsonObject & { model: string; messages: JsonObject[] };
export type EmbeddingRequestBody = JsonObject & { model: string; input: unknown };

export interface ParsedResponse {
  /** OpenAI-shaped body, with the client's model ID. `usage` is replaced by the pipeline. */
  readonly body: JsonObject;
  readonly usage: ReportedUsage | null;
}

/** Stateful, one per streamed request: upstream SSE events in, OpenAI chat.completion.chunks out. */
export interface ChatStreamTranslator {
  /** Returns the chunk to relay for this event, or null. Throws UpstreamFailureError on an error event. */
  onEvent(event: SseEvent): JsonObject | null;
  /** The upstream's own end marker arrived ([DONE], message_stop, ...). */
  readonly finished: boolean;
  /** The last usage seen (usage is cumulative upstream: the last report wins, never a sum). */
  readonly usage: ReportedUsage | null;
  /** id / created / system_fingerprint for the gateway's final usage chunk. */
  readonly id: string;
  readonly created: number;
}

export interface EmbeddingTranslator {
  build(body: EmbeddingRequestBody, target: UpstreamTarget): TranslatedRequest;
  parse(json: unknown, body: EmbeddingRequestBody, target: UpstreamTarget): ParsedResponse;
}

/**
 * Pure translation: builders write no credentials (upstream/auth.ts signs each attempt) and may throw
 * GatewayError('invalid_request') for input the upstream's API cannot express (tool
 * arguments that are not JSON, token-array input to an API that takes text): they run before the hold.
 */
export interface ProviderAdapter extends ProviderKindInfo {
  buildChatRequest(body: ChatRequestBody, target: UpstreamTarget): TranslatedRequest;
  parseChatResponse(json: unknown, target: UpstreamTarget): ParsedResponse;
  /** `body` is the client's request, for translators whose output depends on it (JSON mode). */
  createChatStreamTranslator(target: UpstreamTarget, body?: ChatRequestBody): ChatStreamTranslator;
  /** The embeddings translation; absent for a kind without embeddings (config routes no embedding model to it). */
  readonly embedding?: EmbeddingTranslator;
  /** Reads an upstream HTTP error response. */
  parseError(status: number, bodyText: string, headers: Record<string, string | string[] | undefined>): UpstreamFailure;
}

// What the request pipelines need from the rest of the gateway, and what they need from the HTTP layer.
import type { Logger } from 'pino';
import type { Ledger } from '../billing/ledger.js';
import type { Config } from '../config/types.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import type { UpstreamRequest } from '../providers/types.js';
import type { UpstreamHealth } from '../routing/upstream-health.js';
import type { KeyRecord, ResponseStateStore, UsageEndpoint } from '../storage/types.js';
import type { UpstreamTransport } from '../upstream/transport.js';
import type { DrainSlots } from './drain-slots.js';

export interface PipelineDeps {
  readonly config: Config;
  readonly ledger: Ledger;
  readonly transport: UpstreamTransport;
  readonly log: Logger;
  readonly health: UpstreamHealth;
  readonly drains: DrainSlots;
  readonly limiter: RateLimiter;
  /** Stored Responses ids per key (an API that binds requests to upstream state reads and records them); the server always has it. */
  readonly responseState?: ResponseStateStore;
}

/** One authenticated client request. */
export interface ClientRequest {
  readonly requestId: string;
  readonly key: KeyRecord;
  /** Aborted when the client disconnects before the response is complete. */
  readonly signal: AbortSignal;
  /** Sets a header on whatever answer the client gets (JSON, stream or error). */
  setHeader(name: string, value: string): void;
  /** `X-Tollgate-Dry-Run: 1`: answer a quote; no hold, no upstream call (product.md §13). */
  readonly dryRun: boolean;
  /** `X-Tollgate-Max-Tokens: clamp`: lower an unaffordable max_tokens instead of refusing (or the key's clamp_max_tokens). */
  readonly clamp: boolean;
  /** The request's headers (an API's native cells forward some of them; credentials never). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The client API it came through (its usage row's `endpoint`). */
  readonly endpoint: UsageEndpoint;
  /** The agent session the client named (its usage row's `session_id`, http/session-id.ts); null: none. */
  readonly sessionId: string | null;
  /** performance.now() when it arrived. */
  readonly startedAt: number;
}

/** The client's SSE response, opened (status 200, headers) on the first write. */
export interface SseSink {
  readonly started: boolean;
  /** Returns a promise only when the client is slow and the write must wait (backpressure). */
  write(text: string): Promise<void> | undefined;
  end(text: string): void;
}

/** The client went away; the request has been settled and there is no one to answer. */
export class ClientGoneError extends Error {
  constructor() {
    super('the client disconnected');
    this.name = 'ClientGoneError';
  }
}

/** Convention fields the upstream's API has no place for are dropped, never rejected; say so at debug. */
export function logDropped(deps: PipelineDeps, client: ClientRequest, request: UpstreamRequest): void {
  if (request.dropped && request.dropped.length > 0) {
    deps.log.debug({ requestId: client.requestId, dropped: request.dropped }, 'fields without a meaning upstream were dropped');
  }
}

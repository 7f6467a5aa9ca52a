// What one client request leaves for telemetry and the access log: filled in as it goes by the pipeline
// (the serving provider, the first token, what was billed, a rate-limit refusal) and reported once,
// when both the response has closed and the request's bill (if it opened one) has closed. A client
// that leaves mid-stream closes the response before its bill settles: waiting for both keeps one
// line and one count per request, with the money in it.
import type { LimitName } from '../limits/rate-limiter.js';
import type { UsageEndpoint, UsageRecord } from '../storage/types.js';

export class RequestTrace {
  /** performance.now() when the request arrived. */
  readonly startedAt = performance.now();
  /** The provider (config id) of the upstream that served or last tried the request. */
  provider: string | undefined;
  /** performance.now() when the first chunk of a stream went to the client. */
  firstTokenAt: number | undefined;
  /** What the bill recorded when it closed (status, tokens, cost, attempts). */
  billed: UsageRecord | undefined;
  /** Set when the key's rate limits refused the request. */
  rateLimited: LimitName | undefined;
  /** A non-stream chat answer, kept only when `log.bodies` is on. */
  answer: unknown;
  /** The client API of a model call (chat, embeddings); undefined for every other route. */
  endpoint: UsageEndpoint | undefined;
  /** The error code (product.md §6) and message of an error answer. */
  errorCode: string | undefined;
  errorMessage: string | undefined;
  /** The status the client saw, and whether the response completed (false: the client left first). */
  status = 0;
  responseCompleted = false;
  /** The response, plus the bill while one is open. */
  private pending = 1;

  constructor(private readonly onEnd: (trace: RequestTrace) => void) {}

  /** A bill opened: the request ends only once it has closed too. */
  billOpened(provider: string): void {
    this.provider = provider;
    this.pending++;
  }

  billClosed(record: UsageRecord): void {
    this.billed = record;
    this.provider = record.provider ?? this.provider;
    this.done();
  }

  responseClosed(status: number, completed: boolean): void {
    this.status = status;
    this.responseCompleted = completed;
    this.done();
  }

  /**
   * The status to report: a client that left before its answer was complete got nothing (499,
   * whatever the bill recorded); a bill's status says more than the wire's (a stream that failed
   * midway went out as a 200).
   */
  clientStatus(): number {
    if (!this.responseCompleted) return 499;
    return this.billed ? this.billed.status : this.status;
  }

  private done(): void {
    if (--this.pending === 0) this.onEnd(this);
  }
}

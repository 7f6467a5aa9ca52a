// Idempotency-Key on the client API (POST /v1/chat/completions and /v1/embeddings, product.md §13): the
// same key and Idempotency-Key never run or bill twice. The first request claims the key (storage decides
// atomically); a retry while it runs gets 409, one with another body 422, one after it finished the
// recorded answer (a stream: its exact SSE text). Answers over billing.idempotency_max_bytes are served
// but not kept (said in `x-tollgate-idempotency`). Why these rules: docs/adr/0019.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../log.js';
import type { IdempotencyStore, StoredAnswer } from '../storage/types.js';

/** Records are kept a day (the contract's minimum); the sweeper deletes them after. */
const KEEP_MS = 24 * 60 * 60 * 1000;
const MAX_KEY_LENGTH = 255;
/** The answer header: `replayed` on a replay; `not-stored` when the answer was too large to keep. */
export const IDEMPOTENCY_HEADER = 'x-tollgate-idempotency';

export interface IdempotencyDeps {
  readonly config: Config;
  readonly idempotency: IdempotencyStore;
  readonly log: Logger;
}

/** The claim a request holds on its Idempotency-Key while it runs. */
export class IdempotencyTicket {
  private readonly renewal: NodeJS.Timeout;
  private done = false;

  private constructor(
    private readonly deps: IdempotencyDeps,
    private readonly scope: string,
    private readonly key: string,
    private readonly leaseMs: number,
  ) {
    // A long stream keeps its claim: a lapsed lease would let a retry run the request a second time.
    this.renewal = setInterval(() => {
      deps.idempotency.renew(scope, key, Date.now() + leaseMs).catch((error: unknown) => deps.log.warn({ err: error }, 'idempotency: could not renew a claim'));
    }, leaseMs / 3);
    this.renewal.unref();
  }

  /** The most bytes of answer that will be kept. */
  get maxBytes(): number {
    return this.deps.config.billing.idempotencyMaxBytes;
  }

  /**
   * Claims the request's Idempotency-Key, or answers for it: a replay (true: the reply was sent), or
   * throws 409 / 422. Undefined: the request carries no Idempotency-Key.
   */
  static async claim(deps: IdempotencyDeps, request: FastifyRequest, reply: FastifyReply): Promise<IdempotencyTicket | true | undefined> {
    const header = request.headers['idempotency-key'];
    if (header === undefined) return undefined;
    const key = Array.isArray(header) ? header[0]! : header;
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
      throw new GatewayError('invalid_request', { param: 'Idempotency-Key', message: `The Idempotency-Key header must be 1 to ${MAX_KEY_LENGTH} characters.` });
    }
    const scope = `key:${request.apiKey!.id}`;
    // The body as parsed (JSON key order as sent): a different body is another request.
    const requestHash = createHash('sha256').update(`${request.url}\n${JSON.stringify(request.body)}`).digest('hex');
    const leaseMs = deps.config.billing.holdTtlSeconds * 1000;
    const outcome = await deps.idempotency.claim({ scope, key, requestHash, now: Date.now(), leaseMs, keepMs: KEEP_MS });
    switch (outcome.outcome) {
      case 'claimed':
        return new IdempotencyTicket(deps, scope, key, leaseMs);
      case 'running':
        // The OpenAI SDKs retry a 409 with backoff, which is right here: the retry will find the answer.
        throw new GatewayError('idempotency_in_progress', { headers: { 'retry-after': '1' } });
      case 'mismatch':
        throw new GatewayError('idempotency_mismatch', { param: 'Idempotency-Key' });
      case 'done':
        // Retrying cannot help; `x-should-retry` tells the OpenAI SDKs so.
        if (outcome.answer === null) throw new GatewayError('idempotency_not_replayable', { headers: { 'x-should-retry': 'false' } });
        sendReplay(reply, outcome.answer);
        return true;
    }
  }

  /** Keeps the answer for replays; false (and nothing kept) when it is over the size cap. */
  async complete(answer: StoredAnswer): Promise<boolean> {
    const fits = Buffer.byteLength(answer.body) <= this.maxBytes;
    await this.finish(() => this.deps.idempotency.complete(this.scope, this.key, fits ? answer : null, Date.now()));
    return fits;
  }

  /** Completed, but with an answer too large to keep. */
  async completeUnkept(): Promise<void> {
    await this.finish(() => this.deps.idempotency.complete(this.scope, this.key, null, Date.now()));
  }

  /** The request had no effect worth replaying (refused, failed before any output, client gone): it may run again. */
  async forget(): Promise<void> {
    await this.finish(() => this.deps.idempotency.forget(this.scope, this.key));
  }

  private async finish(write: () => Promise<void>): Promise<void> {
    if (this.done) return;
    this.done = true;
    clearInterval(this.renewal);
    try {
      await write();
    } catch (error) {
      // The answer was served; a lost record only means a retry runs the request again (its lease lapses).
      this.deps.log.error({ err: error }, 'idempotency: could not record the outcome');
    }
  }
}

function sendReplay(reply: FastifyReply, answer: StoredAnswer): void {
  reply.code(answer.status).header(IDEMPOTENCY_HEADER, 'replayed').type(answer.contentType);
  if (answer.contentType.startsWith('text/event-stream')) reply.header('cache-control', 'no-cache');
  void reply.send(answer.body);
}

/** Wraps a stream's sink: tees what the client is sent, up to the cap (beyond it, nothing more is kept). */
export class RecordingText {
  private parts: string[] | undefined = [];
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  add(text: string): void {
    if (!this.parts) return;
    this.bytes += Buffer.byteLength(text);
    if (this.bytes > this.maxBytes) this.parts = undefined;
    else this.parts.push(text);
  }

  /** The whole text, or undefined when it outgrew the cap. */
  text(): string | undefined {
    return this.parts?.join('');
  }
}

// Idempotency-Key on every admin POST, through the one store every endpoint shares (storage/
// idempotency-claim.ts): the first request with a key runs and its answer is recorded; a replay with
// the same method, path and body gets that answer back (`idempotent-replayed: true`) and changes
// nothing; another request under the same key is 422 idempotency_mismatch; one that arrives while the
// first still runs is 409 idempotency_in_progress. A replay of a create or a rotate carries `key: null`:
// secrets are never stored in clear, so a caller that lost the first answer rotates the key. A request that fails changed nothing (each operation
// is one transaction), so its claim is dropped and a retry runs afresh.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../../errors.js';
import type { IdempotencyStore } from '../../../storage/types.js';

/** How long an Idempotency-Key's answer is kept (the contract says at least 24 h). */
export const ADMIN_IDEMPOTENCY_KEEP_MS = 24 * 3_600_000;
/** How long a running claim stands: admin operations take milliseconds, a dead process's claim lapses. */
const LEASE_MS = 60_000;
/** Whose Idempotency-Keys an admin POST's are (/v1/account's are each account's own: 'account:<id>'). */
const ADMIN_SCOPE = 'admin';
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

export interface AdminAnswer {
  readonly status: number;
  readonly body: unknown;
  /**
   * What a replay gets, when it must differ from `body`: a key's secret is shown once and never
   * stored in clear, so the recorded answer of a create or a rotate carries `key: null`.
   */
  readonly replay?: unknown;
}

export interface PostContext {
  /**
   * With an Idempotency-Key: a stable id for this request's effect (the same on every retry), for
   * operations whose ledger write must not happen twice even if the process died before the answer
   * was recorded. Undefined without the header.
   */
  readonly operationId: string | undefined;
}

export type AdminPostHandler = (request: FastifyRequest, context: PostContext) => Promise<AdminAnswer>;

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** JSON with object keys sorted, so two bodies that mean the same hash the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function send(reply: FastifyReply, answer: AdminAnswer): FastifyReply {
  return reply.code(answer.status).type('application/json').send(JSON.stringify(answer.body));
}

/**
 * Wraps an admin POST handler with Idempotency-Key handling. `scopeOf`: whose keys the request's is (the
 * same Idempotency-Key of two callers never meets); the admin's by default.
 */
export function idempotentPost(store: IdempotencyStore, handler: AdminPostHandler, scopeOf: (request: FastifyRequest) => string = () => ADMIN_SCOPE) {
  return async function idempotentAdminPost(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const header = request.headers['idempotency-key'];
    if (header === undefined) return send(reply, await handler(request, { operationId: undefined }));
    if (typeof header !== 'string' || !KEY_SHAPE.test(header)) {
      throw new GatewayError('invalid_request', { param: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 255 visible ASCII characters.' });
    }
    const scope = scopeOf(request);
    const now = Date.now();
    const requestHash = sha256(`${request.method} ${request.url}\n${canonicalJson(request.body ?? null)}`);
    const claim = await store.claim({ scope, key: header, requestHash, now, leaseMs: LEASE_MS, keepMs: ADMIN_IDEMPOTENCY_KEEP_MS });
    if (claim.outcome === 'running') throw new GatewayError('idempotency_in_progress', { headers: { 'retry-after': '1' } });
    if (claim.outcome === 'mismatch') throw new GatewayError('idempotency_mismatch');
    if (claim.outcome === 'done') {
      // Admin answers are always recorded whole (they are small JSON objects).
      const answer = claim.answer!;
      return reply.code(answer.status).header('idempotent-replayed', 'true').type(answer.contentType).send(answer.body);
    }
    let answer: AdminAnswer;
    try {
      answer = await handler(request, { operationId: `idem_${sha256(`${scope}\n${header}\n${requestHash}`).slice(0, 40)}` });
    } catch (error) {
      await store.forget(scope, header).catch(() => undefined);
      throw error;
    }
    const recorded = JSON.stringify(answer.replay ?? answer.body);
    await store.complete(scope, header, { status: answer.status, contentType: 'application/json; charset=utf-8', body: recorded }, Date.now());
    return send(reply, answer);
  };
}

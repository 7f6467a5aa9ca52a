// Turns a Fastify request into the pipeline's ClientRequest, with a signal that fires when the client
// disconnects before its response is complete.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ClientRequest } from '../pipeline/deps.js';
import type { UsageEndpoint } from '../storage/types.js';
import { ClientGoneReason } from '../upstream/transport.js';
import { sessionIdOf } from './session-id.js';

export function clientRequestOf(request: FastifyRequest, reply: FastifyReply, endpoint: UsageEndpoint): ClientRequest {
  const controller = new AbortController();
  const raw = reply.raw;
  raw.once('close', () => {
    if (!raw.writableFinished) controller.abort(new ClientGoneReason());
  });
  return {
    requestId: request.id,
    key: request.apiKey!,
    signal: controller.signal,
    setHeader: (name, value) => void reply.header(name, value),
    dryRun: request.headers['x-tollgate-dry-run'] === '1',
    clamp: request.headers['x-tollgate-max-tokens'] === 'clamp' || request.apiKey!.clampMaxTokens,
    headers: request.headers,
    endpoint,
    sessionId: sessionIdOf(request.headers),
    startedAt: request.receivedAt,
  };
}

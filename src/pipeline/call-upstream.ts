// One non-stream upstream attempt: send, check the status, read the body within its size limit,
// parse the JSON. Records the attempt on the bill; throws UpstreamFailureError or TransportError.
import { isJsonObject } from '../json-object.js';
import { malformed, UpstreamFailureError, type UpstreamRequest } from '../providers/types.js';
import type { Candidate } from '../routing/resolve-route.js';
import { AttemptSignal } from '../upstream/attempt-signal.js';
import { readBody, TransportError, type UpstreamResponse } from '../upstream/transport.js';
import type { ClientRequest, PipelineDeps } from './deps.js';
import type { RequestBill } from './request-bill.js';
import { attemptStatusOf } from './upstream-error.js';

/** Error bodies are read for their message only; more than this is cut off. */
const ERROR_BODY_LIMIT = 64 * 1024;

/** Reads an upstream error response into the adapter's UpstreamFailure. */
export async function readUpstreamFailure(
  candidate: Candidate,
  response: UpstreamResponse,
  signal: AbortSignal,
): Promise<UpstreamFailureError> {
  let text = '';
  try {
    text = (await readBody(response, ERROR_BODY_LIMIT, signal)).toString('utf8');
  } catch (error) {
    if (!(error instanceof TransportError) || error.reason !== 'too-large') throw error;
  }
  return new UpstreamFailureError(candidate.adapter.parseError(response.status, text, response.headers));
}

export async function fetchUpstreamJson(
  deps: PipelineDeps,
  client: ClientRequest,
  candidate: Candidate,
  request: UpstreamRequest,
  bill: RequestBill,
): Promise<unknown> {
  const attempt = new AttemptSignal(client.signal, candidate.provider.timeouts.totalMs, undefined, bill);
  const startedAt = performance.now();
  let recorded = false;
  try {
    const response = await deps.transport.send(candidate.provider, request, attempt.signal);
    if (response.status >= 300) throw await readUpstreamFailure(candidate, response, attempt.signal);
    const raw = await readBody(response, deps.config.server.maxUpstreamBodyBytes, attempt.signal);
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      json = undefined;
    }
    if (isJsonObject(json)) {
      bill.recordAttempt(candidate.provider.id, response.status, startedAt);
      recorded = true;
      return json;
    }
    throw malformed('body (not a JSON object)');
  } catch (error) {
    if (!recorded) bill.recordAttempt(candidate.provider.id, attemptStatusOf(error), startedAt);
    throw error;
  } finally {
    attempt.dispose();
  }
}

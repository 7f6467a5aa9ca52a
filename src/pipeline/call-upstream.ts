// One non-stream upstream attempt: send, check the status, read the body within its size limit, parse
// the JSON. Throws UpstreamFailureError or TransportError; the attempt log is kept by attempts.ts.
import { isJsonObject, type JsonObject } from '../json-object.js';
import { malformed, UpstreamFailureError, type UpstreamRequest } from '../providers/types.js';
import type { Candidate } from '../routing/resolve-route.js';
import { AttemptSignal, type AttemptStopper } from '../upstream/attempt-signal.js';
import { readBody, TransportError, type UpstreamResponse } from '../upstream/transport.js';
import type { Attempted } from './attempts.js';
import type { ClientRequest, PipelineDeps } from './deps.js';

/** Error bodies are read for their message only; more than this is cut off. */
const ERROR_BODY_LIMIT = 64 * 1024;

/**
 * Reads an upstream error response into the adapter's UpstreamFailure; for a native cell's request
 * (`native`) the body is kept as it came, for the client (upstream-error.ts decides when it is answered).
 */
export async function readUpstreamFailure(candidate: Candidate, response: UpstreamResponse, signal: AbortSignal, native = false): Promise<UpstreamFailureError> {
  let text = '';
  let whole = true;
  try {
    text = (await readBody(response, ERROR_BODY_LIMIT, signal)).toString('utf8');
  } catch (error) {
    if (!(error instanceof TransportError) || error.reason !== 'too-large') throw error;
    whole = false;
  }
  const failure = candidate.adapter.parseError(response.status, text, response.headers);
  return new UpstreamFailureError(native && whole ? { ...failure, body: text } : failure);
}

export async function fetchUpstreamJson(
  deps: PipelineDeps,
  client: ClientRequest,
  candidate: Candidate,
  request: UpstreamRequest,
  stopper: AttemptStopper,
): Promise<Attempted<JsonObject>> {
  const attempt = new AttemptSignal(client.signal, candidate.provider.timeouts.totalMs, undefined, stopper);
  try {
    const response = await deps.transport.send(candidate.provider, request, attempt.signal);
    if (response.status >= 300) throw await readUpstreamFailure(candidate, response, attempt.signal, request.native);
    const raw = await readBody(response, deps.config.server.maxUpstreamBodyBytes, attempt.signal);
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      json = undefined;
    }
    if (isJsonObject(json)) return { value: json, status: response.status };
    throw malformed('body (not a JSON object)');
  } finally {
    attempt.dispose();
  }
}

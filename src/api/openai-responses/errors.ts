// The Responses API's answers to the gateway's refusals (product.md §14's error table, /v1/responses
// column), in the §6 envelope. Two differ from chat completions' 402s, because of what the clients do
// with them: Codex retries a 402 five times before it shows anything, but stops at once on a 429 whose
// code is `insufficient_quota` (OpenAI's answer for an exhausted account), and reads a spent plan from a
// 429 `usage_limit_reached` with `resets_at` (Unix seconds). `x-should-retry: false` stops the OpenAI
// SDKs' automatic retries: neither answer changes within seconds.
import { GatewayError } from '../../errors.js';
import { ErrorAnswer } from '../../http/render-error.js';

function isJsonObjectText(text: string): boolean {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  } catch {
    return false;
  }
}

/** `metadata.resets_at` (ISO 8601) of a budget refusal, as Unix seconds. */
function resetsAtSeconds(error: GatewayError): number | undefined {
  const text = error.metadata?.resets_at;
  const ms = typeof text === 'string' ? Date.parse(text) : NaN;
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

/** A gateway error as /v1/responses answers it: its status, type, code and headers. */
export function responsesError(error: GatewayError): GatewayError {
  const kept = { message: error.message, param: error.param, ...(error.metadata ? { metadata: error.metadata } : {}) };
  if (error.code === 'insufficient_balance') {
    return new GatewayError('insufficient_balance', {
      ...kept,
      // The output limit is max_output_tokens here.
      message: error.message.replace('Lower max_tokens', 'Lower max_output_tokens'),
      param: error.param === 'max_tokens' ? 'max_output_tokens' : error.param,
      status: 429,
      type: 'insufficient_quota',
      wireCode: 'insufficient_quota',
      headers: { ...error.headers, 'x-should-retry': 'false' },
    });
  }
  if (error.code === 'credit_limit_reached' || error.code === 'account_suspended') {
    // Billing refusals like a short balance: 429 insufficient_quota, which Codex and the SDK do not retry.
    return new GatewayError(error.code, { ...kept, status: 429, type: 'insufficient_quota', wireCode: 'insufficient_quota', headers: { ...error.headers, 'x-should-retry': 'false' } });
  }
  if (error.code === 'budget_exceeded') {
    const resetsAt = resetsAtSeconds(error);
    const retryAfter = resetsAt === undefined ? undefined : Math.max(1, resetsAt - Math.floor(Date.now() / 1000));
    return new GatewayError('budget_exceeded', {
      ...kept,
      status: 429,
      type: 'usage_limit_reached',
      wireCode: 'budget_exceeded',
      headers: { ...error.headers, 'x-should-retry': 'false', ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }) },
    });
  }
  if (error.code === 'upstream_rejected' && error.upstreamBody === undefined) {
    // A translated cell's chat upstream refused the request it was sent: the client's request was bad in a
    // way only the upstream knew. A 400 invalid_request with the upstream's words (Codex shows them).
    return new GatewayError('upstream_rejected', { ...kept, status: 400, type: 'invalid_request_error', wireCode: 'invalid_request' });
  }
  return error;
}

/**
 * The §6 envelope; a budget refusal also carries `resets_at` (Unix seconds), where Codex reads it. A native
 * cell's upstream 4xx is answered as it came (status and body), when it is a JSON object (a proxy's page
 * is no answer in the client's API).
 */
export function responsesEnvelope(error: GatewayError): { error: Record<string, unknown> } | ErrorAnswer {
  if (error.upstreamBody !== undefined && error.status >= 400 && error.status < 500 && isJsonObjectText(error.upstreamBody)) {
    return new ErrorAnswer(error.status, error.upstreamBody);
  }
  const body = error.toBody();
  if (error.code === 'budget_exceeded') {
    const resetsAt = resetsAtSeconds(error);
    if (resetsAt !== undefined) body.error.resets_at = resetsAt;
  }
  return body;
}

// The one error registry: every error the gateway returns has a code here, with its HTTP status and
// OpenAI-style `type`. Code throws GatewayError; http/render-error.ts is the only place that renders them.

interface ErrorSpec {
  readonly status: number;
  readonly type: string;
  readonly message: string;
}

export const ERROR_REGISTRY = {
  invalid_request: { status: 400, type: 'invalid_request_error', message: 'The request is invalid.' },
  invalid_api_key: {
    status: 401,
    type: 'invalid_request_error',
    message: 'Invalid API key. Send a valid Tollgate key as "Authorization: Bearer tg-...".',
  },
  // /v1/account's 401 (docs/adr/0047-accounts.md): one body for a missing, malformed, unknown, rotated or
  // revoked account token — and for a key secret, which never manages an account.
  invalid_account_token: {
    status: 401,
    type: 'invalid_request_error',
    message: 'Invalid account token. Send the account\'s self-service token as "Authorization: Bearer tga-...".',
  },
  // The admin API's 401 (product.md §9): one body for a missing, malformed or wrong admin token.
  invalid_admin_token: {
    status: 401,
    type: 'invalid_request_error',
    message: 'Invalid admin token. Send the configured admin.token as "Authorization: Bearer <token>".',
  },
  insufficient_balance: {
    status: 402,
    type: 'insufficient_quota',
    message: 'The key balance does not cover the hold for this request.',
  },
  budget_exceeded: {
    status: 402,
    type: 'insufficient_quota',
    message: "The key's spend cap for this period does not cover the hold for this request.",
  },
  // Accounts (docs/adr/0047-accounts.md): the key's lifetime cap, and an account the operator suspended.
  credit_limit_reached: {
    status: 402,
    type: 'insufficient_quota',
    message: "The key's credit limit does not cover the hold for this request.",
  },
  account_suspended: {
    status: 402,
    type: 'insufficient_quota',
    message: "The key's account is suspended: it cannot be charged.",
  },
  // The admin API and CLI: a revoked key's balance is frozen — no top-up or adjustment (ADR 0032).
  key_revoked: {
    status: 409,
    type: 'invalid_request_error',
    message: "The key is revoked: its balance can no longer change. Issue a new key instead.",
  },
  idempotency_in_progress: {
    status: 409,
    type: 'invalid_request_error',
    message: 'A request with this Idempotency-Key is still in progress; retry once it has finished.',
  },
  idempotency_not_replayable: {
    status: 409,
    type: 'invalid_request_error',
    message:
      'The request with this Idempotency-Key already completed, but its answer was larger than billing.idempotency_max_bytes and was not kept; it is not run again. Use a new Idempotency-Key to run it again.',
  },
  idempotency_mismatch: {
    status: 422,
    type: 'invalid_request_error',
    message: 'This Idempotency-Key was already used with a different request.',
  },
  model_not_found: {
    status: 404,
    type: 'invalid_request_error',
    message: 'The model does not exist or you do not have access to it.',
  },
  // A model none of whose upstreams can serve this client API (natively or by a translation the gateway has).
  model_not_supported_on_endpoint: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The model is not served on this endpoint.',
  },
  not_found: { status: 404, type: 'invalid_request_error', message: 'No such route.' },
  // Responses API (product.md §14): a previous_response_id or item_reference this key never stored.
  previous_response_not_found: {
    status: 404,
    type: 'invalid_request_error',
    message: 'No stored response or item with this id was made with this key.',
  },
  // A parameter the gateway does not serve on this endpoint (Responses: background, conversation, built-in tools).
  unsupported_parameter: { status: 400, type: 'invalid_request_error', message: 'This parameter is not supported.' },
  key_not_found: { status: 404, type: 'invalid_request_error', message: 'No such key.' },
  account_not_found: { status: 404, type: 'invalid_request_error', message: 'No such account.' },
  // Redemption codes (docs/adr/0051-redemption-codes.md): a well-shaped code that names no code, one
  // redeemed before, revoked, expired, or restricted to another account. Each changes nothing.
  code_not_found: { status: 404, type: 'invalid_request_error', message: 'No such redemption code. Check it for typos.' },
  code_redeemed: { status: 409, type: 'invalid_request_error', message: 'This redemption code has already been redeemed.' },
  code_revoked: { status: 410, type: 'invalid_request_error', message: 'This redemption code was revoked by the operator.' },
  code_expired: { status: 410, type: 'invalid_request_error', message: 'This redemption code has expired.' },
  code_wrong_account: { status: 403, type: 'invalid_request_error', message: 'This redemption code is for another account.' },
  // Failed redemptions per key (or account token) and per client address: guessing is refused for a while.
  too_many_redeem_attempts: {
    status: 429,
    type: 'rate_limit_error',
    message: 'Too many failed redemption attempts; wait for the time in Retry-After before trying again.',
  },
  // /v1/account requests per account past limits.account_rpm in the rolling minute.
  account_rate_limited: {
    status: 429,
    type: 'rate_limit_error',
    message: 'Too many requests for this account; wait for the time in Retry-After before trying again.',
  },
  webhook_event_not_found: { status: 404, type: 'invalid_request_error', message: 'No such webhook event.' },
  // Stripe top-ups (docs/adr/0050-stripe-top-ups.md): the config has no payments.stripe; Stripe refused or
  // could not be reached when a Checkout Session was made; a webhook whose Stripe-Signature does not verify.
  payments_disabled: {
    status: 404,
    type: 'invalid_request_error',
    message: 'Payments are not enabled on this gateway (the config has no payments.stripe). Ask the operator to add credit.',
  },
  payment_provider_error: { status: 502, type: 'upstream_error', message: 'Stripe could not start the checkout; retry shortly.' },
  invalid_webhook_signature: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The Stripe-Signature header does not verify against payments.stripe.webhook_secret for this body.',
  },
  method_not_allowed: { status: 405, type: 'invalid_request_error', message: 'Method not allowed.' },
  // Protocol level (no request object exists yet): written straight to the socket by http/client-error.ts.
  request_timeout: { status: 408, type: 'invalid_request_error', message: 'The request was not received in time.' },
  request_too_large: { status: 413, type: 'invalid_request_error', message: 'The request body is too large.' },
  unsupported_media_type: {
    status: 415,
    type: 'invalid_request_error',
    message: 'POST bodies must be sent with Content-Type: application/json.',
  },
  headers_too_large: { status: 431, type: 'invalid_request_error', message: 'The request headers are too large.' },
  invalid_metrics_token: {
    status: 401,
    type: 'invalid_request_error',
    message: 'GET /metrics needs the configured metrics.token as "Authorization: Bearer ...".',
  },
  rate_limited: { status: 429, type: 'rate_limit_error', message: 'Rate limit reached for this key.' },
  upstream_rate_limited: { status: 429, type: 'rate_limit_error', message: 'The upstream provider is rate limiting.' },
  // Upstream 400/404/413/422 keep their status (set per error); the message is the upstream's.
  upstream_rejected: { status: 400, type: 'invalid_request_error', message: 'The upstream provider rejected the request.' },
  upstream_error: { status: 502, type: 'upstream_error', message: 'The upstream provider failed.' },
  upstream_auth_failed: {
    status: 502,
    type: 'upstream_error',
    message: 'The upstream provider refused the gateway credentials.',
  },
  upstream_timeout: { status: 504, type: 'upstream_error', message: 'The upstream provider timed out.' },
  ledger_unavailable: {
    status: 503,
    type: 'server_error',
    message: 'The balance cannot be checked right now; retry shortly.',
  },
  shutting_down: { status: 503, type: 'server_error', message: 'The gateway is shutting down; retry shortly.' },
  internal_error: { status: 500, type: 'server_error', message: 'Internal gateway error.' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_REGISTRY;

export interface GatewayErrorOptions {
  message?: string;
  param?: string | null;
  /** Overrides the registry status: the upstream's own (upstream_rejected; a native cell's 529 upstream_error). */
  status?: number;
  /** Overrides the code sent on the wire (upstream_rejected keeps the upstream's code). */
  wireCode?: string | null;
  /** Overrides the type sent on the wire. */
  type?: string;
  metadata?: Record<string, unknown>;
  headers?: Record<string, string>;
  /**
   * A native cell's upstream error answer as the upstream sent it (the client speaks the upstream's API):
   * that API's envelope may pass it on unchanged (product.md §14).
   */
  upstreamBody?: string;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly wireCode: string | null;
  readonly metadata: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;
  readonly upstreamBody: string | undefined;

  constructor(code: ErrorCode, options: GatewayErrorOptions = {}) {
    const spec: ErrorSpec = ERROR_REGISTRY[code];
    super(options.message ?? spec.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = options.status ?? spec.status;
    this.type = options.type ?? spec.type;
    this.param = options.param ?? null;
    this.wireCode = options.wireCode === undefined ? code : options.wireCode;
    this.metadata = options.metadata;
    this.headers = options.headers;
    this.upstreamBody = options.upstreamBody;
  }

  /** The convention's envelope: all four keys present, metadata only when set. */
  toBody(): { error: Record<string, unknown> } {
    const error: Record<string, unknown> = {
      message: this.message,
      type: this.type,
      param: this.param,
      code: this.wireCode,
    };
    if (this.metadata) error.metadata = this.metadata;
    return { error };
  }
}

export function isGatewayError(value: unknown): value is GatewayError {
  return value instanceof GatewayError;
}

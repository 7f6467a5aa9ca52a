// The shapes the dashboard reads from the public APIs (product.md §2, §4, §8, §9). Money is USD as a
// decimal number, exactly as the API gives it; the page never does arithmetic on it beyond display.
export interface Limits {
  rpm: number | null;
  tpm: number | null;
  max_concurrent: number | null;
  budget: number | null;
  budget_period: 'day' | 'week' | 'month' | null;
}

/** A key object (§2 plus §8's limits), as /admin/v1/keys returns it. */
export interface KeyObject {
  id: string;
  name: string;
  prefix: string;
  balance: number;
  held: number;
  available: number;
  allowed_models: string[] | '*';
  status: 'active' | 'revoked';
  created_at: string | number;
  limits: Limits;
  expires_at: string | null;
  budget_used: number | null;
  budget_resets_at: string | null;
  /** Lower an unaffordable max_tokens instead of refusing (product.md §13). */
  clamp_max_tokens?: boolean;
  /** The operator's own labels. */
  metadata?: Record<string, string> | null;
  /** Only in the answer to create and rotate: the secret, shown once. */
  key?: string;
}

/**
 * One usage row (§2): one per request that named a valid key, refused and failed ones included (cost 0,
 * no ledger entry). A request refused before an upstream was chosen has no provider, upstream model or
 * usage (`usage_source: "none"`), and one naming no model has none. Fields marked optional are newer
 * than the first usage rows: a gateway that does not send them shows "—".
 */
export interface UsageRow {
  request_id: string;
  time: string;
  key_id: string;
  model: string | null;
  /** The client API: "chat" | "embeddings" (and "messages" | "responses" where served). */
  endpoint?: string | null;
  provider: string | null;
  upstream_model: string | null;
  status: number;
  /** The error envelope's `code` when the request failed (`insufficient_balance`, `upstream_error`, ...). */
  error_code?: string | null;
  error_message?: string | null;
  /** From the request's arrival to its last byte, in milliseconds. */
  duration_ms?: number | null;
  /** From the request's arrival to the first token sent (streams), in milliseconds. */
  first_token_ms?: number | null;
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens?: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost: number;
  usage_source: 'upstream' | 'estimated' | 'none';
  attempts: UsageAttempt[];
}

export interface UsageAttempt {
  provider: string;
  status: number;
  duration_ms: number;
}

/** One entry of a key's ledger (GET /admin/v1/keys/{id}/ledger), newest first. */
export interface LedgerEntry {
  id: number | string;
  object: 'ledger_entry';
  key_id: string;
  /** topup and adjust move the balance; hold and release move what is held; capture charges a request. */
  kind: 'topup' | 'adjust' | 'hold' | 'capture' | 'release';
  /** USD; positive, except an adjustment that takes credit away. */
  amount: number;
  request_id: string | null;
  note: string | null;
  created_at: string;
}

/** One bucket of GET /admin/v1/usage/unauthenticated: requests refused for a missing or unknown key. */
export interface UnauthenticatedBucket {
  time: string;
  requests: number;
}

export type GroupBy = 'key' | 'model' | 'provider' | 'day' | 'hour';

/** One row of a usage summary: the group's value under its own name (`day`, `model`, ...) or `group`. */
export interface SummaryRow {
  [group: string]: unknown;
  requests: number;
  input_tokens: number;
  cached_input_tokens?: number;
  output_tokens: number;
  reasoning_tokens?: number;
  cost: number;
  errors?: number;
}

/** The §9 list shape, for every paginated list. */
export interface ListPage<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface ModelEntry {
  id: string;
  type: string;
  context_window: number | null;
  max_output_tokens: number | null;
  pricing: { input: number; output?: number; cached_input?: number; [other: string]: unknown };
}

/** GET /v1/key's data. */
export interface OwnKey {
  id: string;
  name: string;
  balance: number;
  held: number;
  available: number;
  usage: number;
  allowed_models: string[] | '*';
  limits: Limits;
  expires_at: string | null;
  budget_used: number | null;
  budget_resets_at: string | null;
}

/** One upstream in GET /admin/v1/providers. */
export interface UpstreamHealth {
  provider: string;
  kind?: string;
  upstream_model: string;
  /** The client model IDs this upstream serves. */
  models?: string[];
  /** false: the provider lacks the api_key its kind needs, so this upstream is never called. */
  configured?: boolean;
  cooling?: boolean;
  cooling_until: string | null;
  consecutive_failures: number;
  last_error: string | { message?: string; status?: number; at?: string } | null;
  requests_5m?: number;
  errors_5m?: number;
  [other: string]: unknown;
}

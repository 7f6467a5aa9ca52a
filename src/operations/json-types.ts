// The JSON the presenters write, field by field: what the admin API, the key holder's /v1 endpoints and
// the CLI's --json print. The presenters are typed with these (so the compiler checks each one writes
// exactly this), and the dashboard imports them type-only (dashboard/src/types.ts), so a field changed
// here and not there fails `npm run typecheck` instead of drifting.
//
// This file imports nothing, not even types: the dashboard's typecheck (DOM, no Node types) reads it,
// and must not pull any server module in with it. The unions below are spelled out again for the same
// reason; a presenter assigning a wider server type to one of them fails to compile.
//
// Type aliases, not interfaces: a JSON object is also a Record<string, unknown> (an interface has no
// implicit index signature, so callers that treat an answer as a plain record would no longer compile).
// Money is USD as a decimal number; times are ISO 8601 strings in UTC.

/** The §9 list shape, for every paginated list. */
export type ListPage<T> = {
  readonly object: 'list';
  readonly data: T[];
  readonly has_more: boolean;
  readonly next_cursor: string | null;
};

/** A key's limits in force: its own values, else the config's `limits:` (null: no limit). */
export type LimitsJson = {
  rpm: number | null;
  tpm: number | null;
  max_concurrent: number | null;
  budget: number | null;
  /** null exactly when there is no budget. */
  budget_period: 'day' | 'week' | 'month' | null;
};

/** The key object (product.md §2, §8): the admin API's keys, `keys list/show --json`. */
export type KeyJson = {
  id: string;
  name: string;
  prefix: string;
  /** The account's balance and held (a key has no money of its own; a personal account's are the key's). */
  balance: number;
  held: number;
  /** What this key can still hold: the account's available balance, within the key's credit limit. */
  available: number;
  account_id: string;
  /** USD the key may ever spend; null: no cap but the account's money. */
  credit_limit: number | null;
  /** What is left of it; null without one. */
  credit_left: number | null;
  /** This key's own lifetime spend. */
  spent: number;
  allowed_models: string[] | '*';
  status: 'active' | 'revoked';
  created_at: string;
  limits: LimitsJson;
  expires_at: string | null;
  /** Lower an unaffordable max_tokens instead of refusing it (product.md §13). */
  clamp_max_tokens: boolean;
  /** null when there is no budget. */
  budget_used: number | null;
  budget_resets_at: string | null;
  /** The operator's own labels ({} when none). */
  metadata: Record<string, string>;
};

/** An account (docs/adr/0047-accounts.md): the money its keys spend. */
export type AccountJson = {
  id: string;
  object: 'account';
  name: string;
  status: 'active' | 'suspended';
  /** Made for one key by creating the key without an account. */
  personal: boolean;
  balance: number;
  held: number;
  available: number;
  spent: number;
  budget: number | null;
  /** null exactly when there is no budget. */
  budget_period: 'day' | 'week' | 'month' | null;
  budget_used: number | null;
  budget_resets_at: string | null;
  /** The models the account token may give its own keys. */
  allowed_models: string[] | '*';
  /** The first characters of the self-service token (tga-...); null: none issued. */
  token_prefix: string | null;
  metadata: Record<string, string>;
  created_at: string;
};

/** What an account's usage rows add up to (its keys' requests, all time). */
export type AccountTotalsJson = {
  /** Its keys, by status. */
  keys_active: number;
  keys_revoked: number;
  requests: number;
  /** Requests answered with a status of 400 or above. */
  errors: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  /** What its usage rows were charged: the account's spent. */
  cost: number;
};

/** GET /v1/account: the account as its token's holder sees it (not the operator's metadata), with its totals. */
export type AccountHolderJson = Omit<AccountJson, 'metadata'> & { totals: AccountTotalsJson };

/** A key as an account token's holder sees it (/v1/account/keys): the key object but the operator's metadata. */
export type AccountKeyJson = Omit<KeyJson, 'metadata'>;

/** The answer to creating a key through /v1/account: the key and its secret, shown once (null in a replay). */
export type IssuedAccountKeyJson = AccountKeyJson & { key: string | null };

/** The answer to issuing or rotating an account token: the account and the token, shown once. */
export type IssuedAccountTokenJson = AccountJson & { token: string | null };

/** The answer to creating a key or rotating its secret: the key object and its secret, shown once. */
export type IssuedKeyJson = KeyJson & {
  /** null in an Idempotency-Key replay: the secret is never stored, so a replay cannot show it again. */
  key: string | null;
};

/** GET /v1/key's `data`: the calling key as its holder sees it. */
export type KeyHolderJson = {
  id: string;
  name: string;
  /** The account's balance and held; `available`: what this key can still hold (within its credit limit). */
  balance: number;
  held: number;
  available: number;
  /** Everything this key has had captured so far. */
  usage: number;
  /** The key's lifetime cap and what is left of it (null: none). */
  credit_limit: number | null;
  credit_left: number | null;
  /** The account the key draws on: its available balance (balance − held), shared by all its keys. */
  account: { id: string; name: string; personal: boolean; available: number };
  allowed_models: string[] | '*';
  limits: LimitsJson;
  expires_at: string | null;
  budget_used: number | null;
  budget_resets_at: string | null;
};

export type KeyHolderAnswerJson = { data: KeyHolderJson };

/** Prices as configured, USD per 1M tokens (`request`: per request). */
export type ModelPriceTierJson = {
  input: number;
  output?: number;
  cached_input?: number;
  cache_write?: number;
  cache_write_1h?: number;
  /** The tier's prices apply to requests with more input tokens than this. */
  above_input_tokens: number;
};

export type ModelPriceJson = {
  input: number;
  output?: number;
  cached_input?: number;
  cache_write?: number;
  cache_write_1h?: number;
  request?: number;
  tiers?: readonly ModelPriceTierJson[];
  /** Prices (USD per 1M tokens) of an answer the upstream says it served at `speed: "fast"`. */
  fast?: { input: number; output?: number; cached_input?: number; cache_write?: number; cache_write_1h?: number };
  /** Multipliers of the token prices by the answer's `inference_geo` and `service_tier`. */
  geo_multipliers?: Readonly<Record<string, number>>;
  tier_multipliers?: Readonly<Record<string, number>>;
  /** USD per use of a server tool (`web_search`). */
  per_call?: Readonly<Record<string, number>>;
};

/**
 * One entry of GET /v1/models (and GET /v1/models/{id}): one body both the OpenAI and the Anthropic SDKs
 * read (product.md §14) — OpenAI's `object`, `created`, `owned_by`; Anthropic's `type: "model"`,
 * `display_name`, `created_at` — and the gateway's own fields. The model's kind is `model_type`
 * (`type` is Anthropic's, always "model"; docs/adr/0040-agent-sessions-and-price-modifiers.md).
 */
export type ModelJson = {
  id: string;
  object: 'model';
  /** When the config was loaded, unix seconds. */
  created: number;
  owned_by: string;
  type: 'model';
  /** What the model is called through: chat APIs (chat completions, messages, responses) or embeddings. */
  model_type: 'chat' | 'embedding';
  /** The id: the config names no other. */
  display_name: string;
  /** `created` as RFC 3339 (UTC). */
  created_at: string;
  context_window: number | null;
  max_output_tokens: number | null;
  pricing: ModelPriceJson;
};

/** GET /v1/models: the models in id order; a page of them when `limit`, `after_id` or `before_id` is given. */
export type ModelListJson = {
  object: 'list';
  data: ModelJson[];
  /** More models after this page (before it, when paging with `before_id`). */
  has_more: boolean;
  /** The page's first and last ids (null: an empty page). */
  first_id: string | null;
  last_id: string | null;
};

export type UsageAttemptJson = {
  provider: string;
  status: number;
  duration_ms: number;
};

/**
 * One usage row (product.md §2): one per request that named a valid key, refused and failed ones
 * included. A request refused before an upstream was chosen has no provider, upstream model or usage
 * (`usage_source: "none"`); one naming no model has none. The last five fields are null on rows written
 * before they were recorded.
 */
export type UsageJson = {
  request_id: string;
  time: string;
  key_id: string;
  model: string | null;
  provider: string | null;
  upstream_model: string | null;
  status: number;
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost: number;
  usage_source: 'upstream' | 'estimated' | 'none';
  attempts: UsageAttemptJson[];
  /** The client API the request came through. */
  endpoint: 'chat' | 'embeddings' | 'messages' | 'responses' | null;
  /** The agent session the client named (Claude Code's, Codex's); null: none. */
  session_id: string | null;
  /** The error envelope's `code` when the request failed (`insufficient_balance`, `upstream_error`, ...). */
  error_code: string | null;
  error_message: string | null;
  /** From the request's arrival to its last byte, in milliseconds. */
  duration_ms: number | null;
  /** From the request's arrival to the first token sent (streams), in milliseconds. */
  first_token_ms: number | null;
};

export type UsageGroupingJson = 'key' | 'account' | 'model' | 'provider' | 'endpoint' | 'session' | 'day' | 'hour';

/** One row of a usage summary: the totals of one group. */
export type UsageTotalsJson = {
  /** The key id, model, provider, client API or session id (null: rows without one), or the UTC day's or hour's start as ISO time. */
  group: string | null;
  requests: number;
  /** Requests answered with a status of 400 or above. */
  errors: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost: number;
};

/** GET .../usage/summary: every group in one answer, in the list shape. */
export type UsageSummaryJson = ListPage<UsageTotalsJson> & { group_by: UsageGroupingJson };

export type UnauthenticatedBucketJson = {
  /** The bucket's start. */
  time: string;
  requests: number;
};

/** GET /admin/v1/usage/unauthenticated: requests refused for a missing or unknown key, oldest first. */
export type UnauthenticatedJson = {
  object: 'list';
  group_by: 'minute' | 'hour' | 'day';
  data: UnauthenticatedBucketJson[];
  /** The sum of the buckets' requests. */
  total: number;
};

/** One entry of a key's ledger (GET /admin/v1/keys/{id}/ledger), newest first. */
export type LedgerEntryJson = {
  /** Insertion order. */
  id: number;
  object: 'ledger_entry';
  account_id: string;
  /** null: the account's own top-up or adjustment. */
  key_id: string | null;
  /** topup and adjust move the balance; hold and release move what is held; capture charges a request. */
  kind: 'topup' | 'adjust' | 'hold' | 'capture' | 'release';
  /** Positive, except an adjustment that takes credit away. */
  amount: number;
  /** The request a hold, capture or release is for; a top-up's or adjustment's own operation id. */
  request_id: string;
  note: string | null;
  created_at: string;
};

/** One broken billing invariant (`tollgate audit --json`, GET /admin/v1/audit). */
export type ViolationJson = {
  check: string;
  /** null for an account's check (account_cached_balance, account_vs_keys): account_id names it. */
  key_id: string | null;
  account_id?: string;
  request_id: string | null;
  detail: string;
};

/** One upstream — a (provider, upstream model) pair — as this gateway process sees it. */
export type UpstreamHealthJson = {
  object: 'upstream';
  provider: string;
  kind: string;
  /** false: the provider lacks the api_key its kind needs, so routing never calls this upstream. */
  configured: boolean;
  upstream_model: string;
  /** The client model ids this upstream serves. */
  models: string[];
  cooling: boolean;
  /** null unless cooling. */
  cooling_until: string | null;
  consecutive_failures: number;
  last_error: { status: number; message: string; at: string } | null;
  /** Attempts and failed attempts in the last five minutes. */
  requests_5m: number;
  errors_5m: number;
};

/** GET /admin/v1/providers: every configured upstream, in one answer (no pages). */
export type ProviderHealthJson = { object: 'list'; data: UpstreamHealthJson[] };

/** A redemption code's status (docs/adr/0051-redemption-codes.md); expired and unused are decided now. */
export type CodeStatusJson = 'unused' | 'redeemed' | 'revoked' | 'expired';

/** A redemption code as listings show it: never the code itself, only its prefix. */
export type CodeJson = {
  id: string;
  object: 'redemption_code';
  prefix: string;
  amount: number;
  status: CodeStatusJson;
  /** Only this account may redeem it; null: any. */
  account_id: string | null;
  batch_id: string;
  note: string | null;
  expires_at: string | null;
  created_at: string;
  redeemed_at: string | null;
  redeemed_account_id: string | null;
  redeemed_key_id: string | null;
  revoked_at: string | null;
};

/** A created code: its object and, once (the answer that made it), the code; a replay carries null. */
export type CreatedCodeJson = CodeJson & { code: string | null };

/** POST /admin/v1/codes, `codes create --json`. */
export type CodeBatchJson = {
  object: 'redemption_code_batch';
  batch_id: string;
  count: number;
  amount: number;
  codes: CreatedCodeJson[];
};

/** A revocation: the code (by id), or how many of a batch's codes it revoked. */
export type CodeRevocationJson = {
  object: 'redemption_code_revocation';
  batch_id: string | null;
  id: string | null;
  revoked: number;
};

/** POST /v1/account/redeem: what was credited, to which account, and its money after. */
export type RedemptionJson = {
  object: 'redemption';
  code_id: string;
  prefix: string;
  amount: number;
  account_id: string;
  balance: number;
  available: number;
};

/** One webhook event of the outbox (docs/adr/0052-signed-webhooks.md). */
export type WebhookEventJson = {
  object: 'webhook_event';
  /** The outbox row's id (what resend takes). */
  id: number;
  /** The webhook-id header every attempt carries. */
  message_id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: string;
  status: 'pending' | 'delivered' | 'failed' | 'skipped';
  attempts: number;
  /** When it is tried next (pending only). */
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_error: string | null;
  delivered_at: string | null;
  /** Endpoint URLs that answered 2xx. */
  delivered_to: string[];
};

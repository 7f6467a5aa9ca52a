// The validated, normalised configuration every other room receives (frozen; never the raw YAML).
import type { ServedApi } from '../providers/kinds.js';
import type { BudgetPeriod } from '../billing/budget-period.js';
import type { Nano } from '../billing/money.js';
import type { PriceRates } from '../billing/pricing.js';
import type { TrustProxy } from './trust-proxy.js';

export interface ServerConfig {
  readonly host: string;
  readonly port: number;
  readonly shutdownGraceSeconds: number;
  readonly maxBodyBytes: number;
  readonly maxUpstreamBodyBytes: number;
  /** Until a request's headers must have arrived. */
  readonly headersTimeoutMs: number;
  /** Until a whole request (headers and body) must have arrived; never limits the response. */
  readonly requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept between requests. */
  readonly keepAliveTimeoutMs: number;
  /** How long a stream write may wait for a client that does not read before the stream is ended. */
  readonly writeStallMs: number;
  /** Browser origins allowed to call /v1 (CORS); empty: none. */
  readonly corsOrigins: readonly string[];
  /** Whose X-Forwarded-For gives a request's client address (the access log's `clientIp`); false: nobody's. */
  readonly trustProxy: TrustProxy;
}

/** `metrics:` — GET /metrics; with a token, scrapes must send it as a Bearer token. */
export interface MetricsConfig {
  readonly token: string | undefined;
}

/** `log:` — level and format (undefined: from the environment and the terminal), request bodies. */
export interface LogConfig {
  readonly level: string | undefined;
  readonly format: 'json' | 'pretty' | undefined;
  /** Log each request's body (prompts) and a non-stream chat answer; off by default. */
  readonly bodies: boolean;
}

export interface TimeoutsConfig {
  readonly connectMs: number;
  readonly firstByteMs: number;
  readonly idleMs: number;
  readonly totalMs: number;
}

export interface ProviderConfig {
  readonly id: string;
  readonly kind: string;
  /** Without a trailing slash. */
  readonly baseUrl: string;
  /** scheme://host:port of baseUrl: the only origin the transport will contact for this provider. */
  readonly origin: string;
  /** The path part of baseUrl without a trailing slash ('' or e.g. '/v1'); adapters append their paths. */
  readonly basePath: string;
  /** Empty when none is configured. */
  readonly apiKey: string;
  /** False when its kind needs an api_key and it has none: routing never calls it (ADR 0029). */
  readonly configured: boolean;
  readonly apiVersion: string | undefined;
  readonly retries: number;
  readonly cooldown: { readonly failures: number; readonly seconds: number };
  readonly timeouts: TimeoutsConfig;
  readonly onClientDisconnect: 'abort' | 'drain';
  readonly drainMaxConcurrent: number;
  /** Body fields removed before a request goes to this provider (credentials and endpoints). */
  readonly stripFields: readonly string[];
  /** The client APIs it speaks natively: a request in one of them is forwarded, not translated (product.md §14). */
  readonly serves: readonly ServedApi[];
}

export interface UpstreamRef {
  readonly provider: string;
  /** The model name the upstream knows (an Azure deployment name for azure-openai). */
  readonly model: string;
  readonly weight: number;
}

/** Prices as configured (USD per 1M tokens), for display in the model list. */
export interface DisplayPrice {
  readonly input: number;
  readonly output?: number;
  readonly cached_input?: number;
  readonly cache_write?: number;
  readonly cache_write_1h?: number;
  /** USD per request. */
  readonly request?: number;
  readonly tiers?: ReadonlyArray<PriceSetDisplay & { readonly above_input_tokens: number }>;
  /** Prices of an answer served at `speed: "fast"`. */
  readonly fast?: PriceSetDisplay;
  /** Multipliers of the token prices by the answer's `inference_geo` / `service_tier`. */
  readonly geo_multipliers?: Readonly<Record<string, number>>;
  readonly tier_multipliers?: Readonly<Record<string, number>>;
  /** USD per use of a server tool. */
  readonly per_call?: Readonly<Record<string, number>>;
}

/** One set of token prices as configured, USD per 1M tokens. */
export type PriceSetDisplay = Pick<DisplayPrice, 'input' | 'output' | 'cached_input' | 'cache_write' | 'cache_write_1h'>;

export interface ModelConfig {
  readonly id: string;
  readonly type: 'chat' | 'embedding';
  readonly routing: 'fallback' | 'weighted';
  /** As configured, in config order. */
  readonly upstreams: readonly UpstreamRef[];
  /**
   * The upstreams whose provider is configured (has the api_key its kind needs), in config order: the
   * only ones routing tries. Empty: the model is disabled — not listed, and called it answers as unknown.
   */
  readonly usableUpstreams: readonly UpstreamRef[];
  readonly rates: PriceRates;
  readonly displayPrice: DisplayPrice;
  readonly contextWindow: number | undefined;
  /** Always set for chat models (the hold needs it). */
  readonly maxOutputTokens: number | undefined;
  /** Input tokens a Messages request with tools holds beyond the tools' own text (`tool_overhead_tokens`). */
  readonly toolOverheadTokens: number;
  /** Whether Messages requests may ask for server tools (web_search, mcp_servers, container). */
  readonly allowServerTools: boolean;
}

/** A model that is not offered because no upstream of it can be called. */
export interface DisabledModel {
  readonly model: string;
  /** e.g. "provider openai (kind openai) has no api_key — set OPENAI_API_KEY". */
  readonly reason: string;
}

export interface BillingConfig {
  readonly holdTtlSeconds: number;
  readonly sweepIntervalSeconds: number;
  /** full: a stream holds its whole max output up front; growing: one step at a time (ADR 0020). */
  readonly holdMode: 'full' | 'growing';
  readonly growingStepTokens: number;
  /** The largest answer kept for Idempotency-Key replays (bytes); larger ones are served but not kept. */
  readonly idempotencyMaxBytes: number;
}

/** `limits:`: the defaults for keys without limits of their own (null: no limit). */
export interface LimitsConfig {
  readonly rpm: number | null;
  readonly tpm: number | null;
  readonly maxConcurrent: number | null;
  readonly budget: Nano | null;
  readonly budgetPeriod: BudgetPeriod;
  /** Failed redemptions allowed per credential and per client address in the window (docs/adr/0051-redemption-codes.md). */
  readonly redeemFailures: number;
  readonly redeemWindowSeconds: number;
  /** Requests per account on /v1/account in any rolling 60 s; null: unlimited. */
  readonly accountRpm: number | null;
}

/** One `notifications.webhooks` entry: where, signed with what, for which events. */
export interface WebhookEndpoint {
  readonly url: string;
  /** Standard Webhooks form: `whsec_` and the base64 key. */
  readonly secret: string;
  /** Event types, or '*' for all. */
  readonly events: readonly string[] | '*';
}

/** `notifications:` — signed webhooks out (docs/adr/0052-signed-webhooks.md). */
export interface NotificationsConfig {
  readonly webhooks: readonly WebhookEndpoint[];
  /** An account's `balance.low` threshold when its metadata sets none; null: none. */
  readonly balanceLow: Nano | null;
  readonly scanIntervalMs: number;
  /** One delivery's whole time (connect to answer). */
  readonly timeoutMs: number;
  readonly firstRetryMs: number;
  readonly maxRetryMs: number;
  /** After this long from an event's creation (or resend) without delivery it is marked failed. */
  readonly giveUpMs: number;
  /** Settled events (delivered, skipped, failed) older than this are deleted by the scanner. */
  readonly keepMs: number;
}

export interface AdminConfig {
  /** The admin API's bearer token (at least 32 characters); undefined: the admin API is off (404). */
  readonly token: string | undefined;
}

/** `payments.stripe:` — Stripe Checkout top-ups (docs/adr/0050-stripe-top-ups.md). */
export interface StripeConfig {
  readonly secretKey: string;
  readonly webhookSecret: string;
  /** Always 'usd': credit is kept in USD. */
  readonly currency: 'usd';
  /** Nano-dollars, whole cents. */
  readonly minAmount: Nano;
  readonly maxAmount: Nano;
  readonly successUrl: string;
  readonly cancelUrl: string;
  /** Where the SDK sends its calls (tests, stripe-mock); undefined: Stripe's own API. */
  readonly apiBase: URL | undefined;
}

export interface PaymentsConfig {
  /** undefined: no payment provider; /v1/account/checkout and /webhooks/stripe answer 404 payments_disabled. */
  readonly stripe: StripeConfig | undefined;
}

export interface Config {
  /** Absolute path of the file this was read from. */
  readonly path: string;
  readonly server: ServerConfig;
  /** Normalised database URL: `sqlite:/abs/path.db`, `sqlite::memory:` or `postgres://...`. */
  readonly database: string;
  readonly providers: ReadonlyMap<string, ProviderConfig>;
  readonly models: ReadonlyMap<string, ModelConfig>;
  readonly billing: BillingConfig;
  readonly limits: LimitsConfig;
  readonly notifications: NotificationsConfig;
  /** `admin:` — the admin API (product.md §9). */
  readonly admin: AdminConfig;
  /** `payments:` — how customers add credit themselves. */
  readonly payments: PaymentsConfig;
  /** `redis:` — rate-limit counters and cool-downs shared by every gateway; undefined: kept per process. */
  readonly redis: string | undefined;
  readonly metrics: MetricsConfig;
  readonly log: LogConfig;
  /** Models none of whose upstreams can be called, and why (said once by `serve` and `config check`). */
  readonly disabledModels: readonly DisabledModel[];
  /** Other problems that do not stop the gateway (e.g. a keyless provider that a model skips). */
  readonly warnings: readonly string[];
  /** When the config was loaded (unix seconds): the `created` of every model entry. */
  readonly loadedAt: number;
}

// The shape of tollgate.yaml (product.md §3), with its defaults. Unknown keys are errors everywhere.
import { z } from 'zod';
import { LOG_LEVELS } from '../log.js';
import { SERVED_APIS } from '../providers/kinds.js';
import { isProxyAddress, PROXY_ADDRESS_HINT, readTrustProxyText } from './trust-proxy.js';

/** Numbers may arrive as strings after ${VAR} substitution ("port: ${PORT:-8080}"). */
function numeric<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value), schema);
}

const positiveInt = numeric(z.number().int().positive());
const nonNegativeInt = numeric(z.number().int().nonnegative());
const nonNegativeNumber = numeric(z.number().nonnegative());
/** A price stays as written (number or decimal string); billing/money parses it exactly. */
const price = z.union([z.number().nonnegative(), z.string().regex(/^\s*\d*\.?\d+(e-?\d+)?\s*$/i, 'expected a decimal number')]);

/** A browser origin exactly as it sends it: scheme, host and an optional port; no path, no wildcard. */
const corsOrigin = z
  .string()
  .regex(/^https?:\/\/[^/\s*?#]+$/, 'expected an origin such as https://app.example.com (scheme and host, no path or trailing slash)');

/** `server.trust_proxy` (config/trust-proxy.ts): false, true, a number of hops, or proxy addresses. */
const trustProxy = z.preprocess(
  readTrustProxyText,
  z.union(
    [
      z.boolean(),
      z.number().int().nonnegative({ error: 'expected a number of proxy hops, 0 or more' }),
      z.array(z.string().refine(isProxyAddress, PROXY_ADDRESS_HINT)),
    ],
    { error: 'expected false, true, a number of proxy hops, or a list of proxy addresses (IP addresses, CIDR ranges such as 10.0.0.0/8, loopback, linklocal, uniquelocal)' },
  ),
);

const serverSchema = z
  .strictObject({
    host: z.string().min(1).default('127.0.0.1'),
    port: numeric(z.number().int().min(0).max(65535)).default(8080),
    shutdown_grace_seconds: nonNegativeNumber.default(30),
    max_body_bytes: positiveInt.default(33_554_432),
    max_upstream_body_bytes: positiveInt.default(33_554_432),
    headers_timeout_ms: positiveInt.default(10_000),
    request_timeout_ms: positiveInt.default(300_000),
    keep_alive_timeout_ms: positiveInt.default(72_000),
    write_stall_ms: positiveInt.default(30_000),
    cors_origins: z.array(corsOrigin).default([]),
    trust_proxy: trustProxy.default(false),
  })
  .prefault({});

const timeoutsSchema = z
  .strictObject({
    connect_ms: positiveInt.default(5_000),
    first_byte_ms: positiveInt.default(60_000),
    idle_ms: positiveInt.default(60_000),
    total_ms: positiveInt.default(600_000),
  })
  .prefault({});

/**
 * `providers.<id>.strip_fields` by default: body fields naming credentials or endpoints, never forwarded
 * (a proxying upstream such as LiteLLM honours `api_base` in a body: CVE-2024-6587).
 */
export const DEFAULT_STRIP_FIELDS: readonly string[] = Object.freeze([
  'api_key',
  'api_base',
  'base_url',
  'azure_endpoint',
  'extra_headers',
  'headers',
  'organization',
]);

const providerSchema = z.strictObject({
  kind: z.string().min(1),
  base_url: z.url({ protocol: /^https?$/ }).optional(),
  api_key: z.string().optional(),
  api_version: z.string().min(1).optional(),
  retries: nonNegativeInt.default(1),
  cooldown: z
    .strictObject({ failures: positiveInt.default(3), seconds: nonNegativeNumber.default(30) })
    .prefault({}),
  timeouts: timeoutsSchema,
  on_client_disconnect: z.enum(['abort', 'drain']).default('abort'),
  drain_max_concurrent: positiveInt.default(32),
  strip_fields: z.array(z.string().min(1)).default([...DEFAULT_STRIP_FIELDS]),
  // The client APIs this upstream speaks natively (product.md §14); default: its kind's.
  serves: z.array(z.enum(SERVED_APIS)).min(1).optional(),
});

const upstreamSchema = z.strictObject({
  provider: z.string().min(1),
  model: z.string().min(1),
  weight: numeric(z.number().positive()).default(1),
});

/** Long-context prices: those above `above_input_tokens` input tokens. */
const priceTierSchema = z.strictObject({
  above_input_tokens: nonNegativeInt,
  input: price,
  output: price.optional(),
  cached_input: price.optional(),
  cache_write: price.optional(),
  cache_write_1h: price.optional(),
});

/** The prices of an answer served at `speed: "fast"` (product.md §14): a whole price set, no tiers. */
const fastPriceSchema = z.strictObject({
  input: price,
  output: price,
  cached_input: price.optional(),
  cache_write: price.optional(),
  cache_write_1h: price.optional(),
});

/** Response value (an `inference_geo`, a `service_tier`) → multiplier of the token prices; billing/money parses it exactly. */
const multipliers = z.record(z.string().min(1), price);

const modelSchema = z.strictObject({
  type: z.enum(['chat', 'embedding']).default('chat'),
  routing: z.enum(['fallback', 'weighted']).default('fallback'),
  upstreams: z.array(upstreamSchema).min(1),
  price: z.strictObject({
    input: price,
    output: price.optional(),
    cached_input: price.optional(),
    cache_write: price.optional(),
    cache_write_1h: price.optional(),
    /** USD per request, not per 1M tokens. */
    request: price.optional(),
    tiers: z.array(priceTierSchema).optional(),
    // Price modifiers read from the response (config/model-price.ts, billing/pricing.ts).
    fast: fastPriceSchema.optional(),
    geo_multipliers: multipliers.optional(),
    tier_multipliers: multipliers.optional(),
    /** Server tool name → USD per use. */
    per_call: z.record(z.string().min(1), price).optional(),
  }),
  context_window: positiveInt.optional(),
  max_output_tokens: positiveInt.optional(),
  // Anthropic Messages (product.md §14): what a request with tools holds beyond the tools' own text (the
  // tool-use system prompt the upstream adds), and whether server tools (web_search, mcp_servers,
  // container) may be asked for — the upstream bills them apart, so they are refused unless allowed.
  tool_overhead_tokens: nonNegativeInt.default(800),
  allow_server_tools: z.boolean().default(false),
});

/** A per-key limit's default: a positive integer, or absent/null for none. */
const optionalLimit = numeric(z.number().int().positive()).nullable().default(null);

const limitsSchema = z
  .strictObject({
    rpm: optionalLimit,
    tpm: optionalLimit,
    max_concurrent: optionalLimit,
    budget: price.nullable().default(null),
    budget_period: z.enum(['day', 'week', 'month']).default('month'),
    // Redemption codes (docs/adr/0051-redemption-codes.md): failed redeems allowed per key (or account
    // token) and per client address in any rolling window of this many seconds; then 429.
    redeem_failures: numeric(z.number().int().positive()).default(10),
    redeem_window_seconds: numeric(z.number().int().positive()).default(600),
    // Requests per account on /v1/account in any rolling 60 s (null: unlimited): an account token's holder
    // makes keys and reads usage there, and nothing else bounds how often.
    account_rpm: numeric(z.number().int().positive()).nullable().default(300),
  })
  .prefault({});

/** The events a webhook endpoint may ask for (storage/types.ts WEBHOOK_EVENT_TYPES), or '*'. */
const WEBHOOK_EVENT_NAMES = [
  'balance.low',
  'budget.reached',
  'key.expiring',
  'key.revoked',
  'payment.succeeded',
  'payment.refunded',
  'upstream.cooling',
  'upstream.recovered',
] as const;

const positiveNumber = numeric(z.number().positive());

/** `notifications:` — signed webhooks out (docs/adr/0052-signed-webhooks.md). */
const notificationsSchema = z
  .strictObject({
    webhooks: z
      .array(
        z.strictObject({
          url: z.url({ protocol: /^https?$/ }),
          // Checked in load.ts (Standard Webhooks form), so the error names the key without echoing it.
          secret: z.string(),
          events: z.array(z.enum([...WEBHOOK_EVENT_NAMES, '*'])).min(1),
        }),
      )
      .default([]),
    /** An account's `balance.low` threshold unless its metadata's balance_low_usd says otherwise; absent/null: none. */
    balance_low_usd: price.nullable().default(null),
    scan_interval_seconds: positiveNumber.default(60),
    timeout_seconds: positiveNumber.default(10),
    first_retry_seconds: positiveNumber.default(5),
    max_retry_seconds: positiveNumber.default(3600),
    give_up_hours: positiveNumber.default(24),
    /** How long delivered, skipped and failed events stay listed (and resendable) before the scanner deletes them. */
    keep_days: positiveNumber.default(30),
  })
  .prefault({});

/** `payments.stripe` (docs/adr/0050-stripe-top-ups.md): amounts in USD, checked to the cent in load.ts. */
const stripeSchema = z.strictObject({
  secret_key: z.string(),
  webhook_secret: z.string(),
  currency: z.preprocess((value) => (typeof value === 'string' ? value.toLowerCase() : value), z.literal('usd', { error: 'must be usd: credit is kept in USD' })).default('usd'),
  min_amount: price.default(5),
  max_amount: price.default(1000),
  success_url: z.url({ protocol: /^https?$/ }),
  cancel_url: z.url({ protocol: /^https?$/ }),
  // Tests and stripe-mock only: where the SDK sends its API calls instead of https://api.stripe.com.
  api_base: z.url({ protocol: /^https?$/ }).optional(),
});

export const configSchema = z.strictObject({
  server: serverSchema,
  database: z.string().min(1).default('sqlite:./data/tollgate.db'),
  providers: z.record(z.string().min(1), providerSchema),
  models: z.record(z.string().min(1), modelSchema),
  billing: z
    .strictObject({
      hold_ttl_seconds: positiveInt.default(600),
      sweep_interval_seconds: positiveInt.default(30),
      hold_mode: z.enum(['full', 'growing']).default('full'),
      growing_step_tokens: positiveInt.default(1024),
      idempotency_max_bytes: nonNegativeInt.default(1_048_576),
    })
    .prefault({}),
  limits: limitsSchema,
  notifications: notificationsSchema,
  // The admin API's bearer token (product.md §9); absent or empty: /admin answers 404. Its length is
  // checked in load.ts, so the error names the key without echoing the value.
  admin: z.strictObject({ token: z.string().optional() }).prefault({}),
  payments: z.strictObject({ stripe: stripeSchema.optional() }).prefault({}),
  redis: z.url({ protocol: /^rediss?$/ }).optional(),
  metrics: z
    .strictObject({
      // Empty (an unset ${TOLLGATE_METRICS_TOKEN:-}) means no token.
      token: z.preprocess((value) => (value === '' ? undefined : value), z.string().min(16, 'must be at least 16 characters').optional()),
    })
    .prefault({}),
  log: z
    .strictObject({
      level: z.enum(LOG_LEVELS).optional(),
      format: z.enum(['json', 'pretty']).optional(),
      bodies: z.boolean().default(false),
    })
    .prefault({}),
});

export type RawConfig = z.output<typeof configSchema>;

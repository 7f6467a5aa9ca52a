// Reads tollgate.yaml: YAML → ${VAR} substitution → schema → cross-checks → a frozen, typed Config.
// Every error names the key path (or the missing variable) so a user can fix the file at once.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import type { z } from 'zod';
import { MAX_USD, readUsdAmount } from '../billing/money.js';
import { findProviderKind, providerKindNames } from '../providers/kinds.js';
import { ConfigError } from './config-error.js';
import { redactDatabaseUrl } from '../storage/database-url.js';
import { firstVariable, MissingVariableError, substituteEnv } from './env-substitution.js';
import { normalisePrice } from './model-price.js';
import { configSchema, type RawConfig } from './schema.js';
import type { Config, ModelConfig, NotificationsConfig, PaymentsConfig, ProviderConfig } from './types.js';
import { keylessNotices, usableUpstreams } from './usable-upstreams.js';
import { normaliseTrustProxy } from './trust-proxy.js';

export { ConfigError };

/** models["gpt-4.1"].price.output — dots inside keys would make a plain join ambiguous. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(String(segment))) out += out ? `.${String(segment)}` : String(segment);
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out || '(top level)';
}

function describeIssue(issue: z.core.$ZodIssue): string[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => `${formatPath([...issue.path, key])}: unknown key "${key}"`);
  }
  return [`${formatPath(issue.path)}: ${issue.message}`];
}

export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Config {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(path, [`cannot read the file: ${(error as Error).message}`]);
  }
  return parseConfig(text, path, env);
}

export function parseConfig(text: string, path: string, env: NodeJS.ProcessEnv = process.env): Config {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    const message = error instanceof YAMLParseError ? error.message : String(error);
    throw new ConfigError(path, [`not valid YAML: ${message}`]);
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    throw new ConfigError(path, ['the file must be a YAML mapping with providers: and models:']);
  }
  let substituted: unknown;
  try {
    substituted = substituteEnv(document, env);
  } catch (error) {
    if (error instanceof MissingVariableError) {
      throw new ConfigError(path, [
        `${formatPath(error.path)}: environment variable ${error.variable} is not set (write \${${error.variable}:-} to allow it to be empty)`,
      ]);
    }
    throw error;
  }
  const parsed = configSchema.safeParse(substituted);
  if (!parsed.success) throw new ConfigError(path, parsed.error.issues.flatMap(describeIssue));
  return normalise(parsed.data, path, document as RawDocument);
}

/** The YAML as written, before ${VAR} substitution: where a provider's api_key says which variable to set. */
type RawDocument = { providers?: Record<string, { api_key?: unknown } | null> | null };

/** Why a provider cannot be called, naming what to set: its api_key's variable, else the key's path. */
function missingKeyReason(id: string, kind: string, document: RawDocument): string {
  const written = document.providers?.[id]?.api_key;
  const variable = typeof written === 'string' ? firstVariable(written) : undefined;
  return `provider ${id} (kind ${kind}) has no api_key — set ${variable ?? formatPath(['providers', id, 'api_key'])}`;
}

function normaliseProviders(raw: RawConfig, document: RawDocument, problems: string[], missingKey: Map<string, string>): Map<string, ProviderConfig> {
  const providers = new Map<string, ProviderConfig>();
  for (const [id, p] of Object.entries(raw.providers)) {
    const at = (key: string) => formatPath(['providers', id, key]);
    const info = findProviderKind(p.kind);
    if (!info) {
      problems.push(`${at('kind')}: unknown provider kind "${p.kind}" (one of: ${providerKindNames().join(', ')})`);
      continue;
    }
    const baseUrl = (p.base_url ?? info.defaultBaseUrl)?.replace(/\/+$/, '');
    if (!baseUrl) {
      problems.push(`${at('base_url')}: required for kind ${p.kind}`);
      continue;
    }
    if (p.api_version !== undefined && info.defaultApiVersion === undefined) {
      problems.push(`${at('api_version')}: only applies to kind azure-openai`);
    }
    for (const api of p.serves ?? []) {
      if (api !== 'chat' && info.nativePaths[api] === undefined) problems.push(`${at('serves')}: kind ${p.kind} cannot serve ${api}`);
    }
    const apiKey = p.api_key ?? '';
    const configured = apiKey !== '' || !info.apiKeyRequired;
    if (!configured) missingKey.set(id, missingKeyReason(id, p.kind, document));
    const url = new URL(baseUrl);
    providers.set(id, {
      id,
      kind: p.kind,
      baseUrl,
      origin: url.origin,
      basePath: url.pathname.replace(/\/+$/, ''),
      apiKey,
      configured,
      apiVersion: p.api_version ?? info.defaultApiVersion,
      retries: p.retries,
      cooldown: p.cooldown,
      timeouts: {
        connectMs: p.timeouts.connect_ms,
        firstByteMs: p.timeouts.first_byte_ms,
        idleMs: p.timeouts.idle_ms,
        totalMs: p.timeouts.total_ms,
      },
      onClientDisconnect: p.on_client_disconnect,
      drainMaxConcurrent: p.drain_max_concurrent,
      stripFields: Object.freeze([...new Set(p.strip_fields)]),
      serves: Object.freeze([...new Set(p.serves ?? info.serves)]),
    });
  }
  return providers;
}

function normaliseModel(
  id: string,
  m: RawConfig['models'][string],
  raw: RawConfig,
  providers: ReadonlyMap<string, ProviderConfig>,
  problems: string[],
): ModelConfig | undefined {
  const at = (...keys: (string | number)[]) => formatPath(['models', id, ...keys]);
  const before = problems.length;
  m.upstreams.forEach((u, index) => {
    const provider = raw.providers[u.provider];
    if (!provider) {
      problems.push(`${at('upstreams', index, 'provider')}: no provider "${u.provider}" under providers:`);
    } else if (m.type === 'embedding' && findProviderKind(provider.kind)?.embeddings === false) {
      problems.push(`${at('upstreams', index, 'provider')}: provider "${u.provider}" (${provider.kind}) has no embeddings API`);
    }
  });
  if (m.type === 'chat') {
    if (m.price.output === undefined) problems.push(`${at('price', 'output')}: required for chat models`);
    if (m.max_output_tokens === undefined) {
      problems.push(`${at('max_output_tokens')}: required for chat models (it sizes the hold when a request sets no max_tokens)`);
    }
  }
  const price = normalisePrice(m.price, m.type, at, problems);
  if (problems.length > before || !price) return undefined;
  return {
    id,
    type: m.type,
    routing: m.routing,
    upstreams: m.upstreams,
    usableUpstreams: usableUpstreams(m.upstreams, providers),
    rates: price.rates,
    displayPrice: price.display,
    contextWindow: m.context_window,
    maxOutputTokens: m.max_output_tokens,
    toolOverheadTokens: m.tool_overhead_tokens,
    allowServerTools: m.allow_server_tools,
  };
}

function normaliseDatabase(url: string, configDir: string, problems: string[]): string {
  if (url === 'sqlite::memory:') return url;
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (!file) problems.push('database: sqlite: needs a file path, e.g. sqlite:./data/tollgate.db');
    return `sqlite:${isAbsolute(file) ? file : resolve(configDir, file)}`;
  }
  if (/^postgres(ql)?:\/\//.test(url)) return url;
  problems.push(`database: expected sqlite:PATH or postgres://..., got "${redactDatabaseUrl(url)}"`);
  return url;
}

/** A Standard Webhooks secret: `whsec_` and base64 of 24 to 64 random bytes. */
const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

function normaliseNotifications(raw: RawConfig['notifications'], problems: string[]): NotificationsConfig {
  const seen = new Set<string>();
  raw.webhooks.forEach((hook, index) => {
    const bytes = WEBHOOK_SECRET.test(hook.secret) ? Buffer.from(hook.secret.slice('whsec_'.length), 'base64').length : 0;
    if (bytes < 24 || bytes > 64) {
      problems.push(`notifications.webhooks[${index}].secret: must be whsec_ and the base64 of 24 to 64 random bytes; e.g. echo whsec_$(openssl rand -base64 32)`);
    }
    if (seen.has(hook.url)) problems.push(`notifications.webhooks[${index}].url: ${hook.url} is configured twice`);
    seen.add(hook.url);
  });
  const reading = raw.balance_low_usd === null ? null : readUsdAmount(raw.balance_low_usd);
  if (reading?.ok === false) problems.push('notifications.balance_low_usd: must be a USD amount with at most 9 decimal places, at most the ledger maximum');
  return {
    webhooks: raw.webhooks.map((hook) => ({ url: hook.url, secret: hook.secret, events: hook.events.includes('*') ? '*' : [...new Set(hook.events)] })),
    balanceLow: reading?.ok ? reading.nano : null,
    scanIntervalMs: raw.scan_interval_seconds * 1000,
    timeoutMs: raw.timeout_seconds * 1000,
    firstRetryMs: raw.first_retry_seconds * 1000,
    maxRetryMs: raw.max_retry_seconds * 1000,
    giveUpMs: raw.give_up_hours * 3_600_000,
    keepMs: raw.keep_days * 86_400_000,
  };
}

/** The shortest admin token accepted: a guessable token would hand out money. */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

function normalise(raw: RawConfig, path: string, document: RawDocument): Config {
  const problems: string[] = [];
  const missingKey = new Map<string, string>();
  const providers = normaliseProviders(raw, document, problems, missingKey);
  const models = new Map<string, ModelConfig>();
  for (const [id, m] of Object.entries(raw.models)) {
    const model = normaliseModel(id, m, raw, providers, problems);
    if (model) models.set(id, model);
  }
  const { disabled, warnings } = keylessNotices(models.values(), missingKey);
  const database = normaliseDatabase(raw.database, dirname(path), problems);
  // Node refuses a headers timeout longer than the request timeout (the headers are part of the request).
  if (raw.server.headers_timeout_ms > raw.server.request_timeout_ms) {
    problems.push(`server.headers_timeout_ms: must not exceed server.request_timeout_ms (${raw.server.request_timeout_ms})`);
  }
  const budgetReading = raw.limits.budget === null ? null : readUsdAmount(raw.limits.budget);
  const budget = budgetReading === null ? null : budgetReading.ok ? budgetReading.nano : undefined;
  if (budgetReading?.ok === false) {
    problems.push(
      budgetReading.reason === 'over_maximum'
        ? `limits.budget: must be at most ${MAX_USD} USD, the largest amount the ledger holds`
        : 'limits.budget: must be a USD amount with at most 9 decimal places',
    );
  }
  // Empty counts as unset, so `${TOLLGATE_ADMIN_TOKEN:-}` leaves the admin API off when the variable is.
  const adminToken = raw.admin.token === undefined || raw.admin.token === '' ? undefined : raw.admin.token;
  if (adminToken !== undefined && adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    problems.push(`admin.token: must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters (it has ${adminToken.length}); e.g. openssl rand -hex 32`);
  }
  const notifications = normaliseNotifications(raw.notifications, problems);
  const payments = normalisePayments(raw, problems);
  if (problems.length > 0) throw new ConfigError(path, problems);
  return Object.freeze({
    path,
    server: {
      host: raw.server.host,
      port: raw.server.port,
      shutdownGraceSeconds: raw.server.shutdown_grace_seconds,
      maxBodyBytes: raw.server.max_body_bytes,
      maxUpstreamBodyBytes: raw.server.max_upstream_body_bytes,
      headersTimeoutMs: raw.server.headers_timeout_ms,
      requestTimeoutMs: raw.server.request_timeout_ms,
      keepAliveTimeoutMs: raw.server.keep_alive_timeout_ms,
      writeStallMs: raw.server.write_stall_ms,
      corsOrigins: raw.server.cors_origins,
      trustProxy: normaliseTrustProxy(raw.server.trust_proxy),
    },
    database,
    providers,
    models,
    billing: {
      holdTtlSeconds: raw.billing.hold_ttl_seconds,
      sweepIntervalSeconds: raw.billing.sweep_interval_seconds,
      holdMode: raw.billing.hold_mode,
      growingStepTokens: raw.billing.growing_step_tokens,
      idempotencyMaxBytes: raw.billing.idempotency_max_bytes,
    },
    limits: {
      rpm: raw.limits.rpm,
      tpm: raw.limits.tpm,
      maxConcurrent: raw.limits.max_concurrent,
      budget: budget ?? null,
      budgetPeriod: raw.limits.budget_period,
      redeemFailures: raw.limits.redeem_failures,
      redeemWindowSeconds: raw.limits.redeem_window_seconds,
      accountRpm: raw.limits.account_rpm,
    },
    notifications,
    admin: { token: adminToken },
    payments,
    redis: raw.redis,
    metrics: { token: raw.metrics.token },
    log: { level: raw.log.level, format: raw.log.format, bodies: raw.log.bodies },
    disabledModels: Object.freeze(disabled),
    warnings: Object.freeze(warnings),
    loadedAt: Math.floor(Date.now() / 1000),
  });
}

/** Stripe's own bounds of one Checkout payment in USD: at least $0.50, at most $999,999.99. */
const STRIPE_MIN_CENTS = 50;
const STRIPE_MAX_CENTS = 99_999_999;
const NANO_PER_CENT = 10_000_000;

function normalisePayments(raw: RawConfig, problems: string[]): PaymentsConfig {
  const stripe = raw.payments.stripe;
  if (!stripe) return { stripe: undefined };
  const at = (key: string): string => `payments.stripe.${key}`;
  // An unset ${STRIPE_SECRET_KEY:-} is a mistake here, not "off": remove payments.stripe to turn payments off.
  if (stripe.secret_key === '') problems.push(`${at('secret_key')}: empty (is its environment variable set?)`);
  else if (!/^(sk|rk)_/.test(stripe.secret_key)) problems.push(`${at('secret_key')}: expected a Stripe secret key (sk_test_..., sk_live_... or a restricted rk_...)`);
  if (stripe.webhook_secret === '') problems.push(`${at('webhook_secret')}: empty (is its environment variable set?)`);
  else if (!stripe.webhook_secret.startsWith('whsec_')) problems.push(`${at('webhook_secret')}: expected the endpoint's signing secret (whsec_...)`);
  const cents = (key: 'min_amount' | 'max_amount'): number | undefined => {
    const reading = readUsdAmount(stripe[key]);
    const nano = reading.ok ? reading.nano : undefined;
    if (nano === undefined || nano % NANO_PER_CENT !== 0 || nano / NANO_PER_CENT < STRIPE_MIN_CENTS || nano / NANO_PER_CENT > STRIPE_MAX_CENTS) {
      problems.push(`${at(key)}: expected a USD amount in whole cents from 0.50 to 999999.99 (Stripe's bounds of one payment)`);
      return undefined;
    }
    return nano;
  };
  const minAmount = cents('min_amount');
  const maxAmount = cents('max_amount');
  if (minAmount !== undefined && maxAmount !== undefined && minAmount > maxAmount) problems.push(`${at('min_amount')}: must not exceed payments.stripe.max_amount`);
  return {
    stripe: {
      secretKey: stripe.secret_key,
      webhookSecret: stripe.webhook_secret,
      currency: stripe.currency,
      minAmount: minAmount ?? 0,
      maxAmount: maxAmount ?? 0,
      successUrl: stripe.success_url,
      cancelUrl: stripe.cancel_url,
      apiBase: stripe.api_base === undefined ? undefined : new URL(stripe.api_base),
    },
  };
}

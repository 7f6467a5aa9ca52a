// The Prometheus metrics (product.md §10): the only place a metric name is written. Every label value
// is a config name (model id, provider id, upstream model) or a fixed enum; a model a client names that
// the config does not know is counted as "unknown", so no client can grow the series. The per-model
// series are created at start-up (they read 0 until used), so the hot path only looks them up.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Nano } from '../billing/money.js';
import type { Config, ProviderConfig } from '../config/types.js';
import type { LimitName } from '../limits/rate-limiter.js';
import { joinClusterMetrics } from './cluster-metrics.js';
import { withTimeout } from './readiness.js';
import type { Endpoint, RequestOutcome } from './request-outcome.js';

/** The label of a model the config does not know (or a request without one). */
export const UNKNOWN_MODEL = 'unknown';
/** The provider label of a request that no upstream was chosen for (refused, invalid). */
export const NO_PROVIDER = 'none';

export type { Endpoint };

const TOKEN_KINDS = ['input', 'cached_input', 'cache_write', 'output', 'reasoning'] as const;
const ATTEMPT_OUTCOMES = ['ok', 'rate_limited', 'timeout', 'rejected', 'error', 'client_gone'] as const;
type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];
const LIMITS: readonly LimitName[] = ['rpm', 'tpm', 'max_concurrent'];

/** Full responses: from a few ms (a refusal) to long streams. */
const DURATION_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const FIRST_TOKEN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60];
const LEDGER_BUCKETS = [0.0002, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** What the scrape-time gauges read (the database and the cool-down table); each may fail or be slow. */
export interface MetricsSources {
  activeHolds(): Promise<{ readonly count: number; readonly amount: Nano }>;
  isCooling(provider: ProviderConfig, upstreamModel: string): boolean;
  /** Webhook events not yet delivered, failed or skipped (every gateway on this database). */
  pendingWebhooks?(): Promise<number>;
}

interface ModelSeries {
  readonly duration: { observe(value: number): void };
  readonly firstToken: { observe(value: number): void };
  readonly tokens: { readonly [K in (typeof TOKEN_KINDS)[number]]: { inc(value: number): void } };
  /** Charged nano-dollars, exact; turned into USD at scrape time. */
  chargedNano: number;
}

/** How long a scrape waits for the database before reporting the holds gauges as they were. */
const SOURCE_TIMEOUT_MS = 1_000;

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly contentType = this.registry.contentType;
  private readonly models = new Map<string, ModelSeries>();
  private readonly unknownModel: ModelSeries;
  private readonly requests: Counter<'endpoint' | 'model' | 'provider' | 'status'>;
  private readonly attempts = new Map<string, Record<AttemptOutcome, { inc(): void }>>();
  private readonly rateLimitedByLimit = new Map<LimitName, { inc(): void }>();
  private readonly ledgerWrites: Histogram;
  private readonly unauthenticated: Counter;
  private readonly droppedRows: Counter;
  private readonly webhookDeliveries: Counter<'outcome'>;

  /** Under `serve --workers`: asks the primary for every worker's metrics, aggregated. */
  private readonly gatherCluster: (() => Promise<string>) | undefined;

  constructor(config: Config, sources: MetricsSources, options: { readonly clustered?: boolean } = {}) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'tollgate_requests_total',
      help: 'Client API requests by endpoint, model, serving provider and the status the client got (499: it went away).',
      labelNames: ['endpoint', 'model', 'provider', 'status'],
      registers,
    });
    const duration = new Histogram({
      name: 'tollgate_request_duration_seconds',
      help: 'Chat and embedding requests, arrival to the last byte (a stream: its whole length).',
      labelNames: ['model'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    const firstToken = new Histogram({
      name: 'tollgate_time_to_first_token_seconds',
      help: 'Streamed chat requests: arrival to the first chunk sent to the client.',
      labelNames: ['model'],
      buckets: FIRST_TOKEN_BUCKETS,
      registers,
    });
    const tokens = new Counter({
      name: 'tollgate_tokens_total',
      help: 'Billed tokens by model and kind; the kinds are disjoint (input excludes cached_input, output excludes reasoning).',
      labelNames: ['model', 'kind'],
      registers,
    });
    const models = this.models;
    new Counter({
      name: 'tollgate_charged_usd_total',
      help: 'USD charged to keys, by model.',
      labelNames: ['model'],
      registers,
      collect() {
        // Summed exactly in nano-dollars; converted once here, so the total is never a sum of rounded floats.
        this.reset();
        for (const [id, series] of models) this.inc({ model: id }, series.chargedNano / 1e9);
      },
    });
    const seriesFor = (model: string): ModelSeries => {
      duration.zero({ model });
      firstToken.zero({ model });
      return {
        duration: duration.labels(model),
        firstToken: firstToken.labels(model),
        tokens: Object.fromEntries(TOKEN_KINDS.map((kind) => [kind, zeroed(tokens.labels(model, kind))])) as ModelSeries['tokens'],
        chargedNano: 0,
      };
    };
    for (const id of config.models.keys()) models.set(id, seriesFor(id));
    this.unknownModel = seriesFor(UNKNOWN_MODEL);

    const attempts = new Counter({
      name: 'tollgate_upstream_attempts_total',
      help: 'Upstream attempts (retries and fallbacks each count) by provider and outcome.',
      labelNames: ['provider', 'outcome'],
      registers,
    });
    for (const id of config.providers.keys()) {
      this.attempts.set(id, Object.fromEntries(ATTEMPT_OUTCOMES.map((o) => [o, zeroed(attempts.labels(id, o))])) as Record<AttemptOutcome, { inc(): void }>);
    }
    const rateLimited = new Counter({
      name: 'tollgate_rate_limited_total',
      help: "Requests refused by a key's rate limits (429 rate_limited), by the limit that refused.",
      labelNames: ['limit'],
      registers,
    });
    for (const limit of LIMITS) this.rateLimitedByLimit.set(limit, zeroed(rateLimited.labels(limit)));
    this.ledgerWrites = new Histogram({
      name: 'tollgate_ledger_write_seconds',
      help: 'Ledger writes (hold, settle, release, renew), each one transaction.',
      buckets: LEDGER_BUCKETS,
      registers,
    });
    this.unauthenticated = new Counter({
      name: 'tollgate_unauthenticated_requests_total',
      help: 'Client API requests refused for want of a valid key (401 invalid_api_key): missing, unknown, revoked or expired.',
      registers,
    });
    this.droppedRows = new Counter({
      name: 'tollgate_usage_rows_dropped_total',
      help: 'Usage rows of requests that moved no money (refusals, quotes) that could not be written: the database was away or too slow.',
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'tollgate_webhook_deliveries_total',
      help: 'Webhook POSTs to configured endpoints, by outcome: ok (2xx) or failed (another status, a timeout, no connection).',
      labelNames: ['outcome'],
      registers,
    });
    zeroed(this.webhookDeliveries.labels({ outcome: 'ok' }));
    zeroed(this.webhookDeliveries.labels({ outcome: 'failed' }));
    this.registerScrapeGauges(config, sources);
    this.gatherCluster = options.clustered ? joinClusterMetrics(this.registry) : undefined;
  }

  /** The one call per client API request, once it has ended (its response closed, its money settled). */
  requestEnded(outcome: RequestOutcome): void {
    const endpoint = outcome.metricsLabel ?? 'other';
    const { requestedModel, billed } = outcome;
    const known = typeof requestedModel === 'string' ? this.models.get(requestedModel) : undefined;
    const series = known ?? this.unknownModel;
    this.requests.inc({
      endpoint,
      model: known ? (requestedModel as string) : UNKNOWN_MODEL,
      provider: billed?.provider ?? NO_PROVIDER,
      status: String(outcome.status),
    });
    if (outcome.endpoint !== undefined) series.duration.observe(outcome.durationMs / 1000);
    if (outcome.firstTokenAt !== undefined) series.firstToken.observe((outcome.firstTokenAt - outcome.startedAt) / 1000);
    if (outcome.rateLimited) this.rateLimitedByLimit.get(outcome.rateLimited)?.inc();
    if (outcome.error?.code === 'invalid_api_key') this.unauthenticated.inc();
    if (!billed) return;
    const cached = Math.min(billed.cachedInputTokens, billed.inputTokens);
    // Cache writes are part of the prompt, priced apart (product.md §13): counted as their own kind.
    const writes = Math.min(billed.cacheWriteTokens ?? 0, billed.inputTokens - cached);
    const reasoning = Math.min(billed.reasoningTokens, billed.outputTokens);
    if (billed.inputTokens > cached + writes) series.tokens.input.inc(billed.inputTokens - cached - writes);
    if (cached > 0) series.tokens.cached_input.inc(cached);
    if (writes > 0) series.tokens.cache_write.inc(writes);
    if (billed.outputTokens > reasoning) series.tokens.output.inc(billed.outputTokens - reasoning);
    if (reasoning > 0) series.tokens.reasoning.inc(reasoning);
    series.chargedNano += billed.cost;
    for (const attempt of billed.attempts) this.attempts.get(attempt.provider)?.[attemptOutcome(attempt.status)].inc();
  }

  /** Usage rows the outcome recorder could not write. */
  usageRowsDropped(rows: number): void {
    this.droppedRows.inc(rows);
  }

  /** One webhook POST's outcome. */
  delivery(outcome: 'ok' | 'failed'): void {
    this.webhookDeliveries.inc({ outcome });
  }

  /** One ledger write took `seconds`. */
  ledgerWrite(seconds: number): void {
    this.ledgerWrites.observe(seconds);
  }

  /** The exposition, in Prometheus text format (of the whole gateway, under `serve --workers`). */
  exposition(): Promise<string> {
    return this.gatherCluster ? this.gatherCluster() : this.registry.metrics();
  }

  private registerScrapeGauges(config: Config, sources: MetricsSources): void {
    const registers = [this.registry];
    let holds: Promise<{ count: number; amount: Nano } | undefined> | undefined;
    // Both gauges read one query per scrape; a database that does not answer in time leaves them as they were.
    const readHolds = () =>
      (holds ??= withTimeout(sources.activeHolds(), SOURCE_TIMEOUT_MS)
        .catch(() => undefined)
        .finally(() => setImmediate(() => (holds = undefined))));
    new Gauge({
      name: 'tollgate_holds_active',
      help: 'Holds open in the ledger now (every gateway on this database).',
      registers,
      // Every worker reads the same database: one value, not the sum of N copies.
      aggregator: 'max',
      async collect() {
        const read = await readHolds();
        if (read) this.set(read.count);
      },
    });
    new Gauge({
      name: 'tollgate_held_usd',
      help: 'USD held by open holds now (every gateway on this database).',
      registers,
      aggregator: 'max',
      async collect() {
        const read = await readHolds();
        if (read) this.set(read.amount / 1e9);
      },
    });
    const pendingWebhooks = sources.pendingWebhooks;
    if (pendingWebhooks) {
      new Gauge({
        name: 'tollgate_webhook_outbox_pending',
        help: 'Webhook events waiting to be delivered (every gateway on this database).',
        registers,
        aggregator: 'max',
        async collect() {
          const pending = await withTimeout(pendingWebhooks(), SOURCE_TIMEOUT_MS).catch(() => undefined);
          if (pending !== undefined) this.set(pending);
        },
      });
    }
    const upstreams: { provider: ProviderConfig; model: string }[] = [];
    const seen = new Set<string>();
    for (const model of config.models.values()) {
      for (const upstream of model.upstreams) {
        const provider = config.providers.get(upstream.provider);
        const id = `${upstream.provider}\u0000${upstream.model}`;
        if (!provider || seen.has(id)) continue;
        seen.add(id);
        upstreams.push({ provider, model: upstream.model });
      }
    }
    new Gauge({
      name: 'tollgate_upstream_cooling',
      help: '1 while an upstream (provider, upstream model) is cooling down after failures, else 0.',
      labelNames: ['provider', 'upstream_model'],
      registers,
      // 1 when any worker is skipping it.
      aggregator: 'max',
      collect() {
        for (const u of upstreams) this.set({ provider: u.provider.id, upstream_model: u.model }, sources.isCooling(u.provider, u.model) ? 1 : 0);
      },
    });
  }
}

/** A counter's series, shown at 0 from the start (a dashboard's rate() needs the series to exist). */
function zeroed<T extends { inc(value?: number): void }>(series: T): T {
  series.inc(0);
  return series;
}

function attemptOutcome(status: number): AttemptOutcome {
  if (status < 300) return 'ok';
  if (status === 429) return 'rate_limited';
  if (status === 408 || status === 504) return 'timeout';
  if (status === 499) return 'client_gone';
  if (status < 500) return 'rejected';
  return 'error';
}

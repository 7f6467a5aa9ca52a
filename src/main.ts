// Composition root: config → store → ledger, transport, sweeper → HTTP server; and graceful shutdown.
import type { FastifyInstance } from 'fastify';
import { loadTokenizer } from './tokens/bounded-count.js';
import { HoldSweeper } from './billing/hold-sweeper.js';
import { Ledger } from './billing/ledger.js';
import type { Config, ProviderConfig } from './config/types.js';
import { logConfigWarnings } from './config/usable-upstreams.js';
import { CLIENT_APIS } from './api/index.js';
import { buildServer } from './http/server.js';
import type { Logger } from './log.js';
import { openDatabase } from './open-database.js';
import { listenError } from './startup-error.js';
import type { Store } from './storage/types.js';
import { UpstreamTransport } from './upstream/transport.js';
import { DrainSlots } from './pipeline/drain-slots.js';
import { InFlightRequests } from './pipeline/in-flight.js';
import { openRateLimiter, openRedeemLimiter } from './limits/open-limiter.js';
import { RedeemGuard } from './limits/redeem-guard.js';
import { UpstreamHealth } from './routing/upstream-health.js';
import { GatewayMetrics } from './telemetry/metrics.js';
import { OutcomeRecorder } from './telemetry/outcome-recorder.js';
import { Reachability } from './telemetry/reachability.js';
import { collectStartupGarbage, releaseYoungGeneration } from './heap-growth.js';
import { WebhookDeliverer } from './notifications/deliverer.js';
import { NotificationScanner } from './notifications/scanner.js';
import { upstreamEvents } from './notifications/upstream-events.js';

export interface RunningGateway {
  /** Base URL clients use, ending in /v1. */
  readonly url: string;
  readonly server: FastifyInstance;
  readonly store: Store;
  /** Stops accepting, lets in-flight requests finish (up to shutdown_grace_seconds), then closes. */
  close(): Promise<void>;
}

export interface StartOptions {
  readonly host?: string;
  readonly port?: number;
  readonly log: Logger;
  /** One of `serve --workers` processes: the primary announces the gateway once all of them listen. */
  readonly worker?: boolean;
}

export async function startGateway(config: Config, options: StartOptions): Promise<RunningGateway> {
  const { log } = options;
  // The database and Redis going away and coming back: one line each way (telemetry/reachability.ts).
  const database = new Reachability({
    log,
    dependency: 'database',
    url: config.database,
    // The word /ready uses (database_unavailable): PostgreSQL unreachable, or SQLite locked or read-only.
    downMessage: 'database unavailable: requests that need it get 503 ledger_unavailable until it answers',
    upMessage: 'database answers again',
  });
  // A blocked write stalls the event loop while it waits, so the server gives up after 1 s (503). A
  // database that cannot be opened is a startup error, said once by the CLI: not a warn line too.
  let opened = false;
  const reachability = { failed: (error: unknown) => opened && database.failed(error), succeeded: () => database.succeeded() };
  const store = await openDatabase(config.database, { busyTimeoutMs: 1_000, reachability });
  opened = true;
  const transport = new UpstreamTransport();
  const health = new UpstreamHealth();
  const sources = {
    activeHolds: () => store.probe.activeHolds(),
    isCooling: (provider: ProviderConfig, upstreamModel: string) => health.isCooling({ provider, upstreamModel }),
    pendingWebhooks: () => store.webhooks.pendingCount(),
  };
  const metrics = new GatewayMetrics(config, sources, { clustered: options.worker === true });
  const ledger = new Ledger(store.ledger, config.billing, config.limits, log, (seconds) => metrics.ledgerWrite(seconds), () => database.reachable);
  // Signed webhooks out (docs/adr/0052-signed-webhooks.md): every process delivers and scans; the
  // outbox's lease and the scan's conditional markers make that safe across workers and gateways.
  const deliverer = new WebhookDeliverer(store.webhooks, config.notifications, log, metrics);
  const scanner = new NotificationScanner(store.webhooks, config, log);
  health.onTransition(upstreamEvents(store.webhooks, log));
  const sweeper = new HoldSweeper(store.ledger, store.idempotency, config.billing.sweepIntervalSeconds, log, store.responses);
  const outcomes = new OutcomeRecorder(store.usage, log, { dropped: (rows) => metrics.usageRowsDropped(rows) });
  const inFlight = new InFlightRequests();
  const drains = new DrainSlots();
  // Loaded only when configured, like the Redis rate limiter and the shared cool-downs.
  const redis = config.redis ? (await import('./telemetry/redis-reachability.js')).redisReachability(config.redis, log) : undefined;
  const limiter = await openRateLimiter(config, log, redis);
  const redeemGuard = new RedeemGuard(await openRedeemLimiter(config, log, redis), config.limits.redeemFailures);
  const cooldowns = config.redis && redis ? new (await import('./routing/shared-cooldowns.js')).SharedCooldowns(config.redis, health, log, redis) : undefined;
  let closing = false;
  const server = buildServer({
    config,
    ledger,
    transport,
    log,
    health,
    drains,
    limiter,
    keys: store.keys,
    idempotency: store.idempotency,
    responseState: store.responses,
    store,
    inFlight,
    isClosing: () => closing,
    metrics,
    probe: store.probe,
    outcomes,
    redeemGuard,
  }, CLIENT_APIS);
  // The tokenizer's vocabulary (5 MB, tens of ms to read) now, not in the first request's time.
  loadTokenizer();
  // Startup's allocations are done: its garbage goes now, not in a request's time, and from here on
  // the young generation grows with the load (docs/adr/0025-heap-growth.md).
  collectStartupGarbage();
  releaseYoungGeneration();
  const host = options.host ?? config.server.host;
  try {
    await server.listen({ host, port: options.port ?? config.server.port });
  } catch (error) {
    await outcomes.close();
    database.close();
    redis?.close();
    await transport.close();
    await limiter.close();
    await redeemGuard.close();
    await cooldowns?.close();
    await store.close();
    throw listenError(host, options.port ?? config.server.port, error);
  }
  sweeper.start();
  deliverer.start();
  scanner.start();
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : config.server.port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`;
  if (!options.worker) logConfigWarnings(config, log);
  log.info({ url, models: config.models.size, providers: config.providers.size }, options.worker ? 'worker listening' : 'tollgate listening');

  let closed: Promise<void> | undefined;
  // SIGTERM: refuse new work (503 on open connections; the listener closes), give in-flight requests
  // up to shutdown_grace_seconds, then cut what is left (those settle as client disconnects), wait
  // for every settlement, and only then close the database.
  async function shutDown(): Promise<void> {
    closing = true;
    const stopped = server.close();
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([inFlight.drained(), new Promise<void>((resolve) => (grace = setTimeout(resolve, config.server.shutdownGraceSeconds * 1000)))]);
    clearTimeout(grace);
    // Cutting the connections would start drains; the process is leaving, so they settle as estimates.
    drains.shutdown();
    server.server.closeAllConnections();
    try {
      await stopped;
      await inFlight.drained();
    } finally {
      await sweeper.stop();
      health.onTransition(undefined);
      await scanner.stop();
      await deliverer.stop();
      await outcomes.close();
      await transport.close();
      // Connections now close on purpose: not news for the log.
      redis?.close();
      await limiter.close();
      await redeemGuard.close();
      await cooldowns?.close();
      database.close();
      await store.close();
    }
  }
  return {
    url,
    server,
    store,
    close: () => (closed ??= shutDown()),
  };
}

// Composition root: config → store → ledger, transport, sweeper → HTTP server; and graceful shutdown.
import type { FastifyInstance } from 'fastify';
import { loadTokenizer } from './billing/bounded-count.js';
import { HoldSweeper } from './billing/hold-sweeper.js';
import { Ledger } from './billing/ledger.js';
import type { Config, ProviderConfig } from './config/types.js';
import { logConfigWarnings } from './config/usable-upstreams.js';
import { buildServer } from './http/server.js';
import type { Logger } from './log.js';
import { openDatabase } from './open-database.js';
import { listenError } from './startup-error.js';
import type { Store } from './storage/types.js';
import { UpstreamTransport } from './upstream/transport.js';
import { DrainSlots } from './pipeline/drain-slots.js';
import { InFlightRequests } from './pipeline/in-flight.js';
import { openRateLimiter } from './limits/open-limiter.js';
import { UpstreamHealth } from './routing/upstream-health.js';
import { GatewayMetrics } from './telemetry/metrics.js';
import { OutcomeRecorder } from './telemetry/outcome-recorder.js';
import { collectStartupGarbage, releaseYoungGeneration } from './heap-growth.js';

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
  // A blocked write stalls the event loop while it waits, so the server gives up after 1 s (503).
  const store = await openDatabase(config.database, { busyTimeoutMs: 1_000 });
  const transport = new UpstreamTransport();
  const health = new UpstreamHealth();
  const sources = {
    activeHolds: () => store.probe.activeHolds(),
    isCooling: (provider: ProviderConfig, upstreamModel: string) => health.isCooling({ provider, upstreamModel }),
  };
  const metrics = new GatewayMetrics(config, sources, { clustered: options.worker === true });
  const ledger = new Ledger(store.ledger, config.billing, config.limits, log, (seconds) => metrics.ledgerWrite(seconds));
  const sweeper = new HoldSweeper(store.ledger, store.idempotency, config.billing.sweepIntervalSeconds, log);
  const outcomes = new OutcomeRecorder(store.usage, log, { dropped: (rows) => metrics.usageRowsDropped(rows) });
  const inFlight = new InFlightRequests();
  const drains = new DrainSlots();
  const limiter = await openRateLimiter(config, log);
  // Loaded only when configured, like the Redis rate limiter.
  const cooldowns = config.redis ? new (await import('./routing/shared-cooldowns.js')).SharedCooldowns(config.redis, health, log) : undefined;
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
    store,
    inFlight,
    isClosing: () => closing,
    metrics,
    probe: store.probe,
    outcomes,
  });
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
    await transport.close();
    await limiter.close();
    await cooldowns?.close();
    await store.close();
    throw listenError(host, options.port ?? config.server.port, error);
  }
  sweeper.start();
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
      await outcomes.close();
      await transport.close();
      await limiter.close();
      await cooldowns?.close();
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

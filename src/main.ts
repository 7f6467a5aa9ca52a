// Composition root: config → store → ledger, transport, sweeper → HTTP server; and graceful shutdown.
import type { FastifyInstance } from 'fastify';
import { HoldSweeper } from './billing/hold-sweeper.js';
import { Ledger } from './billing/ledger.js';
import type { Config } from './config/types.js';
import { buildServer } from './http/server.js';
import type { Logger } from './log.js';
import { openStore } from './storage/open-store.js';
import type { Store } from './storage/types.js';
import { UpstreamTransport } from './upstream/transport.js';

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
}

export async function startGateway(config: Config, options: StartOptions): Promise<RunningGateway> {
  const { log } = options;
  // A blocked write stalls the event loop while it waits, so the server gives up after 1 s (503).
  const store = openStore(config.database, { busyTimeoutMs: 1_000 });
  const transport = new UpstreamTransport();
  const ledger = new Ledger(store.ledger, config.billing, log);
  const sweeper = new HoldSweeper(store.ledger, config.billing.sweepIntervalSeconds, log);
  let closing = false;
  const server = buildServer({ config, ledger, transport, log, keys: store.keys, isClosing: () => closing });
  const host = options.host ?? config.server.host;
  await server.listen({ host, port: options.port ?? config.server.port });
  sweeper.start();
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : config.server.port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`;
  for (const warning of config.warnings) log.warn(warning);
  log.info({ url, models: config.models.size, providers: config.providers.size }, 'tollgate listening');

  let closed: Promise<void> | undefined;
  async function shutDown(): Promise<void> {
    closing = true;
    const grace = setTimeout(() => server.server.closeAllConnections(), config.server.shutdownGraceSeconds * 1000);
    try {
      await server.close();
    } finally {
      clearTimeout(grace);
      await sweeper.stop();
      await transport.close();
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

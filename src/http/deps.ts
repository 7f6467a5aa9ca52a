// What the HTTP server needs from the rest of the gateway, and how a client API mounts its routes.
import type { FastifyInstance } from 'fastify';
import type { RedeemGuard } from '../limits/redeem-guard.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import type { InFlightRequests } from '../pipeline/in-flight.js';
import type { UpstreamHealth } from '../routing/upstream-health.js';
import type { IdempotencyStore, KeyStore, ResponseStateStore, Store, StoreProbe, UsageEndpoint } from '../storage/types.js';
import type { GatewayMetrics } from '../telemetry/metrics.js';
import type { OutcomeRecorder } from '../telemetry/outcome-recorder.js';
import type { Endpoint } from '../telemetry/request-outcome.js';

export interface ServerDeps extends PipelineDeps {
  readonly keys: KeyStore;
  /** Idempotency-Key records (the client APIs' POSTs). */
  readonly idempotency: IdempotencyStore;
  /** Stored Responses ids per key (the pipeline's is optional for its unit tests; the server always has it). */
  readonly responseState: ResponseStateStore;
  /** The whole store: the admin API and the key holder's usage read it. */
  readonly store: Store;
  readonly health: UpstreamHealth;
  /** Model calls still being served (shutdown waits for them to settle). */
  readonly inFlight: InFlightRequests;
  /** True once shutdown began: new requests get 503. */
  readonly isClosing: () => boolean;
  readonly metrics: GatewayMetrics;
  /** The database probes behind /ready. */
  readonly probe: StoreProbe;
  /** Writes the usage rows of requests that moved no money, and counts those without a valid key. */
  readonly outcomes: OutcomeRecorder;
  /** The redemption codes' guess limit (POST /v1/account/redeem); absent: one in this process, with the config's limits. */
  readonly redeemGuard?: RedeemGuard;
}

/**
 * A client API as the server mounts it under /v1 (the list comes from the composition root, so the
 * server names no API): its path and labels, and a function that registers its routes as an
 * encapsulated plugin with its own error envelope.
 */
export interface ClientApiRoutes {
  /** Under /v1, e.g. '/chat/completions'. */
  readonly path: string;
  readonly metricsLabel: Endpoint;
  readonly endpoint: UsageEndpoint;
  register(v1: FastifyInstance, deps: ServerDeps): void;
}

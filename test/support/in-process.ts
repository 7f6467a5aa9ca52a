// The real HTTP server (buildServer, every route, hook and error renderer) in this process, answered with
// Fastify's inject(): no port, no child process. It is composed as src/main.ts composes it — SQLite in a
// temp directory, the ledger, the real upstream transport pointed at the in-process mock upstream, the
// in-process rate limiter, metrics, the outcome recorder — but nothing listens and no sweeper runs. For
// the edges where a process is not the point (auth, error envelopes, headers, CORS, models); what needs a
// real process (signals, sockets, timeouts, workers) stays in test/e2e.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { Ledger } from '../../src/billing/ledger.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config, ProviderConfig } from '../../src/config/types.js';
import { CLIENT_APIS } from '../../src/api/index.js';
import { buildServer } from '../../src/http/server.js';
import { openRateLimiter } from '../../src/limits/open-limiter.js';
import { openDatabase } from '../../src/open-database.js';
import { issueKey, type IssueKeyInput, type IssuedKey } from '../../src/operations/keys.js';
import { DrainSlots } from '../../src/pipeline/drain-slots.js';
import { InFlightRequests } from '../../src/pipeline/in-flight.js';
import { UpstreamHealth } from '../../src/routing/upstream-health.js';
import type { Store } from '../../src/storage/types.js';
import { GatewayMetrics } from '../../src/telemetry/metrics.js';
import { OutcomeRecorder } from '../../src/telemetry/outcome-recorder.js';
import { UpstreamTransport } from '../../src/upstream/transport.js';
import { mockConfig } from './mock-config.js';
import { startMockUpstream, type MockUpstream } from './mock-upstream.js';
import { assertMatchesSchema } from './openapi.js';

export interface InProcessGateway {
  readonly app: FastifyInstance;
  readonly config: Config;
  readonly store: Store;
  readonly mock: MockUpstream;
  /** The SQLite file (for reading rows the store does not list). */
  readonly dbPath: string;
  /** app.inject, with the path under /v1 and the key as a bearer token when given. */
  call(method: InjectOptions['method'], path: string, options?: CallOptions): Promise<LightMyRequestResponse>;
  /** Issues a key as the CLI and the admin API do (operations/keys.ts), 10 USD unless said; balance in nano-dollars. */
  issueKey(input?: Partial<IssueKeyInput>, now?: number): Promise<IssuedKey>;
  close(): Promise<void>;
}

export interface CallOptions {
  readonly key?: string;
  readonly headers?: Record<string, string>;
  /** An object is sent as JSON (content-type application/json unless headers say otherwise); a string or bytes as they are, with no content-type. */
  readonly body?: unknown;
}

/** `configFor` gets the mock and returns tollgate.yaml; `{{DB}}` becomes the SQLite file (as in mockConfig). */
export async function startInProcess(configFor: (mock: MockUpstream) => string = (mock) => mockConfig(mock)): Promise<InProcessGateway> {
  const mock = await startMockUpstream();
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-in-process-'));
  const dbPath = join(dir, 'tollgate.db');
  const configPath = join(dir, 'tollgate.yaml');
  writeFileSync(configPath, configFor(mock).replaceAll('{{DB}}', `sqlite:${dbPath}`));
  const config = loadConfig(configPath, {});
  const log = pino({ level: 'silent' });
  const store = await openDatabase(config.database, { busyTimeoutMs: 1_000 });
  const transport = new UpstreamTransport();
  const health = new UpstreamHealth();
  const metrics = new GatewayMetrics(config, {
    activeHolds: () => store.probe.activeHolds(),
    isCooling: (provider: ProviderConfig, upstreamModel: string) => health.isCooling({ provider, upstreamModel }),
  });
  const outcomes = new OutcomeRecorder(store.usage, log, { dropped: (rows) => metrics.usageRowsDropped(rows) });
  const limiter = await openRateLimiter(config, log);
  const app = buildServer({
    config,
    ledger: new Ledger(store.ledger, config.billing, config.limits, log, (seconds) => metrics.ledgerWrite(seconds)),
    transport,
    log,
    health,
    drains: new DrainSlots(),
    limiter,
    keys: store.keys,
    idempotency: store.idempotency,
    responseState: store.responses,
    store,
    inFlight: new InFlightRequests(),
    isClosing: () => false,
    metrics,
    probe: store.probe,
    outcomes,
  }, CLIENT_APIS);
  await app.ready();
  return {
    app,
    config,
    store,
    mock,
    dbPath,
    call(method, path, { key, headers = {}, body } = {}) {
      const json = body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array);
      return app.inject({
        method,
        url: `/v1${path}`,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(json ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        // Bytes go as a Buffer: inject would send any other object as JSON.
        ...(body === undefined ? {} : { payload: json ? JSON.stringify(body) : typeof body === 'string' ? body : Buffer.from(body as Uint8Array) }),
      });
    },
    issueKey: (input = {}, now = Date.now()) => issueKey(store, config, { name: 'test', balance: 10_000_000_000, ...input }, now),
    async close() {
      await app.close();
      await outcomes.close();
      await transport.close();
      await limiter.close();
      await store.close();
      await mock.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The gateway's error answer: `status`, JSON, an x-request-id, the four-key envelope valid against the
 * OpenAI ErrorResponse schema, and `code`. Returns the `error` object.
 */
export function assertErrorAnswer(res: LightMyRequestResponse, status: number, code: string): Record<string, unknown> {
  assert.equal(res.statusCode, status, `status ${res.statusCode} (body ${res.body})`);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.ok(res.headers['x-request-id'], 'x-request-id on the error answer');
  const body = res.json<{ error: Record<string, unknown> }>();
  assertMatchesSchema('ErrorResponse', body);
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error).slice(0, 4), ['message', 'type', 'param', 'code']);
  assert.equal(body.error.code, code);
  return body.error;
}

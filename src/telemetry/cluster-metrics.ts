// /metrics under `serve --workers N`: each worker counts its own requests, but a scrape reaches one worker
// at random, so the worker that answers asks the primary, which gathers every worker's registry over IPC
// (prom-client's AggregatorRegistry) and returns one exposition: counters and histograms summed, the
// database-wide gauges taken once (their `aggregator`), so a scrape shows the whole gateway.
import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Logger } from '../log.js';

interface ExpositionRequest {
  readonly type: 'tollgate-metrics-request';
  readonly id: number;
}

interface ExpositionReply {
  readonly type: 'tollgate-metrics-reply';
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}

/** How long a worker waits for the primary's aggregate (the primary waits up to 5 s for the workers). */
const REPLY_TIMEOUT_MS = 6_000;

const isRequest = (message: unknown): message is ExpositionRequest =>
  typeof message === 'object' && message !== null && (message as ExpositionRequest).type === 'tollgate-metrics-request';
const isReply = (message: unknown): message is ExpositionReply =>
  typeof message === 'object' && message !== null && (message as ExpositionReply).type === 'tollgate-metrics-reply';

/** In the primary: answers the workers' requests for the aggregate exposition. */
export function serveClusterMetrics(log: Logger): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isRequest(message)) return;
    aggregator.clusterMetrics().then(
      (text) => worker.isConnected() && worker.send({ type: 'tollgate-metrics-reply', id: message.id, text } satisfies ExpositionReply),
      (error: unknown) => {
        log.warn({ err: error }, 'metrics: a worker did not report in time');
        if (worker.isConnected()) worker.send({ type: 'tollgate-metrics-reply', id: message.id, error: String(error) } satisfies ExpositionReply);
      },
    );
  });
}

/** In a worker: lets the primary read `registry`, and returns how to ask the primary for the aggregate. */
export function joinClusterMetrics(registry: Registry): () => Promise<string> {
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one installs prom-client's listener that answers the primary with `registry`.
  new AggregatorRegistry();
  const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  let nextId = 0;
  process.on('message', (message: unknown) => {
    if (!isReply(message)) return;
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    clearTimeout(waiting.timer);
    if (message.text !== undefined) waiting.resolve(message.text);
    else waiting.reject(new Error(`the primary could not gather the metrics: ${message.error ?? 'unknown error'}`));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error('the primary did not answer for the metrics'));
      }, REPLY_TIMEOUT_MS);
      pending.set(id, { resolve, reject, timer });
      process.send!({ type: 'tollgate-metrics-request', id } satisfies ExpositionRequest);
    });
}

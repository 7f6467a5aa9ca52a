// The primary process of `tollgate serve --workers N`: forks N workers (node:cluster, so they share one
// listening port), announces the gateway once all of them listen, restarts a worker that dies (with a
// back-off, so a worker that crashes at once does not spin the machine), and on SIGTERM/SIGINT asks
// every worker to drain and waits for all of them (docs/adr/0018-workers-and-shared-routing.md).
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../log.js';

/** A message a worker sends the primary once its server listens. */
export interface WorkerReady {
  readonly type: 'tollgate-worker-listening';
  readonly url: string;
}

export function isWorkerReady(message: unknown): message is WorkerReady {
  return typeof message === 'object' && message !== null && (message as WorkerReady).type === 'tollgate-worker-listening';
}

/** Restart delays: doubled for each crash within CRASH_WINDOW_MS of the last one, up to the cap. */
const FIRST_RESTART_DELAY_MS = 100;
const MAX_RESTART_DELAY_MS = 10_000;
const CRASH_WINDOW_MS = 30_000;

export interface SupervisorOptions {
  readonly workers: number;
  readonly log: Logger;
}

/**
 * Runs the workers until a signal stops them; resolves with the process's exit code: 0 when every
 * worker drained and exited cleanly, 1 when one failed to start or to stop.
 */
export function superviseWorkers({ workers, log }: SupervisorOptions): Promise<number> {
  return new Promise<number>((finish) => {
    const running = new Set<Worker>();
    const restarts = new Set<NodeJS.Timeout>();
    let announced = false;
    let stopping = false;
    let failed = false;
    let readyCount = 0;
    let consecutiveCrashes = 0;
    let lastCrash = 0;

    const fork = (): void => {
      const worker = cluster.fork();
      running.add(worker);
      worker.on('message', (message: unknown) => {
        if (!isWorkerReady(message)) return;
        if (announced) {
          log.info({ worker: worker.process.pid }, 'worker replaced');
          return;
        }
        readyCount += 1;
        if (readyCount === workers) {
          announced = true;
          log.info({ url: message.url, workers, pids: [...running].map((w) => w.process.pid) }, 'tollgate listening');
        }
      });
      worker.once('exit', (code, signal) => {
        running.delete(worker);
        if (stopping) {
          if (code !== 0) failed = true;
          if (running.size === 0) finish(failed ? 1 : 0);
          return;
        }
        if (!announced) {
          // A worker that cannot start (the port is taken, the database refuses) will not start on a retry either.
          log.error({ worker: worker.process.pid, code, signal }, 'a worker failed to start; stopping');
          failed = true;
          stop('startup failure');
          return;
        }
        const now = Date.now();
        consecutiveCrashes = now - lastCrash < CRASH_WINDOW_MS ? consecutiveCrashes + 1 : 1;
        lastCrash = now;
        const delay = Math.min(FIRST_RESTART_DELAY_MS * 2 ** (consecutiveCrashes - 1), MAX_RESTART_DELAY_MS);
        log.error({ worker: worker.process.pid, code, signal, restartInMs: delay }, 'worker exited; starting a replacement');
        const timer = setTimeout(() => {
          restarts.delete(timer);
          if (!stopping) fork();
        }, delay);
        restarts.add(timer);
      });
    };

    const stop = (reason: string): void => {
      if (stopping) return;
      stopping = true;
      log.info({ reason, workers: running.size }, 'shutting down');
      for (const timer of restarts) clearTimeout(timer);
      restarts.clear();
      if (running.size === 0) {
        finish(failed ? 1 : 0);
        return;
      }
      // Each worker drains its own requests (server.shutdown_grace_seconds) and exits.
      for (const worker of running) worker.process.kill('SIGTERM');
    };

    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
    for (let i = 0; i < workers; i++) fork();
  });
}

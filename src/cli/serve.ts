// `tollgate serve`: runs the gateway until SIGTERM/SIGINT, then shuts down gracefully (exit 0). With
// `--workers N` this process is the primary of N workers sharing the port (src/cluster/supervisor.ts);
// each worker runs this same command and takes the single-process path below.
import cluster from 'node:cluster';
import type { Command } from 'commander';
import { parseWorkerCount } from '../cluster/worker-count.js';
import type { WorkerReady } from '../cluster/supervisor.js';
import type { Config } from '../config/types.js';
import { logConfigWarnings } from '../config/usable-upstreams.js';
import { limitHeapGrowth } from '../heap-growth.js';
import { openDatabase } from '../open-database.js';
import { CliError, loadCommandConfig } from './context.js';

/** The primary: migrates the database once (not N workers at once), then supervises the workers. */
async function runPrimary(config: Config, workers: number): Promise<void> {
  if (config.database === 'sqlite::memory:') {
    throw new CliError('--workers needs a database the workers can share: sqlite::memory: is private to each process');
  }
  const [{ createLogger, logLevelFrom }, { superviseWorkers }] = await Promise.all([import('../log.js'), import('../cluster/supervisor.js')]);
  const log = await createLogger({ level: logLevelFrom(process.env, config.log.level), format: config.log.format });
  await (await openDatabase(config.database)).close();
  logConfigWarnings(config, log);
  if (!config.redis) {
    log.warn({ workers }, 'no redis: configured: each worker counts its own rate limits and cool-downs (set redis: to share them)');
  }
  // GET /metrics on any worker answers for all of them, gathered here.
  (await import('../telemetry/cluster-metrics.js')).serveClusterMetrics(log);
  const code = await superviseWorkers({ workers, log });
  log.info('stopped');
  log.flush();
  process.exit(code);
}

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the gateway')
    .option('--host <host>', 'listen address (default: server.host)')
    .option('--port <port>', 'listen port (default: server.port)')
    .option('--workers <n>', 'worker processes sharing the port: a number, or auto (one per core)')
    .action(async (opts: { host?: string; port?: string; workers?: string }, command: Command) => {
      const port = opts.port === undefined ? undefined : Number(opts.port);
      if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
        throw new CliError(`--port must be a port number, got "${opts.port}"`);
      }
      const workers = opts.workers === undefined ? 1 : parseWorkerCount(opts.workers);
      if (workers === undefined) throw new CliError(`--workers must be a number from 1 to 256 or auto, got "${opts.workers}"`);
      const config = loadCommandConfig(command);
      // Before the server allocates anything: the old generation's growth between full collections.
      limitHeapGrowth();
      if (workers > 1 && cluster.isPrimary) return runPrimary(config, workers);
      // Loaded here so that the other commands do not pay for the server (and the tokenizer) at start.
      const [{ createLogger, logLevelFrom }, { startGateway }] = await Promise.all([import('../log.js'), import('../main.js')]);
      const worker = cluster.isWorker;
      const base = await createLogger({ level: logLevelFrom(process.env, config.log.level), format: config.log.format });
      // A worker's lines name it, so an operator (and a test) can tell which process served a request.
      const log = worker ? base.child({ worker: process.pid }) : base;
      const gateway = await startGateway(config, { log, worker, ...(opts.host ? { host: opts.host } : {}), ...(port !== undefined ? { port } : {}) });
      if (worker) process.send?.({ type: 'tollgate-worker-listening', url: gateway.url } satisfies WorkerReady);
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        log.info({ signal }, 'shutting down');
        gateway.close().then(
          () => {
            log.info('stopped');
            log.flush();
            process.exit(0);
          },
          (error: unknown) => {
            log.error({ err: error }, 'shutdown failed');
            log.flush();
            process.exit(1);
          },
        );
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    });
}

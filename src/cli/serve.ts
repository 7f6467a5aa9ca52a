// `tollgate serve`: runs the gateway until SIGTERM/SIGINT, then shuts down gracefully (exit 0).
import type { Command } from 'commander';
import { CliError, loadCommandConfig } from './context.js';

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the gateway')
    .option('--host <host>', 'listen address (default: server.host)')
    .option('--port <port>', 'listen port (default: server.port)')
    .action(async (opts: { host?: string; port?: string }, command: Command) => {
      const config = loadCommandConfig(command);
      const port = opts.port === undefined ? undefined : Number(opts.port);
      if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
        throw new CliError(`--port must be a port number, got "${opts.port}"`);
      }
      // Loaded here so that the other commands do not pay for the server (and the tokenizer) at start.
      const [{ createLogger, logLevelFrom }, { startGateway }] = await Promise.all([import('../log.js'), import('../main.js')]);
      const log = await createLogger({ level: logLevelFrom(process.env, config.log.level), format: config.log.format });
      const gateway = await startGateway(config, { log, ...(opts.host ? { host: opts.host } : {}), ...(port !== undefined ? { port } : {}) });
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

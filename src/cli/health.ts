// `tollgate health`: asks a running gateway's GET /ready and exits 0 only on 200. It finds the gateway
// where `serve` would listen — the same config file and server.host / server.port — so a container's
// HEALTHCHECK or a monitoring script follows the configured port instead of naming one of its own.
import type { Command } from 'commander';
import { loadConfig } from '../config/load.js';
import { CliError, configPathOf } from './context.js';

const DEFAULT_TIMEOUT_SECONDS = 5;

/** Where to connect to reach a server listening on `host`: a wildcard address is reached on loopback. */
export function readyUrl(host: string, port: number): string {
  const target = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${target.includes(':') ? `[${target}]` : target}:${port}/ready`;
}

function parsePort(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new CliError(`--port must be a port number from 1 to 65535, got "${text}"`);
  return port;
}

function parseTimeout(text: string): number {
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 600) throw new CliError(`--timeout must be a number of seconds above 0 (at most 600), got "${text}"`);
  return seconds;
}

async function probe(url: string, timeoutSeconds: number): Promise<string> {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutSeconds * 1000), headers: { accept: 'application/json' } });
  } catch (error) {
    if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
      throw new CliError(`${url} did not answer within ${timeoutSeconds} s`);
    }
    // fetch's own message is "fetch failed"; the cause says why (ECONNREFUSED, ENOTFOUND, ...).
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new CliError(`${url} did not answer: ${cause}`);
  }
  // Bounded: /ready's body is a few bytes, and anything else listening there is not Tollgate.
  const body = (await response.text()).slice(0, 200).trim();
  if (response.status !== 200) throw new CliError(`${url} answered ${response.status}${body ? `: ${body}` : ''}`);
  return body;
}

export function registerHealthCommand(program: Command): void {
  program
    .command('health')
    .description("ask a running gateway's GET /ready (at server.host and server.port); exit 0 when it is ready")
    .option('--host <host>', 'the address to ask (default: server.host; 0.0.0.0 and :: are asked on loopback)')
    .option('--port <port>', 'the port to ask (default: server.port)')
    .option('--timeout <seconds>', `give up after this long (default: ${DEFAULT_TIMEOUT_SECONDS})`)
    .action(async (opts: { host?: string; port?: string; timeout?: string }, command: Command) => {
      const port = opts.port === undefined ? undefined : parsePort(opts.port);
      const timeout = opts.timeout === undefined ? DEFAULT_TIMEOUT_SECONDS : parseTimeout(opts.timeout);
      // Never created here: a probe must not write a config file where no gateway was started.
      const config = loadConfig(configPathOf(command, { create: false }));
      const target = port ?? config.server.port;
      if (target === 0) throw new CliError('server.port is 0 (a port chosen at start): pass the port the gateway listens on with --port');
      const url = readyUrl(opts.host ?? config.server.host, target);
      const body = await probe(url, timeout);
      process.stdout.write(`${url}: ${body}\n`);
    });
}

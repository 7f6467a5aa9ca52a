// The `tollgate` command line (product.md §2). `--config PATH` is accepted anywhere on the line.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/config-error.js';
import { StartupError } from '../startup-error.js';
import { isGatewayError } from '../errors.js';
import { UnsupportedDatabaseError } from '../storage/database-url.js';
import { exitQuietlyOnClosedPipe } from './closed-pipe.js';
import { CliError } from './cli-error.js';

/**
 * Each command group's module, loaded only when its command runs (or for the full help): `--version`
 * and a command load only what they use — not the config schema, storage and operations of the rest.
 */
const COMMAND_GROUPS: Readonly<Record<string, () => Promise<(program: Command) => void>>> = {
  serve: async () => (await import('./serve.js')).registerServeCommand,
  keys: async () => (await import('./keys.js')).registerKeyCommands,
  accounts: async () => (await import('./accounts.js')).registerAccountCommands,
  codes: async () => (await import('./codes.js')).registerCodeCommands,
  usage: async () => (await import('./usage.js')).registerUsageCommand,
  audit: async () => (await import('./audit.js')).registerAuditCommand,
  webhooks: async () => (await import('./webhooks.js')).registerWebhookCommands,
  payments: async () => (await import('./payments.js')).registerPaymentCommands,
  config: async () => (await import('./config-check.js')).registerConfigCommands,
  health: async () => (await import('./health.js')).registerHealthCommand,
};

/** The command named on the line (the first argument that is not an option or `--config`'s value). */
function commandOf(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--config') i++;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

/** The groups to load: the named one; none for `--version` alone; all for help or an unknown command. */
function groupsFor(args: readonly string[]): string[] {
  const command = commandOf(args);
  if (command !== undefined && command in COMMAND_GROUPS) return [command];
  if (command === undefined && args.some((a) => a === '-V' || a === '--version') && !args.some((a) => a === '-h' || a === '--help')) return [];
  return Object.keys(COMMAND_GROUPS);
}

export async function runCli(argv: string[]): Promise<void> {
  exitQuietlyOnClosedPipe();
  const program = new Command('tollgate')
    .description('Prepaid, OpenAI-compatible model gateway')
    .version(packageVersion(), '-V, --version', 'print the version')
    .option('--config <path>', 'config file (default: $TOLLGATE_CONFIG, else ./tollgate.yaml)')
    .exitOverride()
    .showHelpAfterError();
  try {
    for (const group of groupsFor(argv.slice(2))) (await COMMAND_GROUPS[group]!())(program);
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode;
      return;
    }
    process.exitCode = 1;
    // GatewayErrors here come from operations/ refusing input (a bad amount, an unknown key): one clear line.
    if (
      error instanceof ConfigError ||
      error instanceof CliError ||
      error instanceof UnsupportedDatabaseError ||
      error instanceof StartupError ||
      isGatewayError(error)
    ) {
      process.stderr.write(`tollgate: ${error.message}\n`);
      return;
    }
    // A bug: still one line for the user; the stack only for someone debugging.
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    process.stderr.write(`tollgate: unexpected error: ${message}\n`);
    if (/^(debug|trace)$/.test(process.env.TOLLGATE_LOG_LEVEL ?? '') && error instanceof Error) process.stderr.write(`${error.stack}\n`);
  }
}

/** The version in package.json (dist/cli/ and src/cli/ are both two levels below it). */
function packageVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

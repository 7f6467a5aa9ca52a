// The `tollgate` command line (product.md §2). `--config PATH` is accepted anywhere on the line.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/load.js';
import { StartupError } from '../startup-error.js';
import { isGatewayError } from '../errors.js';
import { UnsupportedDatabaseError } from '../storage/open-store.js';
import { registerAuditCommand } from './audit.js';
import { exitQuietlyOnClosedPipe } from './closed-pipe.js';
import { registerConfigCommands } from './config-check.js';
import { CliError } from './context.js';
import { registerHealthCommand } from './health.js';
import { registerKeyCommands } from './keys.js';
import { registerServeCommand } from './serve.js';
import { registerUsageCommand } from './usage.js';

export async function runCli(argv: string[]): Promise<void> {
  exitQuietlyOnClosedPipe();
  const program = new Command('tollgate')
    .description('Prepaid, OpenAI-compatible model gateway')
    .version(packageVersion(), '-V, --version', 'print the version')
    .option('--config <path>', 'config file (default: $TOLLGATE_CONFIG, else ./tollgate.yaml)')
    .exitOverride()
    .showHelpAfterError();
  registerServeCommand(program);
  registerKeyCommands(program);
  registerUsageCommand(program);
  registerAuditCommand(program);
  registerConfigCommands(program);
  registerHealthCommand(program);
  try {
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

// The `tollgate` command line (product.md §2). `--config PATH` is accepted anywhere on the line.
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/load.js';
import { UnsupportedDatabaseError } from '../storage/open-store.js';
import { registerConfigCommands } from './config-check.js';
import { CliError } from './context.js';
import { registerKeyCommands } from './keys.js';
import { registerServeCommand } from './serve.js';
import { registerUsageCommand } from './usage.js';

export async function runCli(argv: string[]): Promise<void> {
  const program = new Command('tollgate')
    .description('Prepaid, OpenAI-compatible model gateway')
    .option('--config <path>', 'config file (default: $TOLLGATE_CONFIG, else ./tollgate.yaml)')
    .exitOverride()
    .showHelpAfterError();
  registerServeCommand(program);
  registerKeyCommands(program);
  registerUsageCommand(program);
  registerConfigCommands(program);
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode;
      return;
    }
    if (error instanceof ConfigError || error instanceof CliError || error instanceof UnsupportedDatabaseError) {
      process.stderr.write(`tollgate: ${error.message}\n`);
      process.exitCode = 1;
      return;
    }
    throw error;
  }
}

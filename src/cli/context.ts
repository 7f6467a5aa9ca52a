// What every command shares: which config file (--config, $TOLLGATE_CONFIG, ./tollgate.yaml), creating
// ./tollgate.yaml from the example on first use, and opening the (migrated) store.
import { copyFileSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/types.js';
import { openDatabase } from '../open-database.js';
import type { Store } from '../storage/types.js';

const DEFAULT_CONFIG = 'tollgate.yaml';
const EXAMPLE_CONFIG = fileURLToPath(new URL('../../tollgate.example.yaml', import.meta.url));

export class CliError extends Error {}

/** The config file a command reads; `./tollgate.yaml` is created from the example unless `create` is false. */
export function configPathOf(command: Command, { create = true }: { create?: boolean } = {}): string {
  const explicit = (command.optsWithGlobals() as { config?: string }).config ?? process.env.TOLLGATE_CONFIG;
  if (explicit) return resolve(explicit);
  const path = resolve(DEFAULT_CONFIG);
  if (create && !existsSync(path) && existsSync(EXAMPLE_CONFIG)) {
    copyFileSync(EXAMPLE_CONFIG, path);
    process.stderr.write(`created ${path} from tollgate.example.yaml\n`);
  }
  return path;
}

export function loadCommandConfig(command: Command): Config {
  return loadConfig(configPathOf(command));
}

/** Runs `fn` with the config and an open store, closing the store afterwards. */
export async function withStore<T>(command: Command, fn: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadCommandConfig(command);
  const store = await openDatabase(config.database);
  try {
    return await fn(store, config);
  } finally {
    await store.close();
  }
}

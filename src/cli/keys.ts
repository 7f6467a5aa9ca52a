// `tollgate keys ...`: issue, list, show, top up, restrict and revoke API keys.
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { usdToNano } from '../billing/money.js';
import type { Config } from '../config/types.js';
import { generateKeyId, generateKeySecret, hashKeySecret, keyPrefix } from '../keys/secret.js';
import type { AllowedModels, KeyRecord, Store } from '../storage/types.js';
import { CliError, withStore } from './context.js';
import { keyJson, modelsText, printJson, printTable, usageJson, usd } from './format.js';

const RECENT_USAGE_ROWS = 20;

function parseAmount(text: string, what: string, allowZero: boolean): number {
  const nano = usdToNano(text);
  if (nano === undefined || nano < 0 || (!allowZero && nano === 0)) {
    throw new CliError(`${what} must be a ${allowZero ? 'non-negative' : 'positive'} USD amount with at most 9 decimals, got "${text}"`);
  }
  return nano;
}

function parseModels(list: string | undefined, allModels: boolean | undefined, config: Config): AllowedModels {
  if (allModels || list === undefined) return '*';
  const ids = list.split(',').map((id) => id.trim()).filter(Boolean);
  const unknown = ids.filter((id) => !config.models.has(id));
  if (unknown.length > 0) {
    throw new CliError(`unknown model(s) ${unknown.join(', ')}; configured: ${[...config.models.keys()].join(', ')}`);
  }
  return ids;
}

async function requireKey(store: Store, id: string): Promise<KeyRecord> {
  const key = await store.keys.get(id);
  if (!key) throw new CliError(`no key with id ${id}`);
  return key;
}

function printKey(key: KeyRecord): void {
  printTable(
    ['FIELD', 'VALUE'],
    [
      ['id', key.id],
      ['name', key.name],
      ['prefix', `${key.prefix}...`],
      ['balance', usd(key.balance)],
      ['held', usd(key.held)],
      ['available', usd(key.balance - key.held)],
      ['models', modelsText(key.allowedModels)],
      ['status', key.status],
      ['created', key.createdAt],
    ],
  );
}

export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('issue and manage API keys');

  keys
    .command('create')
    .description('issue a key; the secret is printed once')
    .requiredOption('--name <name>', 'a label for the key')
    .option('--balance <usd>', 'initial prepaid balance in USD', '0')
    .option('--models <ids>', 'comma-separated model IDs the key may use')
    .option('--all-models', 'the key may use every configured model (the default)')
    .option('--json', 'print one JSON object')
    .action(async (opts: { name: string; balance: string; models?: string; allModels?: boolean; json?: boolean }, command: Command) => {
      if (opts.models !== undefined && opts.allModels) throw new CliError('use either --models or --all-models, not both');
      const balance = parseAmount(opts.balance, '--balance', true);
      await withStore(command, async (store, config) => {
        const secret = generateKeySecret();
        const key = await store.keys.create({
          id: generateKeyId(),
          name: opts.name,
          prefix: keyPrefix(secret),
          secretHash: hashKeySecret(secret),
          allowedModels: parseModels(opts.models, opts.allModels, config),
          initialBalance: balance,
          topupRequestId: `topup_${randomUUID()}`,
          now: Date.now(),
        });
        if (opts.json) return printJson({ ...keyJson(key), key: secret });
        process.stdout.write(`Created key ${key.id} (${key.name}): balance ${usd(key.balance)}, ${modelsText(key.allowedModels)}.\n`);
        process.stdout.write(`Secret (shown only now; store it safely):\n${secret}\n`);
      });
    });

  keys
    .command('list')
    .description('list keys with their balances')
    .option('--json', 'print a JSON array')
    .action(async (opts: { json?: boolean }, command: Command) => {
      await withStore(command, async (store) => {
        const all = await store.keys.list();
        if (opts.json) return printJson(all.map(keyJson));
        printTable(
          ['ID', 'NAME', 'PREFIX', 'BALANCE', 'HELD', 'AVAILABLE', 'MODELS', 'STATUS'],
          all.map((k) => [k.id, k.name, `${k.prefix}...`, usd(k.balance), usd(k.held), usd(k.balance - k.held), modelsText(k.allowedModels), k.status]),
        );
      });
    });

  keys
    .command('show <id>')
    .description('one key, with its recent usage')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { json?: boolean }, command: Command) => {
      await withStore(command, async (store) => {
        const key = await requireKey(store, id);
        const recent = await store.usage.list({ keyId: id, limit: RECENT_USAGE_ROWS });
        if (opts.json) return printJson({ ...keyJson(key), recent_usage: recent.map(usageJson) });
        printKey(key);
        process.stdout.write(`\nRecent usage (${recent.length}):\n`);
        printTable(
          ['TIME', 'MODEL', 'STATUS', 'IN', 'OUT', 'COST', 'SOURCE'],
          recent.map((r) => [new Date(r.time).toISOString(), r.model, String(r.status), String(r.inputTokens), String(r.outputTokens), usd(r.cost), r.usageSource]),
        );
      });
    });

  keys
    .command('topup <id> <usd>')
    .description('add credit (a ledger entry) and print the new balance')
    .option('--json', 'print one JSON object')
    .action(async (id: string, amountText: string, opts: { json?: boolean }, command: Command) => {
      const amount = parseAmount(amountText, 'the top-up amount', false);
      await withStore(command, async (store) => {
        await requireKey(store, id);
        const key = (await store.keys.topUp(id, amount, `topup_${randomUUID()}`, Date.now()))!;
        if (opts.json) return printJson(keyJson(key));
        process.stdout.write(`Topped up ${key.id} by ${usd(amount)}: balance ${usd(key.balance)}, available ${usd(key.balance - key.held)}.\n`);
      });
    });

  keys
    .command('set-models <id> [models]')
    .description('replace the allow-list: comma-separated model IDs, or --all-models')
    .option('--all-models', 'allow every configured model')
    .option('--json', 'print one JSON object')
    .action(async (id: string, models: string | undefined, opts: { allModels?: boolean; json?: boolean }, command: Command) => {
      if ((models === undefined) === !opts.allModels) throw new CliError('give either a comma-separated list of model IDs or --all-models');
      await withStore(command, async (store, config) => {
        await requireKey(store, id);
        const key = (await store.keys.setAllowedModels(id, parseModels(models, opts.allModels, config)))!;
        if (opts.json) return printJson(keyJson(key));
        process.stdout.write(`Key ${key.id} may now use ${modelsText(key.allowedModels)}.\n`);
      });
    });

  keys
    .command('revoke <id>')
    .description('the key stops working at once; its history stays')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { json?: boolean }, command: Command) => {
      await withStore(command, async (store) => {
        await requireKey(store, id);
        const key = (await store.keys.revoke(id, Date.now()))!;
        if (opts.json) return printJson(keyJson(key));
        process.stdout.write(`Revoked key ${key.id} (${key.name}).\n`);
      });
    });
}

// `tollgate keys ...`: issue, list, show, top up, restrict, limit and revoke API keys — thin over
// operations/keys.ts, which the admin API shares.
import type { Command } from 'commander';
import { usdAmount } from '../operations/amount-input.js';
import { keyObject } from '../operations/key-object.js';
import { adjustKey, topUpKey } from '../operations/key-money.js';
import { issueKey, requireKey, revokeKey, rotateKey, setKeyLimits, setKeyModels } from '../operations/keys.js';
import { walkKeys } from '../operations/list-keys.js';
import { usageJson, usagePage } from '../operations/usage.js';
import type { KeyJson } from '../operations/json-types.js';
import type { LimitsInput } from '../operations/limits-input.js';
import type { Config } from '../config/types.js';
import type { KeyRecord } from '../storage/types.js';
import { CliError, withStore } from './context.js';
import { limitsText, modelsText, printJson, printTable, usd, usdFigure } from './format.js';

const RECENT_USAGE_ROWS = 20;

/** The id of the personal account a key made without one has (storage/rows.ts personalAccountId). */
const personalAccountOf = (keyId: string): string => `acct_${keyId.startsWith('key_') ? keyId.slice(4) : keyId}`;

interface LimitFlags {
  rpm?: string;
  tpm?: string;
  maxConcurrent?: string;
  budget?: string;
  budgetPeriod?: string;
  expires?: string;
  clampMaxTokens?: string;
  creditLimit?: string;
}

/** Flags as the operations read them: absent stays, `none` clears (null). */
function limitsInput(flags: LimitFlags): LimitsInput {
  const value = (text: string | undefined) => (text === undefined ? undefined : text.trim().toLowerCase() === 'none' ? null : text);
  return {
    rpm: value(flags.rpm),
    tpm: value(flags.tpm),
    max_concurrent: value(flags.maxConcurrent),
    budget: value(flags.budget),
    budget_period: value(flags.budgetPeriod),
    expires_at: value(flags.expires),
    clamp_max_tokens: flags.clampMaxTokens,
    credit_limit: value(flags.creditLimit),
  };
}

function modelList(list: string): string[] {
  return list
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean);
}

/** A personal account (made for this key alone) is named as such; another account by its id and name. */
function accountText(key: KeyRecord): string {
  return key.account.personal ? `${key.accountId} (personal)` : `${key.accountId} (${key.account.name})`;
}

/** A key's credit limit and limits in a few words: "credit $10, rpm 60" or "none". */
function capsText(k: KeyJson): string {
  const parts = [k.credit_limit === null ? '' : `credit ${usdFigure(k.credit_limit)}`, limitsText(k)].filter((t) => t !== '' && t !== 'none');
  return parts.join(', ') || 'none';
}

function printKey(key: KeyRecord, config: Config): void {
  const object = keyObject(key, config);
  printTable(
    ['FIELD', 'VALUE'],
    [
      ['id', key.id],
      ['name', key.name],
      ['prefix', `${key.prefix}...`],
      ['account', accountText(key)],
      // A personal account's money is the key's own; a shared one's is said to be the account's.
      ['balance', key.account.personal ? usdFigure(object.balance) : `${usdFigure(object.balance)} (the account's)`],
      ['held', key.account.personal ? usdFigure(object.held) : `${usdFigure(object.held)} (the account's; this key's: ${usd(key.held)})`],
      ['available', usdFigure(object.available)],
      ['spent', usdFigure(object.spent)],
      ['credit limit', object.credit_limit === null ? 'none' : usdFigure(object.credit_limit)],
      ['credit left', object.credit_left === null ? '-' : usdFigure(object.credit_left)],
      ['models', modelsText(key.allowedModels)],
      ['limits', limitsText(object)],
      ['budget used', object.budget_used === null ? '-' : `${usdFigure(object.budget_used)} (resets ${String(object.budget_resets_at)})`],
      ['expires', (object.expires_at as string | null) ?? 'never'],
      ['status', key.status],
      ['created', key.createdAt],
    ],
  );
}

function withLimitFlags(command: Command, clearable: boolean): Command {
  const or = clearable ? '|none' : '';
  return command
    .option('--credit-limit <usd>', `USD the key may ever spend, of its account's money (USD${or})`)
    .option('--rpm <n>', `requests per rolling 60 s (N${or})`)
    .option('--tpm <n>', `tokens per rolling 60 s (N${or})`)
    .option('--max-concurrent <n>', `requests in flight at once (N${or})`)
    .option('--budget <usd>', `spend cap per budget period (USD${or})`)
    .option('--budget-period <period>', `day, week or month (UTC)${clearable ? ', or none' : ''}`)
    .option('--expires <time>', `ISO 8601 time or a duration such as 30d, 12h${clearable ? ', or none' : ''}`);
}

/** Printed under a new secret, which is on the first line (a script reads it with `head -1`). */
const SECRET_NOTE = 'The secret above is shown only now; store it safely.';

export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('issue and manage API keys');

  withLimitFlags(
    keys
      .command('create')
      .description('issue a key; the secret is printed once')
      .requiredOption('--name <name>', 'a label for the key')
      .option('--account <id>', 'the account the key draws on (default: a personal account made for the key)')
      .option('--balance <usd>', "initial prepaid balance in USD of the key's personal account (default 0; not with --account)")
      .option('--models <ids>', 'comma-separated model IDs the key may use')
      .option('--all-models', 'the key may use every configured model (the default)'),
    false,
  )
    .option('--json', 'print one JSON object')
    .action(async (opts: LimitFlags & { name: string; account?: string; balance?: string; models?: string; allModels?: boolean; json?: boolean }, command: Command) => {
      if (opts.models !== undefined && opts.allModels) throw new CliError('use either --models or --all-models, not both');
      const balance = opts.balance === undefined ? undefined : usdAmount('--balance', opts.balance, { allowZero: true });
      await withStore(command, async (store, config) => {
        const { key, secret } = await issueKey(store, config, {
          name: opts.name,
          ...(opts.account !== undefined ? { accountId: opts.account } : {}),
          ...(balance !== undefined ? { balance } : {}),
          allowedModels: opts.models === undefined ? '*' : modelList(opts.models),
          limits: limitsInput(opts),
        });
        if (opts.json) return printJson({ ...keyObject(key, config), key: secret });
        // The secret alone on the first line, in the same write as the rest: `... | head -1` keeps it.
        const where = key.account.personal ? `balance ${usd(key.balance)}` : `in account ${key.accountId} (available ${usd(key.account.balance - key.account.held)})`;
        const cap = key.creditLimit === null ? '' : `, credit limit ${usd(key.creditLimit)}`;
        process.stdout.write(`${secret}\nCreated key ${key.id} (${key.name}): ${where}${cap}, ${modelsText(key.allowedModels)}.\n${SECRET_NOTE}\n`);
      });
    });

  keys
    .command('list')
    .description('list keys with their balances')
    .option('--json', 'print a JSON array')
    .action(async (opts: { json?: boolean }, command: Command) => {
      await withStore(command, async (store, config) => {
        const all: KeyJson[] = [];
        for await (const key of walkKeys(store, config)) all.push(key);
        if (opts.json) return printJson(all);
        const now = new Date().toISOString();
        printTable(
          ['ID', 'NAME', 'PREFIX', 'ACCOUNT', 'BALANCE', 'HELD', 'AVAILABLE', 'MODELS', 'LIMITS', 'STATUS'],
          all.map((k) => [
            String(k.id),
            String(k.name),
            `${String(k.prefix)}...`,
            k.account_id === personalAccountOf(k.id) ? 'personal' : k.account_id,
            usdFigure(k.balance),
            usdFigure(k.held),
            usdFigure(k.available),
            k.allowed_models === '*' ? 'all models' : (k.allowed_models as string[]).join(',') || '(none)',
            capsText(k),
            k.expires_at !== null && (k.expires_at as string) <= now ? 'expired' : String(k.status),
          ]),
        );
      });
    });

  keys
    .command('show <id>')
    .description('one key, with its recent usage')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { json?: boolean }, command: Command) => {
      await withStore(command, async (store, config) => {
        const key = await requireKey(store, id);
        const recent = (await usagePage(store, { key_id: id, limit: RECENT_USAGE_ROWS })).data.reverse();
        if (opts.json) return printJson({ ...keyObject(key, config), recent_usage: recent.map(usageJson) });
        printKey(key, config);
        process.stdout.write(`\nRecent usage (${recent.length}):\n`);
        printTable(
          ['TIME', 'MODEL', 'STATUS', 'ERROR', 'IN', 'OUT', 'COST', 'SOURCE'],
          recent.map((r) => [
            new Date(r.time).toISOString(),
            r.model ?? '-',
            String(r.status),
            r.errorCode ?? '-',
            String(r.inputTokens),
            String(r.outputTokens),
            usd(r.cost),
            r.usageSource,
          ]),
        );
      });
    });

  keys
    .command('topup <id> <usd>')
    .description('add credit (a ledger entry) and print the new balance')
    .option('--note <text>', 'kept on the ledger entry (e.g. an invoice number)')
    .option('--json', 'print one JSON object')
    .action(async (id: string, amountText: string, opts: { note?: string; json?: boolean }, command: Command) => {
      await withStore(command, async (store, config) => {
        const before = await requireKey(store, id);
        const key = await topUpKey(store, id, amountText, opts.note);
        if (opts.json) return printJson(keyObject(key, config));
        // The money is the account's: say which one was credited.
        process.stdout.write(
          `Topped up account ${key.accountId} (key ${key.id}) by ${usd(key.balance - before.balance)}: balance ${usd(key.balance)}, available ${usd(key.balance - key.account.held)}.\n`,
        );
      });
    });

  keys
    .command('adjust <id> <usd>')
    .description('a correction of either sign (an adjust ledger entry); never below zero available')
    .requiredOption('--reason <text>', 'why (kept on the ledger entry)')
    .option('--json', 'print one JSON object')
    .action(async (id: string, amountText: string, opts: { reason: string; json?: boolean }, command: Command) => {
      await withStore(command, async (store, config) => {
        const key = await adjustKey(store, id, amountText, opts.reason);
        if (opts.json) return printJson(keyObject(key, config));
        process.stdout.write(
          `Adjusted account ${key.accountId} (key ${key.id}) by ${amountText} USD: balance ${usd(key.balance)}, available ${usd(key.balance - key.account.held)}.\n`,
        );
      });
    });

  keys
    .command('rotate <id>')
    .description('a new secret for the same key (printed once); the old secret stops working at once')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { json?: boolean }, command: Command) => {
      await withStore(command, async (store, config) => {
        const { key, secret } = await rotateKey(store, id);
        if (opts.json) return printJson({ ...keyObject(key, config), key: secret });
        process.stdout.write(`${secret}\nNew secret for ${key.id} (${key.name}); the old one no longer works.\n${SECRET_NOTE}\n`);
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
        const key = await setKeyModels(store, config, id, opts.allModels ? '*' : modelList(models!));
        if (opts.json) return printJson(keyObject(key, config));
        process.stdout.write(`Key ${key.id} may now use ${modelsText(key.allowedModels)}.\n`);
      });
    });

  withLimitFlags(keys.command('set-limits <id>').description("change a key's limits and expiry; none clears the key's own value (the config default applies)"), true)
    .option('--clamp-max-tokens <on|off>', 'on: a max_tokens the balance cannot cover is lowered to what it can (instead of a 402)')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: LimitFlags & { json?: boolean }, command: Command) => {
      const input = limitsInput(opts);
      if (Object.values(input).every((v) => v === undefined)) {
        throw new CliError('give at least one of --credit-limit, --rpm, --tpm, --max-concurrent, --budget, --budget-period, --expires, --clamp-max-tokens');
      }
      await withStore(command, async (store, config) => {
        const key = await setKeyLimits(store, id, input);
        const object = keyObject(key, config);
        if (opts.json) return printJson(object);
        const cap = object.credit_limit === null ? 'no credit limit' : `credit limit ${usdFigure(object.credit_limit)} (${usdFigure(object.credit_left)} left)`;
        process.stdout.write(`Key ${key.id}: ${cap}; ${limitsText(object)}; expires ${(object.expires_at as string | null) ?? 'never'}.\n`);
      });
    });

  keys
    .command('revoke <id>')
    .description('the key stops working at once; its history stays')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { json?: boolean }, command: Command) => {
      await withStore(command, async (store, config) => {
        const key = await revokeKey(store, id);
        if (opts.json) return printJson(keyObject(key, config));
        process.stdout.write(`Revoked key ${key.id} (${key.name}).\n`);
      });
    });
}

// `tollgate accounts ...`: create, list, show, top up, adjust, suspend/resume, change accounts and
// issue their self-service tokens — thin over operations/accounts.ts, which the admin API shares
// (docs/adr/0047-accounts.md). Every --json prints the object the admin API answers.
import type { Command } from 'commander';
import {
  accountObject,
  adjustAccount,
  createAccount,
  issueAccountToken,
  listAccounts,
  requireAccount,
  revokeAccountToken,
  setAccountStatus,
  topUpAccount,
  updateAccount,
  type AccountInput,
} from '../operations/accounts.js';
import { listAccountKeys } from '../operations/account-views.js';
import type { AccountJson, KeyJson } from '../operations/json-types.js';
import { walkPages } from '../operations/page.js';
import type { Store } from '../storage/types.js';
import { CliError, withStore } from './context.js';
import { printJson, printTable, usd, usdFigure } from './format.js';

/** Printed under a new account token, which is on the first line (a script reads it with `head -1`). */
const TOKEN_NOTE = 'The token above is shown only now; store it safely. It manages the account (GET /v1/account); it never calls a model.';

function modelList(list: string): string[] | '*' {
  if (list.trim() === '*') return '*';
  return list
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean);
}

/** `none` clears a budget (null); absent stays. */
const clearable = (text: string | undefined) => (text === undefined ? undefined : text.trim().toLowerCase() === 'none' ? null : text);

function budgetText(a: AccountJson): string {
  return a.budget === null ? 'none' : `${usdFigure(a.budget)}/${String(a.budget_period)} (used ${usdFigure(a.budget_used)}, resets ${String(a.budget_resets_at)})`;
}

function modelsText(models: AccountJson['allowed_models']): string {
  return models === '*' ? 'all models' : models.join(',') || '(none)';
}

function printAccount(a: AccountJson): void {
  printTable(
    ['FIELD', 'VALUE'],
    [
      ['id', a.id],
      ['name', a.name],
      ['status', a.status],
      ['personal', a.personal ? 'yes' : 'no'],
      ['balance', usdFigure(a.balance)],
      ['held', usdFigure(a.held)],
      ['available', usdFigure(a.available)],
      ['spent', usdFigure(a.spent)],
      ['budget', budgetText(a)],
      ['token models', modelsText(a.allowed_models)],
      ['token', a.token_prefix === null ? 'none' : `${a.token_prefix}...`],
      ['created', a.created_at],
    ],
  );
}

async function allKeys(store: Store, config: Parameters<typeof listAccountKeys>[1], id: string): Promise<KeyJson[]> {
  const page = (after?: string) => listAccountKeys(store, config, id, { limit: 500, ...(after ? { after } : {}) });
  const keys: KeyJson[] = [];
  for await (const key of walkPages(await page(), page)) keys.push(key);
  return keys;
}

function accountInput(opts: { name?: string; balance?: string; budget?: string; budgetPeriod?: string; models?: string }): AccountInput {
  return {
    ...(opts.name !== undefined ? { name: opts.name } : {}),
    ...(opts.balance !== undefined ? { balance: opts.balance } : {}),
    ...(opts.budget !== undefined ? { budget: clearable(opts.budget) } : {}),
    ...(opts.budgetPeriod !== undefined ? { budget_period: clearable(opts.budgetPeriod) } : {}),
    ...(opts.models !== undefined ? { allowed_models: modelList(opts.models) } : {}),
  };
}

function moneyLine(a: AccountJson): string {
  return `balance ${usdFigure(a.balance)}, available ${usdFigure(a.available)}`;
}

export function registerAccountCommands(program: Command): void {
  const accounts = program.command('accounts').description('accounts: the money many keys share, with their caps');

  accounts
    .command('create')
    .description('create an account (top it up, then give it keys: keys create --account ID)')
    .requiredOption('--name <name>', 'a label for the account')
    .option('--balance <usd>', 'opening balance in USD', '0')
    .option('--budget <usd>', 'spend cap per budget period for all its keys together (USD)')
    .option('--budget-period <period>', 'day, week or month (UTC; month when only --budget is given)')
    .option('--models <ids>', "models the account's token may give its own keys: comma-separated IDs, or * (the default)")
    .option('--json', 'print one JSON object')
    .action(async (opts: { name: string; balance: string; budget?: string; budgetPeriod?: string; models?: string; json?: boolean }, command: Command) => {
      await withStore(command, async (store, config) => {
        const account = accountObject(await createAccount(store, config, accountInput(opts)));
        if (opts.json) return printJson(account);
        process.stdout.write(`Created account ${account.id} (${account.name}): ${moneyLine(account)}; budget ${budgetText(account)}.\n`);
      });
    });

  accounts
    .command('list')
    .description('list accounts with their money (personal accounts, one per key made without one, with --all)')
    .option('--all', 'include personal accounts')
    .option('--status <status>', 'only active or suspended accounts')
    .option('--json', 'print a JSON array')
    .action(async (opts: { all?: boolean; status?: string; json?: boolean }, command: Command) => {
      await withStore(command, async (store) => {
        const input = { include_personal: opts.all === true, ...(opts.status !== undefined ? { status: opts.status } : {}) };
        const page = (after?: string) => listAccounts(store, { ...input, limit: 500, ...(after ? { after } : {}) });
        const all: AccountJson[] = [];
        for await (const account of walkPages(await page(), page)) all.push(account);
        if (opts.json) return printJson(all);
        printTable(
          ['ID', 'NAME', 'BALANCE', 'HELD', 'AVAILABLE', 'SPENT', 'BUDGET', 'STATUS'],
          all.map((a) => [
            a.id,
            a.personal ? `${a.name} (personal)` : a.name,
            usdFigure(a.balance),
            usdFigure(a.held),
            usdFigure(a.available),
            usdFigure(a.spent),
            a.budget === null ? '-' : `${usdFigure(a.budget)}/${String(a.budget_period)}`,
            a.status,
          ]),
        );
      });
    });

  accounts
    .command('show <id>')
    .description("one account, with each key's spend, held, credit limit and credit left")
    .option('--json', 'print one JSON object (the account, with its key objects as `keys`)')
    .action(async (id: string, opts: { json?: boolean }, command: Command) => {
      await withStore(command, async (store, config) => {
        const account = accountObject(await requireAccount(store, id));
        const records = new Map((await store.accounts.keys(id)).map((k) => [k.id, k]));
        const keys = await allKeys(store, config, id);
        if (opts.json) return printJson({ ...account, keys });
        printAccount(account);
        process.stdout.write(`\nKeys (${keys.length}):\n`);
        printTable(
          ['ID', 'NAME', 'SPENT', 'HELD', 'CREDIT LIMIT', 'CREDIT LEFT', 'STATUS'],
          keys.map((k) => [
            k.id,
            k.name,
            usdFigure(k.spent),
            // The key's own holds in flight (a key object's `held` is its account's).
            usd(records.get(k.id)?.held ?? 0),
            k.credit_limit === null ? 'none' : usdFigure(k.credit_limit),
            k.credit_left === null ? '-' : usdFigure(k.credit_left),
            k.expires_at !== null && k.expires_at <= new Date().toISOString() ? 'expired' : k.status,
          ]),
        );
      });
    });

  accounts
    .command('topup <id>')
    .description('add credit to the account (a ledger entry); every key of it can spend it')
    .requiredOption('--amount <usd>', 'USD to add')
    .option('--note <text>', 'kept on the ledger entry (e.g. an invoice number)')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { amount: string; note?: string; json?: boolean }, command: Command) => {
      await withStore(command, async (store) => {
        const before = await requireAccount(store, id);
        const after = await topUpAccount(store, id, opts.amount, opts.note);
        const account = accountObject(after);
        if (opts.json) return printJson(account);
        process.stdout.write(`Topped up account ${account.id} by ${usd(after.balance - before.balance)}: ${moneyLine(account)}.\n`);
      });
    });

  accounts
    .command('adjust <id>')
    .description('a correction of either sign (an adjust ledger entry); never below zero available')
    .requiredOption('--amount <usd>', 'USD, negative to take credit away (--amount=-2.5)')
    .requiredOption('--reason <text>', 'why (kept on the ledger entry)')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { amount: string; reason: string; json?: boolean }, command: Command) => {
      await withStore(command, async (store) => {
        const account = accountObject(await adjustAccount(store, id, opts.amount, opts.reason));
        if (opts.json) return printJson(account);
        process.stdout.write(`Adjusted account ${account.id} by ${opts.amount} USD: ${moneyLine(account)}.\n`);
      });
    });

  for (const [verb, status, description, done] of [
    ['suspend', 'suspended', 'none of its keys can start a request (402 account_suspended) until resumed', 'Suspended'],
    ['resume', 'active', 'its keys work again', 'Resumed'],
  ] as const) {
    accounts
      .command(`${verb} <id>`)
      .description(description)
      .option('--json', 'print one JSON object')
      .action(async (id: string, opts: { json?: boolean }, command: Command) => {
        await withStore(command, async (store) => {
          const account = accountObject(await setAccountStatus(store, id, status));
          if (opts.json) return printJson(account);
          process.stdout.write(`${done} account ${account.id} (${account.name}).\n`);
        });
      });
  }

  accounts
    .command('set <id>')
    .description("change an account's name, budget or token models; --budget none clears the budget")
    .option('--name <name>', 'a new label')
    .option('--budget <usd>', 'spend cap per budget period for all its keys together (USD|none)')
    .option('--budget-period <period>', 'day, week or month (UTC)')
    .option('--models <ids>', "models the account's token may give its own keys: comma-separated IDs, or *")
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { name?: string; budget?: string; budgetPeriod?: string; models?: string; json?: boolean }, command: Command) => {
      const input = accountInput(opts);
      if (Object.keys(input).length === 0) throw new CliError('give at least one of --name, --budget, --budget-period, --models');
      await withStore(command, async (store, config) => {
        const account = accountObject(await updateAccount(store, config, id, input));
        if (opts.json) return printJson(account);
        process.stdout.write(`Account ${account.id} (${account.name}): budget ${budgetText(account)}; token models ${modelsText(account.allowed_models)}.\n`);
      });
    });

  accounts
    .command('token <id>')
    .description("issue (or rotate) the account's self-service token (tga-...), printed once; --revoke removes it")
    .option('--revoke', 'the token stops working at once')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { revoke?: boolean; json?: boolean }, command: Command) => {
      await withStore(command, async (store) => {
        if (opts.revoke) {
          const account = accountObject(await revokeAccountToken(store, id));
          if (opts.json) return printJson(account);
          process.stdout.write(`Revoked the token of account ${account.id} (${account.name}).\n`);
          return;
        }
        const { account, token } = await issueAccountToken(store, id);
        if (opts.json) return printJson({ ...accountObject(account), token });
        // The token alone on the first line, in the same write as the rest: `... | head -1` keeps it.
        process.stdout.write(`${token}\nNew token for account ${account.id} (${account.name}); any earlier one no longer works.\n${TOKEN_NOTE}\n`);
      });
    });
}

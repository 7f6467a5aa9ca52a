// `tollgate codes ...`: create, list, revoke and export redemption codes — thin over operations/codes.ts,
// which the admin API and the dashboard share (docs/adr/0051-redemption-codes.md). `create` prints the
// codes once, one per line on stdout (a script redirects them to a file); what they are goes to stderr.
import type { Command } from 'commander';
import { stringify } from 'csv-stringify';
import { CODE_CSV_COLUMNS, codeCsvRecord, createCodes, listCodes, revokeBatch, revokeCode, walkCodes } from '../operations/codes.js';
import type { CodeJson } from '../operations/json-types.js';
import { walkPages } from '../operations/page.js';
import { CliError, withStore } from './context.js';
import { printJson, printTable, usdFigure } from './format.js';

interface FilterFlags {
  status?: string;
  batch?: string;
}

const filterOf = (opts: FilterFlags) => ({
  ...(opts.status !== undefined ? { status: opts.status } : {}),
  ...(opts.batch !== undefined ? { batch_id: opts.batch } : {}),
});

export function registerCodeCommands(program: Command): void {
  const codes = program.command('codes').description('redemption codes: vouchers an account redeems for credit (POST /v1/account/redeem)');

  codes
    .command('create')
    .description('make a batch of codes; each is printed once, only its hash is kept')
    .requiredOption('--amount <usd>', 'USD each code credits')
    .option('--count <n>', 'how many codes (1 to 1000)', '1')
    .option('--expires <when>', 'an ISO 8601 time or a duration from now (30d, 12h); never by default')
    .option('--account <id>', 'only this account may redeem them')
    .option('--note <text>', 'kept with each code (e.g. the campaign)')
    .option('--json', 'print one JSON object (the batch, with its codes)')
    .action(async (opts: { amount: string; count: string; expires?: string; account?: string; note?: string; json?: boolean }, command: Command) => {
      await withStore(command, async (store) => {
        const batch = await createCodes(store, {
          amount: opts.amount,
          count: opts.count,
          ...(opts.expires !== undefined ? { expires_at: opts.expires } : {}),
          ...(opts.account !== undefined ? { account_id: opts.account } : {}),
          ...(opts.note !== undefined ? { note: opts.note } : {}),
        });
        if (opts.json) return printJson(batch);
        process.stdout.write(batch.codes.map((c) => `${c.code}\n`).join(''));
        const first = batch.codes[0]!;
        process.stderr.write(
          `Created ${batch.count} code${batch.count === 1 ? '' : 's'} of ${usdFigure(batch.amount)} in batch ${batch.batch_id}` +
            `${first.account_id ? ` for account ${first.account_id}` : ''}${first.expires_at ? `, expiring ${first.expires_at}` : ''}.\n` +
            'The codes above are shown only now; only their hashes are stored. Redeem with POST /v1/account/redeem {"code": "tgr-..."}.\n',
        );
      });
    });

  codes
    .command('list')
    .description('codes in creation order, with their status (never the codes themselves)')
    .option('--status <status>', 'unused, redeemed, revoked or expired')
    .option('--batch <id>', 'only this batch')
    .option('--json', 'print a JSON array')
    .action(async (opts: FilterFlags & { json?: boolean }, command: Command) => {
      await withStore(command, async (store) => {
        const page = (after?: string) => listCodes(store, { ...filterOf(opts), limit: 500, ...(after ? { after } : {}) });
        const all: CodeJson[] = [];
        for await (const code of walkPages(await page(), page)) all.push(code);
        if (opts.json) return printJson(all);
        printTable(
          ['ID', 'PREFIX', 'AMOUNT', 'STATUS', 'BATCH', 'ACCOUNT', 'EXPIRES', 'REDEEMED BY'],
          all.map((c) => [
            c.id,
            `${c.prefix}...`,
            usdFigure(c.amount),
            c.status,
            c.batch_id,
            c.account_id ?? 'any',
            c.expires_at ?? 'never',
            c.redeemed_account_id === null ? '-' : `${c.redeemed_account_id}${c.redeemed_key_id ? ` (${c.redeemed_key_id})` : ''}`,
          ]),
        );
      });
    });

  codes
    .command('revoke [id]')
    .description('revoke a code, or with --batch every unredeemed code of a batch')
    .option('--batch <id>', 'the batch to revoke')
    .option('--json', 'print one JSON object')
    .action(async (id: string | undefined, opts: { batch?: string; json?: boolean }, command: Command) => {
      if ((id === undefined) === (opts.batch === undefined)) throw new CliError('codes revoke: name one code id or --batch ID');
      await withStore(command, async (store) => {
        const result = id !== undefined ? await revokeCode(store, id) : await revokeBatch(store, opts.batch);
        if (opts.json) return printJson(result);
        process.stdout.write(
          id !== undefined
            ? `${result.revoked === 1 ? 'Revoked' : 'Already revoked:'} ${id}.\n`
            : `Revoked ${result.revoked} code${result.revoked === 1 ? '' : 's'} of batch ${opts.batch} (redeemed and revoked ones stay as they are).\n`,
        );
      });
    });

  codes
    .command('export')
    .description('write the codes as CSV to stdout: ids, prefixes and status, never a code')
    .requiredOption('--csv', 'CSV (the one format)')
    .option('--status <status>', 'unused, redeemed, revoked or expired')
    .option('--batch <id>', 'only this batch')
    .action(async (opts: FilterFlags, command: Command) => {
      await withStore(command, async (store) => {
        const csv = stringify({ header: true, columns: [...CODE_CSV_COLUMNS] });
        const done = new Promise<void>((resolve, reject) => {
          csv.on('error', reject);
          csv.on('end', resolve);
        });
        csv.on('data', (chunk: Buffer) => process.stdout.write(chunk));
        for await (const code of walkCodes(store, filterOf(opts))) csv.write(codeCsvRecord(code));
        csv.end();
        await done;
      });
    });
}

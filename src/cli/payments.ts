// `tollgate payments list [--account ID] [--json]`: Stripe payments, newest first, with what refunds and
// disputes took back — thin over operations/payments.ts, which GET /admin/v1/payments shares
// (docs/adr/0050-stripe-top-ups.md). --json prints the objects the admin API lists.
import type { Command } from 'commander';
import { listPayments, type PaymentJson } from '../operations/payments.js';
import { walkPages } from '../operations/page.js';
import { withStore } from './context.js';
import { printJson, printTable, usdFigure } from './format.js';

export function registerPaymentCommands(program: Command): void {
  const payments = program.command('payments').description('payments customers made to add credit (Stripe Checkout)');
  payments
    .command('list')
    .description('list payments newest first, with refunded, disputed and unrecovered amounts')
    .option('--account <id>', "only this account's payments")
    .option('--json', 'print a JSON array')
    .action(async (opts: { account?: string; json?: boolean }, command: Command) => {
      await withStore(command, async (store) => {
        const input = opts.account !== undefined ? { account_id: opts.account } : {};
        const page = (after?: string) => listPayments(store, { ...input, limit: 500, ...(after ? { after } : {}) });
        const all: PaymentJson[] = [];
        for await (const payment of walkPages(await page(), page)) all.push(payment);
        if (opts.json) return printJson(all);
        printTable(
          ['ID', 'ACCOUNT', 'AMOUNT', 'REFUNDED', 'DISPUTED', 'UNRECOVERED', 'KEY', 'CREATED'],
          all.map((p) => [p.id, p.account_id, usdFigure(p.amount), usdFigure(p.refunded), usdFigure(p.disputed), usdFigure(p.unrecovered), p.key_id ?? '-', p.created_at]),
        );
      });
    });
}

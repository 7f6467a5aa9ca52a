// `tollgate webhooks list|resend ID`: the webhook outbox (operations/webhooks.ts, the admin API's verbs).
import type { Command } from 'commander';
import { listWebhookEvents, resendWebhookEvent, webhookEventObject } from '../operations/webhooks.js';
import type { WebhookEventJson } from '../operations/json-types.js';
import { walkPages } from '../operations/page.js';
import { withStore } from './context.js';
import { printJson, printTable } from './format.js';

export function registerWebhookCommands(program: Command): void {
  const webhooks = program.command('webhooks').description('signed webhooks out: the events written and how their delivery went');

  webhooks
    .command('list')
    .description('list webhook events, newest first, with status, attempts and last error')
    .option('--type <type>', 'only events of this type (e.g. key.revoked)')
    .option('--status <status>', 'only pending, delivered, failed or skipped events')
    .option('--limit <n>', 'at most this many events', '100')
    .option('--json', 'print a JSON array')
    .action(async (opts: { type?: string; status?: string; limit: string; json?: boolean }, command: Command) => {
      await withStore(command, async (store) => {
        const wanted = Number(opts.limit);
        const input = { ...(opts.type !== undefined ? { type: opts.type } : {}), ...(opts.status !== undefined ? { status: opts.status } : {}) };
        const page = (after?: string) => listWebhookEvents(store, { ...input, limit: String(Math.min(wanted, 1000)), ...(after ? { after } : {}) });
        const events: WebhookEventJson[] = [];
        for await (const event of walkPages(await page(), page)) {
          if (events.length >= wanted) break;
          events.push(event);
        }
        if (opts.json) return printJson(events);
        printTable(
          ['ID', 'TYPE', 'CREATED', 'STATUS', 'ATTEMPTS', 'LAST ERROR'],
          events.map((e) => [String(e.id), e.type, e.created_at, e.status, String(e.attempts), e.last_error ?? '-']),
        );
      });
    });

  webhooks
    .command('resend <id>')
    .description('deliver an event again, now, to every configured endpoint that wants it (same webhook-id)')
    .option('--json', 'print the event as JSON')
    .action(async (id: string, opts: { json?: boolean }, command: Command) => {
      await withStore(command, async (store) => {
        const event = webhookEventObject(await resendWebhookEvent(store, id));
        if (opts.json) return printJson(event);
        process.stdout.write(`Webhook event ${event.id} (${event.type}) is due again now; a running gateway delivers it.\n`);
      });
    });
}

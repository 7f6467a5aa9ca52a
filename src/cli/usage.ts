// `tollgate usage`: per-request usage rows, failed requests included (cost 0) — the admin API's usage
// listing (operations/usage.ts), shown oldest first.
import type { Command } from 'commander';
import { usageJson, walkUsage } from '../operations/usage.js';
import type { UsageRecord } from '../storage/types.js';
import { CliError, withStore } from './context.js';
import { printJson, printTable, usd } from './format.js';

interface UsageOptions {
  key?: string;
  account?: string;
  model?: string;
  status?: string;
  endpoint?: string;
  session?: string;
  since?: string;
  until?: string;
  limit: string;
  json?: boolean;
}

export function registerUsageCommand(program: Command): void {
  program
    .command('usage')
    .description('per-request usage rows, oldest first')
    .option('--key <id>', 'only this key')
    .option('--account <id>', "only this account's keys")
    .option('--model <id>', 'only this model')
    .option('--status <status>', 'only this HTTP status, or a class: 2xx, 4xx, 5xx, error (400 and above)')
    .option('--endpoint <api>', 'only this client API: chat, embeddings, messages, responses')
    .option('--session <id>', "only this agent session (Claude Code's or Codex's session id)")
    .option('--since <iso>', 'only rows at or after this time (ISO 8601)')
    .option('--until <iso>', 'only rows before this time (ISO 8601)')
    .option('--limit <n>', 'at most the newest N rows', '1000')
    .option('--json', 'print a JSON array')
    .action(async (opts: UsageOptions, command: Command) => {
      const limit = Number(opts.limit);
      if (!Number.isSafeInteger(limit) || limit < 1) throw new CliError(`--limit must be a positive integer, got "${opts.limit}"`);
      await withStore(command, async (store) => {
        const filter = {
          key_id: opts.key,
          account_id: opts.account,
          model: opts.model,
          status: opts.status,
          endpoint: opts.endpoint,
          session_id: opts.session,
          since: opts.since,
          until: opts.until,
        };
        // Newest first from the store, a page at a time; the newest `limit` are printed oldest first.
        const rows: UsageRecord[] = [];
        for await (const row of walkUsage(store, filter, Math.min(limit, 1000))) {
          rows.push(row);
          if (rows.length === limit) break;
        }
        rows.reverse();
        if (opts.json) return printJson(rows.map(usageJson));
        printTable(
          ['TIME', 'KEY', 'API', 'SESSION', 'MODEL', 'UPSTREAM', 'STATUS', 'ERROR', 'IN', 'CACHED', 'CACHE-WRITE', 'OUT', 'REASONING', 'COST', 'SOURCE'],
          rows.map((r) => [
            new Date(r.time).toISOString(),
            r.keyId,
            r.endpoint ?? '-',
            r.sessionId ?? '-',
            r.model ?? '-',
            r.provider === null ? '-' : `${r.provider}/${r.upstreamModel}`,
            String(r.status),
            r.errorCode ?? '-',
            String(r.inputTokens),
            String(r.cachedInputTokens),
            String(r.cacheWriteTokens ?? 0),
            String(r.outputTokens),
            String(r.reasoningTokens),
            usd(r.cost),
            r.usageSource,
          ]),
        );
      });
    });
}

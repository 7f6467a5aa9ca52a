// `tollgate usage`: per-request usage rows, failed requests included (cost 0).
import type { Command } from 'commander';
import { CliError, withStore } from './context.js';
import { printJson, printTable, usageJson, usd } from './format.js';

export function registerUsageCommand(program: Command): void {
  program
    .command('usage')
    .description('per-request usage rows, oldest first')
    .option('--key <id>', 'only this key')
    .option('--since <iso>', 'only rows at or after this time (ISO 8601)')
    .option('--limit <n>', 'at most the newest N rows', '1000')
    .option('--json', 'print a JSON array')
    .action(async (opts: { key?: string; since?: string; limit: string; json?: boolean }, command: Command) => {
      const since = opts.since === undefined ? undefined : Date.parse(opts.since);
      if (since !== undefined && Number.isNaN(since)) throw new CliError(`--since must be an ISO 8601 time, got "${opts.since}"`);
      const limit = Number(opts.limit);
      if (!Number.isSafeInteger(limit) || limit < 1) throw new CliError(`--limit must be a positive integer, got "${opts.limit}"`);
      await withStore(command, async (store) => {
        const rows = await store.usage.list({ ...(opts.key ? { keyId: opts.key } : {}), ...(since !== undefined ? { since } : {}), limit });
        if (opts.json) return printJson(rows.map(usageJson));
        printTable(
          ['TIME', 'KEY', 'MODEL', 'UPSTREAM', 'STATUS', 'IN', 'CACHED', 'CACHE-WRITE', 'OUT', 'REASONING', 'COST', 'SOURCE'],
          rows.map((r) => [
            new Date(r.time).toISOString(),
            r.keyId,
            r.model,
            `${r.provider}/${r.upstreamModel}`,
            String(r.status),
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

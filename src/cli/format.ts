// How keys and usage rows look on the command line: JSON objects (product.md §2) and plain tables.
import { formatUsd, nanoToUsd } from '../billing/money.js';
import type { KeyRecord, UsageRecord } from '../storage/types.js';

export function keyJson(key: KeyRecord): Record<string, unknown> {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    balance: nanoToUsd(key.balance),
    held: nanoToUsd(key.held),
    available: nanoToUsd(key.balance - key.held),
    allowed_models: key.allowedModels === '*' ? '*' : [...key.allowedModels],
    status: key.status,
    created_at: key.createdAt,
  };
}

export function usageJson(row: UsageRecord): Record<string, unknown> {
  return {
    request_id: row.requestId,
    time: new Date(row.time).toISOString(),
    key_id: row.keyId,
    model: row.model,
    provider: row.provider,
    upstream_model: row.upstreamModel,
    status: row.status,
    input_tokens: row.inputTokens,
    cached_input_tokens: row.cachedInputTokens,
    output_tokens: row.outputTokens,
    reasoning_tokens: row.reasoningTokens,
    cost: nanoToUsd(row.cost),
    usage_source: row.usageSource,
    attempts: row.attempts.map((a) => ({ provider: a.provider, status: a.status, duration_ms: a.durationMs })),
  };
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function usd(nano: number): string {
  return `$${formatUsd(nano)}`;
}

export function modelsText(models: KeyRecord['allowedModels']): string {
  return models === '*' ? 'all models' : models.join(',') || '(none)';
}

/** A left-aligned text table. */
export function printTable(headers: string[], rows: string[][]): void {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  process.stdout.write(`${[line(headers), ...rows.map(line)].join('\n')}\n`);
}

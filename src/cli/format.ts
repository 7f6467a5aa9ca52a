// How keys and usage rows look on the command line: JSON objects (product.md §2) and plain tables.
import { formatUsd, nanoToUsd } from '../billing/money.js';
import type { KeyRecord, UsageRecord } from '../storage/types.js';

/** A key object's limits in a few words: "rpm 60, tpm 100000, 4 at once, $5/day" or "none". */
export function limitsText(object: Record<string, unknown>): string {
  const l = object.limits as { rpm: number | null; tpm: number | null; max_concurrent: number | null; budget: number | null; budget_period: string | null };
  const parts: string[] = [];
  if (l.rpm !== null) parts.push(`rpm ${l.rpm}`);
  if (l.tpm !== null) parts.push(`tpm ${l.tpm}`);
  if (l.max_concurrent !== null) parts.push(`${l.max_concurrent} at once`);
  if (l.budget !== null) parts.push(`$${l.budget}/${l.budget_period}`);
  return parts.join(', ') || 'none';
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
    cache_write_tokens: row.cacheWriteTokens ?? 0,
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

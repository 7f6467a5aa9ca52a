// How keys and usage rows look on the command line: JSON objects (product.md §2) and plain tables.
import { formatUsd, parseDecimal } from '../billing/money.js';
import type { KeyRecord } from '../storage/types.js';

/** A key object's limits in a few words: "rpm 60, tpm 100000, 4 at once, $5/day" or "none". */
export function limitsText(object: Record<string, unknown>): string {
  const l = object.limits as { rpm: number | null; tpm: number | null; max_concurrent: number | null; budget: number | null; budget_period: string | null };
  const parts: string[] = [];
  if (l.rpm !== null) parts.push(`rpm ${l.rpm}`);
  if (l.tpm !== null) parts.push(`tpm ${l.tpm}`);
  if (l.max_concurrent !== null) parts.push(`${l.max_concurrent} at once`);
  if (l.budget !== null) parts.push(`${usdFigure(l.budget)}/${l.budget_period}`);
  return parts.join(', ') || 'none';
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function usd(nano: number): string {
  return `$${formatUsd(nano)}`;
}

/**
 * A key object's USD figure (a JSON number, as the admin API sends it) in the table's exact form: $1.5,
 * never 1e-7. Read through its shortest decimal form, which is the exact amount for every one the ledger
 * holds (money.ts MAX_NANO); nothing is ever shown as $0 for being large.
 */
export function usdFigure(value: unknown): string {
  const nano = typeof value === 'number' ? parseDecimal(value, 9) : undefined;
  return nano === undefined ? `$${String(value)}` : `$${formatUsd(nano)}`;
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

// Row shapes shared by every dialect: the same columns in SQLite and PostgreSQL (money and times as
// integers; the allow-list and the attempts as JSON text), and their mapping to the storage records.
import type { AllowedModels, Attempt, KeyRecord, UsageRecord } from './types.js';

export interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  balance: number;
  held: number;
  spent: number;
  allowed_models: string;
  status: 'active' | 'revoked';
  created_at: string;
}

export const KEY_COLUMNS = 'id, name, prefix, balance, held, spent, allowed_models, status, created_at';

// Allow-lists are re-read on every authenticated request; parsing each distinct one once is enough.
const parsedAllowLists = new Map<string, AllowedModels>();

function parseAllowList(text: string): AllowedModels {
  let parsed = parsedAllowLists.get(text);
  if (parsed === undefined) {
    parsed = text === '*' ? '*' : Object.freeze(JSON.parse(text) as string[]);
    if (parsedAllowLists.size > 10_000) parsedAllowLists.clear();
    parsedAllowLists.set(text, parsed);
  }
  return parsed;
}

export function serialiseAllowList(models: AllowedModels): string {
  return models === '*' ? '*' : JSON.stringify([...models]);
}

export function keyRecordOf(row: KeyRow): KeyRecord {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    balance: row.balance,
    held: row.held,
    spent: row.spent,
    allowedModels: parseAllowList(row.allowed_models),
    status: row.status,
    createdAt: row.created_at,
  };
}

export interface UsageRow {
  request_id: string;
  created_at: number;
  key_id: string;
  model: string;
  provider: string;
  upstream_model: string;
  status: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost: number;
  usage_source: 'upstream' | 'estimated';
  attempts: string;
}

/** The usage_records columns in insert order, and the values of one record in that order. */
export const USAGE_COLUMNS = [
  'request_id',
  'created_at',
  'key_id',
  'model',
  'provider',
  'upstream_model',
  'status',
  'input_tokens',
  'cached_input_tokens',
  'output_tokens',
  'reasoning_tokens',
  'cost',
  'usage_source',
  'attempts',
] as const;

export function usageValues(usage: UsageRecord): unknown[] {
  const attempts = usage.attempts.map((a: Attempt) => ({ provider: a.provider, status: a.status, duration_ms: a.durationMs }));
  return [
    usage.requestId,
    usage.time,
    usage.keyId,
    usage.model,
    usage.provider,
    usage.upstreamModel,
    usage.status,
    usage.inputTokens,
    usage.cachedInputTokens,
    usage.outputTokens,
    usage.reasoningTokens,
    usage.cost,
    usage.usageSource,
    JSON.stringify(attempts),
  ];
}

export function usageRecordOf(row: UsageRow): UsageRecord {
  const attempts = JSON.parse(row.attempts) as Array<{ provider: string; status: number; duration_ms: number }>;
  return {
    requestId: row.request_id,
    time: row.created_at,
    keyId: row.key_id,
    model: row.model,
    provider: row.provider,
    upstreamModel: row.upstream_model,
    status: row.status,
    inputTokens: row.input_tokens,
    cachedInputTokens: row.cached_input_tokens,
    outputTokens: row.output_tokens,
    reasoningTokens: row.reasoning_tokens,
    cost: row.cost,
    usageSource: row.usage_source,
    attempts: attempts.map((a) => ({ provider: a.provider, status: a.status, durationMs: a.duration_ms })),
  };
}

/**
 * The SQL both dialects share, given their placeholders (`?` or `$n`): the same statement text means the
 * same semantics, so the billing rules cannot drift apart between SQLite and PostgreSQL.
 */
export const SHARED_SQL = {
  /** Admission: the one conditional UPDATE. Params: amount, key id. */
  admit: (amount: string, keyId: string) =>
    `UPDATE api_keys SET held = held + ${amount} WHERE id = ${keyId} AND status = 'active' AND balance - held >= ${amount}`,
  /** One usage row per request; a second write of the same request is a no-op. Params: usageValues(). */
  insertUsage: (placeholders: readonly string[]) =>
    `INSERT INTO usage_records (${USAGE_COLUMNS.join(', ')}) VALUES (${placeholders.join(', ')}) ON CONFLICT (request_id) DO NOTHING`,
  /** balance, held and spent derived from the append-only entries alone (PostgreSQL's SUM of BIGINT is NUMERIC, hence the casts). Params: key id. */
  derivedFigures: (keyId: string) => `SELECT
      CAST(COALESCE(SUM(CASE kind WHEN 'topup' THEN amount WHEN 'adjust' THEN amount WHEN 'capture' THEN -amount ELSE 0 END), 0) AS BIGINT) AS balance,
      CAST(COALESCE(SUM(CASE kind WHEN 'hold' THEN amount WHEN 'release' THEN -amount ELSE 0 END), 0) AS BIGINT) AS held,
      CAST(COALESCE(SUM(CASE kind WHEN 'capture' THEN amount ELSE 0 END), 0) AS BIGINT) AS spent
    FROM ledger_entries WHERE key_id = ${keyId}`,
};

// The usage export as CSV, streamed: rows come from the store a page at a time and go through
// csv-stringify into the response with backpressure, so an export of any size never sits in memory.
// Its rows and their order are those of GET /admin/v1/usage with the same filters.
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { formatUsd } from '../../../billing/money.js';
import { usageFilterOf, walkUsage, type UsageFilterInput } from '../../../operations/usage.js';
import type { Store, UsageRecord } from '../../../storage/types.js';

export const USAGE_CSV_COLUMNS = [
  'request_id',
  'time',
  'key_id',
  'model',
  'provider',
  'upstream_model',
  'status',
  'input_tokens',
  'cached_input_tokens',
  'cache_write_tokens',
  'output_tokens',
  'reasoning_tokens',
  'cost',
  'usage_source',
  'attempts',
  'endpoint',
  'error_code',
  'error_message',
  'duration_ms',
  'first_token_ms',
  'session_id',
] as const;

/** An absent value is an empty field. */
const field = (value: string | number | null | undefined): string => (value === null || value === undefined ? '' : String(value));

/** One CSV record: cost as an exact decimal USD string, attempts as their JSON array. */
function csvRecord(row: UsageRecord): string[] {
  return [
    row.requestId,
    new Date(row.time).toISOString(),
    row.keyId,
    field(row.model),
    field(row.provider),
    field(row.upstreamModel),
    String(row.status),
    String(row.inputTokens),
    String(row.cachedInputTokens),
    String(row.cacheWriteTokens ?? 0),
    String(row.outputTokens),
    String(row.reasoningTokens),
    formatUsd(row.cost),
    row.usageSource,
    JSON.stringify(row.attempts.map((a) => ({ provider: a.provider, status: a.status, duration_ms: a.durationMs }))),
    field(row.endpoint),
    field(row.errorCode),
    field(row.errorMessage),
    field(row.durationMs),
    field(row.firstTokenMs),
    field(row.sessionId),
  ];
}

export async function sendUsageCsv(reply: FastifyReply, store: Store, filter: UsageFilterInput, log: Logger): Promise<FastifyReply> {
  // Checked before the 200 goes out: a bad filter is still a JSON 400.
  usageFilterOf(filter);
  const records = Readable.from(
    (async function* csvRecords() {
      for await (const row of walkUsage(store, filter)) yield csvRecord(row);
    })(),
  );
  const csv = stringify({ header: true, columns: [...USAGE_CSV_COLUMNS] });
  // A database failure mid-export can only cut the body short (the status is sent): say so in the log.
  records.on('error', (error) => {
    log.error({ err: error }, 'usage export failed');
    csv.destroy(error);
  });
  records.pipe(csv);
  return reply
    .code(200)
    .header('content-disposition', 'attachment; filename="tollgate-usage.csv"')
    .type('text/csv; charset=utf-8')
    .send(csv);
}

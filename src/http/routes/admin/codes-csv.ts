// The redemption codes' export as CSV, streamed a page at a time like the usage export: ids, prefixes
// and status, never a code (docs/adr/0051-redemption-codes.md). Its rows are GET /admin/v1/codes's.
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { CODE_CSV_COLUMNS, codeCsvRecord, codeStatusOf, walkCodes, type CodeListInput } from '../../../operations/codes.js';
import type { Store } from '../../../storage/types.js';

export async function sendCodesCsv(reply: FastifyReply, store: Store, filter: Omit<CodeListInput, 'limit' | 'after'>, log: Logger): Promise<FastifyReply> {
  // Checked before the 200 goes out: a bad filter is still a JSON 400.
  codeStatusOf(filter.status);
  const records = Readable.from(
    (async function* csvRecords() {
      for await (const code of walkCodes(store, filter)) yield codeCsvRecord(code);
    })(),
  );
  const csv = stringify({ header: true, columns: [...CODE_CSV_COLUMNS] });
  records.on('error', (error) => {
    log.error({ err: error }, 'redemption codes export failed');
    csv.destroy(error);
  });
  records.pipe(csv);
  return reply
    .code(200)
    .header('content-disposition', 'attachment; filename="tollgate-codes.csv"')
    .type('text/csv; charset=utf-8')
    .send(csv);
}

// /admin/v1/codes...: thin handlers over operations/codes.ts (docs/adr/0051-redemption-codes.md). POST
// create takes an Idempotency-Key like every admin POST; its replay answers the same batch with every
// `code: null` (codes are never kept in clear: a caller that lost the first answer revokes the batch
// and creates another). GET /codes.csv (or /codes?format=csv) exports ids, prefixes and status.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { codeObject, createCodes, listCodes, requireCode, revokeBatch, revokeCode, withoutCodes } from '../../../operations/codes.js';
import { amountField, listQuery, readInput } from './admin-input.js';
import type { AdminDeps } from './admin-deps.js';
import { sendCodesCsv } from './codes-csv.js';
import { idempotentPost } from './idempotent-post.js';

const createBody = z.strictObject({
  amount: amountField,
  count: z.union([z.number(), z.string()]).optional(),
  expires_at: z.union([z.string(), z.null()]).optional(),
  account_id: z.union([z.string(), z.null()]).optional(),
  note: z.union([z.string(), z.null()]).optional(),
});
const filters = { status: z.string().optional(), batch_id: z.string().optional() };
const codesQuery = z.strictObject({ ...listQuery, ...filters, format: z.enum(['json', 'csv']).optional() });
const csvQuery = z.strictObject(filters);
const batchRevokeBody = z.strictObject({ batch_id: z.string() });
const emptyBody = z.strictObject({});
const noQuery = z.strictObject({});

const idOf = (request: FastifyRequest): string => (request.params as { id: string }).id;

export function registerCodeRoutes(app: FastifyInstance, deps: AdminDeps): void {
  const { store } = deps;
  const post = (handler: Parameters<typeof idempotentPost>[1]) => idempotentPost(store.idempotency, handler);

  app.get('/codes', async function listAdminCodes(request, reply) {
    const { format, ...query } = readInput(codesQuery, request.query);
    if (format === 'csv') {
      const { limit: _limit, after: _after, ...filter } = query;
      return sendCodesCsv(reply, store, filter, deps.log);
    }
    return listCodes(store, query);
  });

  app.get('/codes.csv', async function exportAdminCodes(request, reply) {
    return sendCodesCsv(reply, store, readInput(csvQuery, request.query), deps.log);
  });

  app.post(
    '/codes',
    post(async function createAdminCodes(request) {
      const body = readInput(createBody, request.body);
      const batch = await createCodes(store, { ...body, count: body.count ?? 1 });
      return { status: 200, body: batch, replay: withoutCodes(batch) };
    }),
  );

  app.post(
    '/codes/revoke',
    post(async function revokeAdminBatch(request) {
      const body = readInput(batchRevokeBody, request.body);
      return { status: 200, body: await revokeBatch(store, body.batch_id) };
    }),
  );

  app.get('/codes/:id', async function getAdminCode(request) {
    readInput(noQuery, request.query);
    return codeObject(await requireCode(store, idOf(request)));
  });

  app.post(
    '/codes/:id/revoke',
    post(async function revokeAdminCode(request) {
      readInput(emptyBody, request.body);
      return { status: 200, body: await revokeCode(store, idOf(request)) };
    }),
  );
}

// GET /admin/v1/payments[?account_id=ID]: Stripe payments newest first, with what refunds and disputes
// took back (operations/payments.ts, the same as `tollgate payments list`).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { listPayments } from '../../../operations/payments.js';
import { listQuery, readInput } from './admin-input.js';
import type { AdminDeps } from './admin-deps.js';

const paymentsQuery = z.strictObject({ ...listQuery, account_id: z.string().optional() });

export function registerPaymentRoutes(app: FastifyInstance, deps: AdminDeps): void {
  app.get('/payments', async function adminPayments(request) {
    return listPayments(deps.store, readInput(paymentsQuery, request.query));
  });
}

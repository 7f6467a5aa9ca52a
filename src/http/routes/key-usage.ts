// GET /v1/key/usage and /v1/key/usage/summary: the calling key's own usage rows and totals — the admin
// API's usage listing (same filters but key_id, same cursor pagination), limited to the caller's key.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { listUsage, summarizeUsage } from '../../operations/usage.js';
import type { Store } from '../../storage/types.js';
import { readInput } from './admin/admin-input.js';

const filters = {
  model: z.string().optional(),
  provider: z.string().optional(),
  status: z.string().optional(),
  endpoint: z.string().optional(),
  session_id: z.string().optional(),
  request_id: z.string().optional(),
  since: z.string().optional(),
  until: z.string().optional(),
};
const usageQuery = z.strictObject({ ...filters, limit: z.string().optional(), after: z.string().optional() });
const summaryQuery = z.strictObject({ ...filters, group_by: z.string().optional() });

export function registerKeyUsageRoutes(app: FastifyInstance, store: Store): void {
  app.get('/key/usage', async function ownUsage(request) {
    return listUsage(store, { ...readInput(usageQuery, request.query), key_id: request.apiKey!.id });
  });

  app.get('/key/usage/summary', async function ownUsageSummary(request) {
    return summarizeUsage(store, { ...readInput(summaryQuery, request.query), key_id: request.apiKey!.id }, ['day', 'hour', 'model', 'endpoint', 'session']);
  });
}

// /admin/v1/usage, /usage.csv, /usage/summary, /usage/unauthenticated and /providers: thin handlers over operations/.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { providerHealth } from '../../../operations/provider-health.js';
import { listUsage, summarizeUsage, unauthenticatedRequests } from '../../../operations/usage.js';
import { listQuery, readInput, usageFilterQuery } from './admin-input.js';
import type { AdminDeps } from './admin-deps.js';
import { sendUsageCsv } from './usage-csv.js';

const usageQuery = z.strictObject({ ...listQuery, ...usageFilterQuery });
const csvQuery = z.strictObject(usageFilterQuery);
const summaryQuery = z.strictObject({ ...usageFilterQuery, group_by: z.string().optional() });
const unauthenticatedQuery = z.strictObject({ since: z.string().optional(), until: z.string().optional(), group_by: z.string().optional() });
const noQuery = z.strictObject({});

export function registerUsageRoutes(app: FastifyInstance, deps: AdminDeps): void {
  const { store } = deps;

  app.get('/usage', async function adminUsage(request) {
    return listUsage(store, readInput(usageQuery, request.query));
  });

  app.get('/usage.csv', async function adminUsageCsv(request, reply) {
    return sendUsageCsv(reply, store, readInput(csvQuery, request.query), deps.log);
  });

  app.get('/usage/summary', async function adminUsageSummary(request) {
    return summarizeUsage(store, readInput(summaryQuery, request.query));
  });

  app.get('/usage/unauthenticated', async function adminUnauthenticated(request) {
    return unauthenticatedRequests(store, readInput(unauthenticatedQuery, request.query));
  });

  app.get('/providers', async function adminProviders(request) {
    readInput(noQuery, request.query);
    return providerHealth(deps.config, deps.health);
  });
}

// GET /admin/v1/audit[?key_id=ID]: the billing invariants checked over the database (operations/audit.ts,
// the same as `tollgate audit`). Always 200 when the check ran: `ok` and the violations say the result.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { auditLedger, violationJson } from '../../../operations/audit.js';
import { readInput } from './admin-input.js';
import type { AdminDeps } from './admin-deps.js';

const auditQuery = z.strictObject({ key_id: z.string().min(1).optional() });

export function registerAuditRoute(app: FastifyInstance, deps: AdminDeps): void {
  app.get('/audit', async function adminAudit(request) {
    const query = readInput(auditQuery, request.query);
    const report = await auditLedger(deps.store, deps.config, query.key_id === undefined ? {} : { keyId: query.key_id });
    return { object: 'audit', ok: report.ok, violations: report.violations.map(violationJson) };
  });
}

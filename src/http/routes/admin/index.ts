// The admin HTTP API (product.md §9) under /admin/v1, registered only when admin.token is set — without
// it every /admin path is the usual 404. Every request first proves the token (401 otherwise); POSTs
// must be JSON (or bodiless) and take an Idempotency-Key.
import type { FastifyInstance } from 'fastify';
import { useManagementJson } from '../../management-json.js';
import { registerAccountRoutes } from './account-routes.js';
import type { AdminDeps } from './admin-deps.js';
import { adminTokenCheck } from './admin-auth.js';
import { registerAuditRoute } from './audit-routes.js';
import { registerCodeRoutes } from './code-routes.js';
import { registerKeyRoutes } from './key-routes.js';
import { registerPaymentRoutes } from './payment-routes.js';
import { registerUsageRoutes } from './usage-routes.js';
import { registerWebhookRoutes } from './webhook-routes.js';

export function registerAdminApi(app: FastifyInstance, deps: AdminDeps): void {
  const token = deps.config.admin.token;
  if (token === undefined) return;
  const requireAdminToken = adminTokenCheck(token);
  app.register(
    async function adminV1(api) {
      useManagementJson(api);
      api.addHook('onRequest', async function adminAuth(request) {
        requireAdminToken(request.headers.authorization);
      });
      registerKeyRoutes(api, deps);
      registerAccountRoutes(api, deps);
      registerCodeRoutes(api, deps);
      registerUsageRoutes(api, deps);
      registerAuditRoute(api, deps);
      registerWebhookRoutes(api, deps);
      registerPaymentRoutes(api, deps);
    },
    { prefix: '/admin/v1' },
  );
}

// The admin HTTP API (product.md §9) under /admin/v1, registered only when admin.token is set — without
// it every /admin path is the usual 404. Every request first proves the token (401 otherwise); POSTs
// must be JSON (or bodiless) and take an Idempotency-Key.
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../../errors.js';
import { depthLimitedJsonParser, type JsonBodyParser } from '../../json-body.js';
import { registerAccountRoutes } from './account-routes.js';
import type { AdminDeps } from './admin-deps.js';
import { adminTokenCheck } from './admin-auth.js';
import { registerAuditRoute } from './audit-routes.js';
import { registerKeyRoutes } from './key-routes.js';
import { registerUsageRoutes } from './usage-routes.js';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export function registerAdminApi(app: FastifyInstance, deps: AdminDeps): void {
  const token = deps.config.admin.token;
  if (token === undefined) return;
  const requireAdminToken = adminTokenCheck(token);
  app.register(
    async function adminV1(api) {
      // Bodiless verbs (revoke, rotate) may arrive with Content-Type: application/json and no body, as
      // browsers' fetch sends them: an empty body reads as none instead of a 400.
      const parseJson = depthLimitedJsonParser(api.getDefaultJsonParser('error', 'error') as JsonBodyParser);
      api.removeContentTypeParser('application/json');
      api.addContentTypeParser('application/json', { parseAs: 'string' }, function adminJson(request, body, done) {
        if (body === '') done(null, undefined);
        else parseJson(request, body as string, done);
      });
      api.addHook('onRequest', async function adminAuth(request) {
        requireAdminToken(request.headers.authorization);
      });
      api.addHook('preValidation', async function requireJson(request) {
        const hasBody = request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0';
        if ((request.method === 'POST' || request.method === 'PATCH') && hasBody && !JSON_TYPE.test(request.headers['content-type'] ?? '')) {
          throw new GatewayError('unsupported_media_type');
        }
      });
      registerKeyRoutes(api, deps);
      registerAccountRoutes(api, deps);
      registerUsageRoutes(api, deps);
      registerAuditRoute(api, deps);
    },
    { prefix: '/admin/v1' },
  );
}

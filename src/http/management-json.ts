// JSON bodies on the management APIs (/admin/v1 and /v1/account): POSTs and PATCHes must be JSON when
// they carry a body; bodiless verbs (revoke, rotate) may come with no body at all, or with
// Content-Type: application/json and an empty body, as browsers' fetch sends them — an empty body reads
// as none instead of a 400. Bodies are depth-limited like the client APIs'.
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors.js';
import { depthLimitedJsonParser, type JsonBodyParser } from './json-body.js';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** Installs the parser and the Content-Type check on an encapsulated plugin's routes. */
export function useManagementJson(api: FastifyInstance): void {
  const parseJson = depthLimitedJsonParser(api.getDefaultJsonParser('error', 'error') as JsonBodyParser);
  api.removeContentTypeParser('application/json');
  api.addContentTypeParser('application/json', { parseAs: 'string' }, function managementJson(request, body, done) {
    if (body === '') done(null, undefined);
    else parseJson(request, body as string, done);
  });
  api.addHook('preValidation', async function requireJson(request) {
    const hasBody = request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0';
    if ((request.method === 'POST' || request.method === 'PATCH') && hasBody && !JSON_TYPE.test(request.headers['content-type'] ?? '')) {
      throw new GatewayError('unsupported_media_type');
    }
  });
}

// GET /v1/key: the calling key's own balance and limits (operations/key-object.ts's keyHolderJson).
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/types.js';
import { keyHolderJson } from '../../operations/key-object.js';
import type { KeyHolderAnswerJson } from '../../operations/json-types.js';

export function registerKeyRoute(app: FastifyInstance, config: Config): void {
  app.get('/key', async function keyInfo(request, reply) {
    const answer: KeyHolderAnswerJson = { data: keyHolderJson(request.apiKey!, config) };
    return reply.type('application/json').send(JSON.stringify(answer));
  });
}

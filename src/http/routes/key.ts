// GET /v1/key: the calling key's own balance and limits (the shape OpenRouter clients know).
import type { FastifyInstance } from 'fastify';
import { nanoToUsd } from '../../billing/money.js';

export function registerKeyRoute(app: FastifyInstance): void {
  app.get('/key', async function keyInfo(request, reply) {
    const key = request.apiKey!;
    const data = {
      id: key.id,
      name: key.name,
      balance: nanoToUsd(key.balance),
      held: nanoToUsd(key.held),
      available: nanoToUsd(key.balance - key.held),
      usage: nanoToUsd(key.spent),
      allowed_models: key.allowedModels === '*' ? '*' : [...key.allowedModels],
    };
    return reply.type('application/json').send(JSON.stringify({ data }));
  });
}

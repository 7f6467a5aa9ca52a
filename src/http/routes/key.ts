// GET /v1/key: the calling key's own balance and limits (the shape OpenRouter clients know, plus the
// limit fields of the key object).
import type { FastifyInstance } from 'fastify';
import { nanoToUsd } from '../../billing/money.js';
import type { Config } from '../../config/types.js';
import { keyObject } from '../../operations/key-object.js';

export function registerKeyRoute(app: FastifyInstance, config: Config): void {
  app.get('/key', async function keyInfo(request, reply) {
    const key = request.apiKey!;
    const object = keyObject(key, config);
    const data = {
      id: key.id,
      name: key.name,
      balance: object.balance,
      held: object.held,
      available: object.available,
      usage: nanoToUsd(key.spent),
      allowed_models: object.allowed_models,
      limits: object.limits,
      expires_at: object.expires_at,
      budget_used: object.budget_used,
      budget_resets_at: object.budget_resets_at,
    };
    return reply.type('application/json').send(JSON.stringify({ data }));
  });
}

// /admin/v1/keys...: thin handlers over operations/ (parse, call, render). Every POST goes through the
// Idempotency-Key wrapper.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { usdAmount } from '../../../operations/amount-input.js';
import { adjustKey, listLedger, topUpKey } from '../../../operations/key-money.js';
import type { IssuedKeyJson } from '../../../operations/json-types.js';
import { keyObject } from '../../../operations/key-object.js';
import { issueKey, requireKey, revokeKey, rotateKey, updateKey } from '../../../operations/keys.js';
import { listKeys } from '../../../operations/list-keys.js';
import { amountField, limitsObject, listQuery, metadataField, modelsField, readInput } from './admin-input.js';
import type { AdminDeps } from './admin-deps.js';
import { idempotentPost } from './idempotent-post.js';

const expiresField = z.union([z.string(), z.null()]).optional();

/** USD the key may ever spend; null clears it (docs/adr/0047-accounts.md). */
const creditLimitField = z.union([z.number(), z.string(), z.null()]).optional();

const createBody = z.strictObject({
  name: z.string(),
  /** The account the key draws on; absent: a personal account (holding `balance`) is made for it. */
  account_id: z.string().optional(),
  balance: amountField.optional(),
  credit_limit: creditLimitField,
  allowed_models: modelsField.optional(),
  limits: limitsObject.optional(),
  expires_at: expiresField,
  metadata: metadataField.optional(),
});

const patchBody = z.strictObject({
  name: z.string().optional(),
  allowed_models: modelsField.optional(),
  limits: limitsObject.optional(),
  expires_at: expiresField,
  credit_limit: creditLimitField,
  /** Lower an unaffordable max_tokens instead of a 402 (product.md §13). */
  clamp_max_tokens: z.union([z.boolean(), z.string()]).optional(),
  metadata: metadataField.optional(),
});

const topUpBody = z.strictObject({ amount: amountField, note: z.string().optional() });
const adjustBody = z.strictObject({ amount: amountField, reason: z.string() });
const emptyBody = z.strictObject({});
const keysQuery = z.strictObject({ ...listQuery, status: z.string().optional(), name: z.string().optional(), account_id: z.string().optional() });
const ledgerQuery = z.strictObject(listQuery);

const idOf = (request: FastifyRequest): string => (request.params as { id: string }).id;

export function registerKeyRoutes(app: FastifyInstance, deps: AdminDeps): void {
  const { store, config } = deps;
  const post = (handler: Parameters<typeof idempotentPost>[1]) => idempotentPost(store.idempotency, handler);

  app.get('/keys', async function listAdminKeys(request) {
    return listKeys(store, config, readInput(keysQuery, request.query));
  });

  app.post(
    '/keys',
    post(async function createAdminKey(request) {
      const body = readInput(createBody, request.body);
      const { key, secret } = await issueKey(store, config, {
        name: body.name,
        ...(body.account_id !== undefined ? { accountId: body.account_id } : {}),
        ...(body.balance !== undefined ? { balance: usdAmount('balance', body.balance, { allowZero: true }) } : {}),
        allowedModels: body.allowed_models ?? '*',
        limits: {
          ...body.limits,
          ...(body.expires_at !== undefined ? { expires_at: body.expires_at } : {}),
          ...(body.credit_limit !== undefined ? { credit_limit: body.credit_limit } : {}),
        },
        metadata: body.metadata,
      });
      const object = keyObject(key, config);
      return { status: 200, body: { ...object, key: secret } satisfies IssuedKeyJson, replay: { ...object, key: null } satisfies IssuedKeyJson };
    }),
  );

  app.get('/keys/:id', async function getAdminKey(request) {
    return keyObject(await requireKey(store, idOf(request)), config);
  });

  app.patch('/keys/:id', async function patchAdminKey(request) {
    const body = readInput(patchBody, request.body);
    const key = await updateKey(store, config, idOf(request), {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.allowed_models !== undefined ? { allowedModels: body.allowed_models } : {}),
      ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
      limits: {
        ...body.limits,
        ...(body.expires_at !== undefined ? { expires_at: body.expires_at } : {}),
        ...(body.credit_limit !== undefined ? { credit_limit: body.credit_limit } : {}),
        ...(body.clamp_max_tokens !== undefined ? { clamp_max_tokens: body.clamp_max_tokens } : {}),
      },
    });
    return keyObject(key, config);
  });

  app.post(
    '/keys/:id/topup',
    post(async function topUpAdminKey(request, context) {
      const body = readInput(topUpBody, request.body);
      const key = await topUpKey(store, idOf(request), body.amount, body.note, context.operationId ? { requestId: context.operationId } : {});
      return { status: 200, body: keyObject(key, config) };
    }),
  );

  app.post(
    '/keys/:id/adjust',
    post(async function adjustAdminKey(request, context) {
      const body = readInput(adjustBody, request.body);
      const key = await adjustKey(store, idOf(request), body.amount, body.reason, context.operationId ? { requestId: context.operationId } : {});
      return { status: 200, body: keyObject(key, config) };
    }),
  );

  app.post(
    '/keys/:id/revoke',
    post(async function revokeAdminKey(request) {
      readInput(emptyBody, request.body);
      return { status: 200, body: keyObject(await revokeKey(store, idOf(request)), config) };
    }),
  );

  app.post(
    '/keys/:id/rotate',
    post(async function rotateAdminKey(request) {
      readInput(emptyBody, request.body);
      const { key, secret } = await rotateKey(store, idOf(request));
      const object = keyObject(key, config);
      return { status: 200, body: { ...object, key: secret } satisfies IssuedKeyJson, replay: { ...object, key: null } satisfies IssuedKeyJson };
    }),
  );

  app.get('/keys/:id/ledger', async function adminKeyLedger(request) {
    return listLedger(store, idOf(request), readInput(ledgerQuery, request.query));
  });
}

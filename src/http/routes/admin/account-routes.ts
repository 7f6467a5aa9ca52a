// /admin/v1/accounts...: thin handlers over operations/accounts.ts (parse, call, render), the operator's
// verbs on the money its keys share (docs/adr/0047-accounts.md). Every POST goes through the
// Idempotency-Key wrapper: a replayed top-up or adjustment credits once, a replayed token issue answers
// `token: null` (the token is never stored in clear).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  accountObject,
  adjustAccount,
  createAccount,
  issueAccountToken,
  listAccounts,
  requireAccount,
  revokeAccountToken,
  setAccountStatus,
  topUpAccount,
  updateAccount,
} from '../../../operations/accounts.js';
import { listAccountKeys, listAccountLedger } from '../../../operations/account-views.js';
import type { IssuedAccountTokenJson } from '../../../operations/json-types.js';
import { amountField, listQuery, metadataField, modelsField, readInput } from './admin-input.js';
import type { AdminDeps } from './admin-deps.js';
import { idempotentPost } from './idempotent-post.js';

const budgetField = z.union([z.number(), z.string(), z.null()]);
const periodField = z.union([z.string(), z.null()]);

const createBody = z.strictObject({
  name: z.string(),
  balance: amountField.optional(),
  budget: budgetField.optional(),
  budget_period: periodField.optional(),
  metadata: metadataField.optional(),
  allowed_models: modelsField.optional(),
});

const patchBody = z.strictObject({
  name: z.string().optional(),
  budget: budgetField.optional(),
  budget_period: periodField.optional(),
  metadata: metadataField.optional(),
  allowed_models: modelsField.optional(),
  status: z.string().optional(),
});

const topUpBody = z.strictObject({ amount: amountField, note: z.string().optional() });
const adjustBody = z.strictObject({ amount: amountField, reason: z.string() });
const emptyBody = z.strictObject({});
const accountsQuery = z.strictObject({
  ...listQuery,
  status: z.string().optional(),
  name: z.string().optional(),
  include_personal: z.string().optional(),
});
const keysQuery = z.strictObject({ ...listQuery, status: z.string().optional(), name: z.string().optional() });
const ledgerQuery = z.strictObject(listQuery);
const noQuery = z.strictObject({});

const idOf = (request: FastifyRequest): string => (request.params as { id: string }).id;

export function registerAccountRoutes(app: FastifyInstance, deps: AdminDeps): void {
  const { store, config } = deps;
  const post = (handler: Parameters<typeof idempotentPost>[1]) => idempotentPost(store.idempotency, handler);

  app.get('/accounts', async function listAdminAccounts(request) {
    return listAccounts(store, readInput(accountsQuery, request.query));
  });

  app.post(
    '/accounts',
    post(async function createAdminAccount(request) {
      const body = readInput(createBody, request.body);
      return { status: 200, body: accountObject(await createAccount(store, config, body)) };
    }),
  );

  app.get('/accounts/:id', async function getAdminAccount(request) {
    readInput(noQuery, request.query);
    return accountObject(await requireAccount(store, idOf(request)));
  });

  app.patch('/accounts/:id', async function patchAdminAccount(request) {
    const body = readInput(patchBody, request.body);
    return accountObject(await updateAccount(store, config, idOf(request), body));
  });

  app.post(
    '/accounts/:id/topup',
    post(async function topUpAdminAccount(request, context) {
      const body = readInput(topUpBody, request.body);
      const account = await topUpAccount(store, idOf(request), body.amount, body.note, context.operationId ? { requestId: context.operationId } : {});
      return { status: 200, body: accountObject(account) };
    }),
  );

  app.post(
    '/accounts/:id/adjust',
    post(async function adjustAdminAccount(request, context) {
      const body = readInput(adjustBody, request.body);
      const account = await adjustAccount(store, idOf(request), body.amount, body.reason, context.operationId ? { requestId: context.operationId } : {});
      return { status: 200, body: accountObject(account) };
    }),
  );

  for (const [verb, status] of [
    ['suspend', 'suspended'],
    ['resume', 'active'],
  ] as const) {
    app.post(
      `/accounts/:id/${verb}`,
      post(async function setAdminAccountStatus(request) {
        readInput(emptyBody, request.body);
        return { status: 200, body: accountObject(await setAccountStatus(store, idOf(request), status)) };
      }),
    );
  }

  app.post(
    '/accounts/:id/token',
    post(async function issueAdminAccountToken(request) {
      readInput(emptyBody, request.body);
      const { account, token } = await issueAccountToken(store, idOf(request));
      const object = accountObject(account);
      return { status: 200, body: { ...object, token } satisfies IssuedAccountTokenJson, replay: { ...object, token: null } satisfies IssuedAccountTokenJson };
    }),
  );

  app.delete('/accounts/:id/token', async function revokeAdminAccountToken(request) {
    return accountObject(await revokeAccountToken(store, idOf(request)));
  });

  app.get('/accounts/:id/keys', async function adminAccountKeys(request) {
    return listAccountKeys(store, config, idOf(request), readInput(keysQuery, request.query));
  });

  app.get('/accounts/:id/ledger', async function adminAccountLedger(request) {
    return listAccountLedger(store, idOf(request), readInput(ledgerQuery, request.query));
  });
}

// /v1/account...: self-service for an account token's holder (docs/adr/0047-accounts.md) — thin handlers
// over operations/account-self-service.ts (parse, call, render). Every request proves an account token
// (`tga-`; a key secret is 401 here, as an account token is on the model routes — except on a route
// registered with PAYER_ROUTE, where a key stands for its account); POSTs take an
// Idempotency-Key, scoped to the account.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Config } from '../../config/types.js';
import {
  accountSelf,
  createAccountKey,
  listAccountKeys,
  listAccountUsage,
  revokeAccountKey,
  summarizeAccountUsage,
  updateAccountKey,
} from '../../operations/account-self-service.js';
import { redeemableCode, redeemCode } from '../../operations/codes.js';
import { GatewayError, isGatewayError } from '../../errors.js';
import type { RateLimiter } from '../../limits/rate-limiter.js';
import type { RedeemGuard } from '../../limits/redeem-guard.js';
import { paymentsInfo, startCheckout } from '../../operations/payments.js';
import type { PaymentProvider } from '../../payments/types.js';
import type { AccountRecord, KeyRecord, Store } from '../../storage/types.js';
import { authenticateAccount, authenticatePayer } from '../auth.js';
import { registerCors } from '../cors.js';
import { useManagementJson } from '../management-json.js';
import { listQuery, modelsField, readInput, usageFilterQuery } from './admin/admin-input.js';
import { idempotentPost } from './admin/idempotent-post.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The account whose token authenticated a /v1/account request (or, on a payer route, the key's account). */
    account: AccountRecord | null;
    /** On a payer route (`config: PAYER_ROUTE`), the key that was sent instead of an account token. */
    accountKey: KeyRecord | null;
  }
  interface FastifyContextConfig {
    /** The route takes a key secret as well as an account token: the key stands for its account. */
    acceptsKey?: boolean;
  }
}

/** Route options of a /v1/account route a key-holder may call too (adding credit to the key's account). */
export const PAYER_ROUTE = { config: { acceptsKey: true } } as const;

const limitField = z.union([z.number(), z.string(), z.null()]).optional();
const capsFields = {
  credit_limit: limitField,
  budget: limitField,
  budget_period: z.union([z.string(), z.null()]).optional(),
  expires_at: z.union([z.string(), z.null()]).optional(),
  rpm: limitField,
  tpm: limitField,
  max_concurrent: limitField,
};
const createBody = z.strictObject({ name: z.string(), allowed_models: modelsField.optional(), ...capsFields });
const patchBody = z.strictObject({ name: z.string().optional(), ...capsFields });
const emptyBody = z.strictObject({});
const redeemBody = z.strictObject({ code: z.string() });
const noQuery = z.strictObject({});
// The admin API's usage filters but account_id: the account is the token's (an unknown field is a 400).
const { account_id: _accountId, ...ownUsageFilters } = usageFilterQuery;
const usageQuery = z.strictObject({ ...listQuery, ...ownUsageFilters });
const summaryQuery = z.strictObject({ ...ownUsageFilters, group_by: z.string().optional() });
const checkoutBody = z.strictObject({ amount: z.union([z.number(), z.string()]) });
const keysQuery = z.strictObject({ ...listQuery, status: z.string().optional(), name: z.string().optional() });

const idOf = (request: FastifyRequest): string => (request.params as { id: string }).id;
const accountOf = (request: FastifyRequest): AccountRecord => request.account!;

export interface AccountApiDeps {
  readonly store: Store;
  readonly config: Config;
  /** Failed redemptions per credential and per client address (limits/redeem-guard.ts). */
  readonly redeemGuard: RedeemGuard;
  /** Counts each account's /v1/account requests against limits.account_rpm (the keys' rate limiter: Redis when set). */
  readonly limiter: RateLimiter;
  /** The configured payment provider (payments.stripe); undefined: checkout answers 404 payments_disabled. */
  readonly payments: PaymentProvider | undefined;
}

export function registerAccountApi(app: FastifyInstance, deps: AccountApiDeps): void {
  const { store, config, redeemGuard, limiter } = deps;
  const perAccount = { rpm: config.limits.accountRpm, tpm: null, maxConcurrent: null };
  app.decorateRequest('account', null);
  app.decorateRequest('accountKey', null);
  app.register(
    async function accountV1(api) {
      // Before the token check: a browser's preflight carries no credential.
      await registerCors(api, config.server.corsOrigins, ['GET', 'POST', 'PATCH']);
      useManagementJson(api);
      api.addHook('onRequest', async function requireAccountToken(request) {
        if (request.routeOptions.config.acceptsKey === true) {
          const payer = await authenticatePayer(store.accounts, store.keys, request.headers);
          request.account = payer.account;
          request.accountKey = payer.key;
        } else {
          request.account = await authenticateAccount(store.accounts, request.headers);
        }
        if (perAccount.rpm === null) return;
        // Counted per account, whichever token or key spoke for it; a request is done with its slot at once.
        const admission = await limiter.admit(`account:${request.account.id}`, request.id, perAccount, 0);
        if (!admission.admitted) {
          const seconds = Math.max(1, Math.ceil(admission.retryAfterMs / 1000));
          throw new GatewayError('account_rate_limited', { headers: { 'retry-after': String(seconds) } });
        }
        admission.ticket.finish(0);
      });
      const post = (handler: Parameters<typeof idempotentPost>[1]) => idempotentPost(store.idempotency, handler, (request) => `account:${accountOf(request).id}`);

      api.get('/', async function ownAccount(request) {
        readInput(noQuery, request.query);
        return accountSelf(store, accountOf(request));
      });

      api.get('/usage', async function ownAccountUsage(request) {
        return listAccountUsage(store, accountOf(request), readInput(usageQuery, request.query));
      });

      api.get('/usage/summary', async function ownAccountUsageSummary(request) {
        return summarizeAccountUsage(store, accountOf(request), readInput(summaryQuery, request.query));
      });

      api.get('/keys', async function ownAccountKeys(request) {
        return listAccountKeys(store, config, accountOf(request), readInput(keysQuery, request.query));
      });

      api.post(
        '/keys',
        post(async function createOwnAccountKey(request) {
          const { body, replay } = await createAccountKey(store, config, accountOf(request), readInput(createBody, request.body));
          return { status: 200, body, replay };
        }),
      );

      // A redemption code credits the paying account (docs/adr/0051-redemption-codes.md). No
      // Idempotency-Key: a code is itself single-use, so a retry is answered code_redeemed.
      api.post('/redeem', PAYER_ROUTE, async function redeem(request, reply) {
        const body = readInput(redeemBody, request.body);
        const account = accountOf(request);
        const credential = request.accountKey ? `key:${request.accountKey.id}` : `account:${account.id}`;
        const admission = await redeemGuard.admit(credential, request.ip);
        if (!admission.admitted) {
          const seconds = Math.max(1, Math.ceil(admission.retryAfterMs / 1000));
          throw new GatewayError('too_many_redeem_attempts', { headers: { 'retry-after': String(seconds) } });
        }
        try {
          const answer = await redeemCode(store, account, request.accountKey, redeemableCode(body.code));
          admission.attempt.succeeded();
          return reply.code(200).send(answer);
        } catch (error) {
          // A refused code counts; a database that did not answer (5xx) is no guess.
          if (isGatewayError(error) && error.status < 500) admission.attempt.failed();
          else admission.attempt.succeeded();
          throw error;
        }
      });

      api.patch('/keys/:id', async function patchOwnAccountKey(request) {
        return updateAccountKey(store, config, accountOf(request), idOf(request), readInput(patchBody, request.body));
      });

      // Adding credit (docs/adr/0050-stripe-top-ups.md): an account token or a key of the account.
      api.get('/checkout', PAYER_ROUTE, async function checkoutOptions(request) {
        readInput(noQuery, request.query);
        return { object: 'checkout_options', currency: 'usd', ...paymentsInfo(config) };
      });

      api.post(
        '/checkout',
        PAYER_ROUTE,
        post(async function startOwnCheckout(request, context) {
          const input = readInput(checkoutBody, request.body);
          return { status: 200, body: await startCheckout(deps.payments, config, accountOf(request), request.accountKey, input, context.operationId) };
        }),
      );

      api.post(
        '/keys/:id/revoke',
        post(async function revokeOwnAccountKey(request) {
          readInput(emptyBody, request.body);
          return { status: 200, body: await revokeAccountKey(store, config, accountOf(request), idOf(request)) };
        }),
      );
    },
    { prefix: '/v1/account' },
  );
}

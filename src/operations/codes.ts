// Redemption codes, written once (docs/adr/0051-redemption-codes.md): the operator's verbs — create a batch
// (the codes are shown once; only their hashes are kept), list, revoke, export — used by `tollgate codes
// ...`, /admin/v1/codes and the dashboard; and the holder's redeem, used by POST /v1/account/redeem. Input
// is checked here (400 invalid_request naming the field), so every face refuses the same things the same way.
import { formatUsd, MAX_NANO, MAX_USD, nanoToUsd } from '../billing/money.js';
import { GatewayError } from '../errors.js';
import {
  generateCodeBatchId,
  generateCodeId,
  generateRedemptionCode,
  hashKeySecret,
  looksLikeRedemptionCode,
  normaliseRedemptionCode,
  redemptionCodePrefix,
} from '../keys/secret.js';
import type { AccountRecord, CodePageQuery, CodeRecord, CodeStatus, KeyRecord, NewCode, Store } from '../storage/types.js';
import { requireAccount } from './accounts.js';
import { usdAmount } from './amount-input.js';
import { noteOf } from './credit-input.js';
import type { CodeBatchJson, CodeJson, CodeRevocationJson, ListPage, RedemptionJson } from './json-types.js';
import { parseExpiry } from './limits-input.js';
import { decodeCursor, listPage, pageSize, walkPages } from './page.js';

/** The most codes one create makes (one transaction, one answer that lists them all). */
export const MAX_CODES_PER_BATCH = 1_000;
const STATUSES: readonly CodeStatus[] = ['unused', 'redeemed', 'revoked', 'expired'];

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function codeStatus(code: CodeRecord, now: number): CodeStatus {
  if (code.revokedAt !== null) return 'revoked';
  if (code.redeemedAt !== null) return 'redeemed';
  if (code.expiresAt !== null && code.expiresAt <= now) return 'expired';
  return 'unused';
}

/** The code object every face shows: never the code, only its prefix. */
export function codeObject(code: CodeRecord, now = Date.now()): CodeJson {
  return {
    id: code.id,
    object: 'redemption_code',
    prefix: code.prefix,
    amount: nanoToUsd(code.amount),
    status: codeStatus(code, now),
    account_id: code.accountId,
    batch_id: code.batchId,
    note: code.note,
    expires_at: iso(code.expiresAt),
    created_at: code.createdAt,
    redeemed_at: iso(code.redeemedAt),
    redeemed_account_id: code.redeemedAccountId,
    redeemed_key_id: code.redeemedKeyId,
    revoked_at: iso(code.revokedAt),
  };
}

function invalid(param: string, message: string): never {
  throw new GatewayError('invalid_request', { param, message: `Invalid '${param}': ${message}` });
}

/** `count`: a whole number from 1 to MAX_CODES_PER_BATCH (a flag's string is read as one). */
export function codeCount(value: unknown): number {
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > MAX_CODES_PER_BATCH) {
    invalid('count', `expected a whole number from 1 to ${MAX_CODES_PER_BATCH}, got ${JSON.stringify(value)}.`);
  }
  return n;
}

export function codeStatusOf(value: unknown): CodeStatus | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && (STATUSES as readonly string[]).includes(value)) return value as CodeStatus;
  return invalid('status', `expected one of ${STATUSES.join(', ')}.`);
}

/** What a batch's creation may name (CLI flags and admin JSON alike). */
export interface CodeBatchInput {
  /** USD each code credits. */
  readonly amount?: unknown;
  readonly count?: unknown;
  /** An ISO 8601 time or a duration from now (30d, 12h); absent or null: never. */
  readonly expires_at?: unknown;
  /** Only this account may redeem them. */
  readonly account_id?: unknown;
  readonly note?: unknown;
}

/**
 * Makes `count` codes of `amount` USD in one batch (one transaction). The answer is the only place the
 * codes ever appear: only their SHA-256 and prefix are stored.
 */
export async function createCodes(store: Store, input: CodeBatchInput, now = Date.now()): Promise<CodeBatchJson> {
  const amount = usdAmount('amount', input.amount, { allowZero: false });
  const count = codeCount(input.count);
  const expiresAt = input.expires_at === undefined || input.expires_at === null ? null : parseExpiry(input.expires_at, now);
  if (input.account_id !== undefined && input.account_id !== null && typeof input.account_id !== 'string') invalid('account_id', 'expected an account id.');
  const accountId = typeof input.account_id === 'string' ? (await requireAccount(store, input.account_id)).id : null;
  const note = noteOf('note', input.note, false);
  const batchId = generateCodeBatchId();
  const made = Array.from({ length: count }, () => {
    const code = generateRedemptionCode();
    const row: NewCode = { id: generateCodeId(), hash: hashKeySecret(code), prefix: redemptionCodePrefix(code), amount, accountId, expiresAt, batchId, note, now };
    return { code, row };
  });
  await store.codes.create(made.map((m) => m.row));
  const createdAt = new Date(now).toISOString();
  const record = (row: NewCode): CodeRecord => ({
    id: row.id,
    prefix: row.prefix,
    amount,
    accountId,
    expiresAt,
    batchId,
    note,
    createdAt,
    redeemedAt: null,
    redeemedAccountId: null,
    redeemedKeyId: null,
    revokedAt: null,
  });
  return {
    object: 'redemption_code_batch',
    batch_id: batchId,
    count,
    amount: nanoToUsd(amount),
    codes: made.map((m) => ({ ...codeObject(record(m.row), now), code: m.code })),
  };
}

/** The same batch with every code blanked: what an Idempotency-Key replay answers (codes are never kept in clear). */
export function withoutCodes(batch: CodeBatchJson): CodeBatchJson {
  return { ...batch, codes: batch.codes.map((c) => ({ ...c, code: null })) };
}

export async function requireCode(store: Store, id: unknown): Promise<CodeRecord> {
  const code = typeof id === 'string' ? await store.codes.get(id) : undefined;
  if (!code) throw new GatewayError('code_not_found', { message: `No redemption code with id ${String(id)}.` });
  return code;
}

export interface CodeListInput {
  readonly status?: unknown;
  readonly batch_id?: unknown;
  readonly limit?: unknown;
  readonly after?: unknown;
}

interface CodePosition {
  c: string;
  i: string;
}

const isCodePosition = (p: unknown): p is CodePosition =>
  typeof p === 'object' && p !== null && typeof (p as CodePosition).c === 'string' && typeof (p as CodePosition).i === 'string';

function codeQuery(input: CodeListInput, now: number): Omit<CodePageQuery, 'limit'> {
  const status = codeStatusOf(input.status);
  if (input.batch_id !== undefined && typeof input.batch_id !== 'string') invalid('batch_id', 'expected a batch id.');
  const after = input.after === undefined ? undefined : decodeCursor('codes', input.after, isCodePosition);
  return {
    ...(status ? { status } : {}),
    ...(typeof input.batch_id === 'string' ? { batchId: input.batch_id } : {}),
    ...(after ? { after: { createdAt: after.c, id: after.i } } : {}),
    now,
  };
}

/** Codes in creation order, filtered by status and batch, a page at a time. */
export async function listCodes(store: Store, input: CodeListInput = {}, now = Date.now()): Promise<ListPage<CodeJson>> {
  const limit = pageSize(input.limit);
  const rows = await store.codes.page({ ...codeQuery(input, now), limit: limit + 1 });
  return listPage('codes', rows, limit, (c) => codeObject(c, now), (c) => ({ c: c.createdAt, i: c.id }));
}

/** Every code the filter names, a page at a time (the CSV export). */
export async function* walkCodes(store: Store, input: Omit<CodeListInput, 'limit' | 'after'>, now = Date.now()): AsyncGenerator<CodeJson> {
  const page = (after?: string) => listCodes(store, { ...input, limit: 500, ...(after ? { after } : {}) }, now);
  yield* walkPages(await page(), page);
}

/** Revokes one code: an unused or expired one becomes revoked; a redeemed one cannot be (409); a revoked one stays. */
export async function revokeCode(store: Store, id: unknown, now = Date.now()): Promise<CodeRevocationJson> {
  const code = await requireCode(store, id);
  const revoked = await store.codes.revoke({ id: code.id }, now);
  if (revoked === 0) {
    const current = (await store.codes.get(code.id))!;
    if (current.redeemedAt !== null) {
      throw new GatewayError('code_redeemed', { message: `Redemption code ${code.id} was redeemed on ${iso(current.redeemedAt)}: it cannot be revoked.` });
    }
  }
  return { object: 'redemption_code_revocation', batch_id: null, id: code.id, revoked };
}

/** Revokes every code of a batch that is neither redeemed nor revoked; a batch with no codes is 404. */
export async function revokeBatch(store: Store, batchId: unknown, now = Date.now()): Promise<CodeRevocationJson> {
  if (typeof batchId !== 'string' || batchId === '') invalid('batch_id', 'expected a batch id.');
  if ((await store.codes.page({ batchId, limit: 1, now })).length === 0) {
    throw new GatewayError('code_not_found', { param: 'batch_id', message: `No redemption codes in batch ${batchId}.` });
  }
  return { object: 'redemption_code_revocation', batch_id: batchId, id: null, revoked: await store.codes.revoke({ batchId }, now) };
}

/** The CSV export's columns: ids, prefixes and status — never a code. */
export const CODE_CSV_COLUMNS = [
  'id',
  'prefix',
  'batch_id',
  'amount',
  'status',
  'account_id',
  'expires_at',
  'created_at',
  'redeemed_at',
  'redeemed_account_id',
  'redeemed_key_id',
  'revoked_at',
  'note',
] as const;

/** One CSV record of a code: the amount as an exact decimal USD string, an absent value empty. */
export function codeCsvRecord(code: CodeJson): string[] {
  const field = (value: string | null): string => value ?? '';
  return [
    code.id,
    code.prefix,
    code.batch_id,
    formatUsd(Math.round(code.amount * 1e9)),
    code.status,
    field(code.account_id),
    field(code.expires_at),
    code.created_at,
    field(code.redeemed_at),
    field(code.redeemed_account_id),
    field(code.redeemed_key_id),
    field(code.revoked_at),
    field(code.note),
  ];
}

/** The code a holder sent, normalised; a value of the wrong shape is a 400 that never reaches the database. */
export function redeemableCode(value: unknown): string {
  const code = typeof value === 'string' ? normaliseRedemptionCode(value) : '';
  if (!looksLikeRedemptionCode(code)) {
    invalid('code', 'expected a redemption code: tgr- followed by 32 letters a-z and digits 2-7.');
  }
  return code;
}

/**
 * Redeems a code for the paying account (an account token's, or a key's account: `key` is then the key
 * sent). Applied: the answer names what was credited and the account's money after. Anything else is
 * the error of the one registry and changed nothing.
 */
export async function redeemCode(store: Store, account: AccountRecord, key: KeyRecord | null, code: string, now = Date.now()): Promise<RedemptionJson> {
  let result;
  try {
    result = await store.codes.redeem({ hash: hashKeySecret(code), accountId: account.id, keyId: key?.id ?? null, now });
  } catch (error) {
    // The database did not answer (or refused the write): nothing was redeemed, and a retry may succeed.
    throw new GatewayError('ledger_unavailable', { headers: { 'retry-after': '1' }, cause: error });
  }
  switch (result.outcome) {
    case 'applied':
      return {
        object: 'redemption',
        code_id: result.code.id,
        prefix: result.code.prefix,
        amount: nanoToUsd(result.code.amount),
        account_id: result.account.id,
        balance: nanoToUsd(result.account.balance),
        available: nanoToUsd(result.account.balance - result.account.held),
      };
    case 'unknown':
      throw new GatewayError('code_not_found', { param: 'code' });
    case 'used':
      throw new GatewayError('code_redeemed', { param: 'code' });
    case 'revoked':
      throw new GatewayError('code_revoked', { param: 'code' });
    case 'expired':
      throw new GatewayError('code_expired', { param: 'code' });
    case 'wrong_account':
      throw new GatewayError('code_wrong_account', { param: 'code' });
    case 'suspended':
      throw new GatewayError('account_suspended', {
        message: 'The account is suspended: a code cannot be redeemed into it until the operator resumes it. The code stays unused.',
      });
    case 'missing':
      throw new GatewayError('account_not_found', { message: `No account with id ${account.id}.` });
    case 'over_maximum':
      throw new GatewayError('invalid_request', {
        param: 'code',
        message: `This code would take the balance past ${MAX_USD} USD, the largest balance the ledger holds; at most ${formatUsd(Math.max(MAX_NANO - account.balance, 0))} USD more fits. The code stays unused.`,
      });
  }
}

// The storage contract. Billing logic talks only to these interfaces, so a PostgreSQL implementation
// can follow the SQLite one without touching it: every method is one transaction, and admission is a
// single conditional UPDATE that is valid on both dialects.
import type { BudgetPeriod } from '../billing/budget-period.js';
import type { Nano } from '../billing/money.js';

export type KeyStatus = 'active' | 'revoked';
export type AllowedModels = readonly string[] | '*';

/** A key's own limits (product.md §8); null: not set on the key (the config's `limits:` default applies). */
export interface KeyLimits {
  readonly rpm: number | null;
  readonly tpm: number | null;
  readonly maxConcurrent: number | null;
  /** Spend cap per budget period, nano-dollars. */
  readonly budget: Nano | null;
  readonly budgetPeriod: BudgetPeriod | null;
}

export const NO_KEY_LIMITS: KeyLimits = Object.freeze({ rpm: null, tpm: null, maxConcurrent: null, budget: null, budgetPeriod: null });

/** The budget part of an admission or a capture: the key's effective cap and the period it counts in. */
export interface BudgetWindow {
  /** The effective budget (the key's own, else the config default); null: no cap. */
  readonly limit: Nano | null;
  /** Epoch ms at which the key's current budget period began (the spend counter's period). */
  readonly periodStart: number;
}
export type AccountStatus = 'active' | 'suspended';

/** An account's budget per period (product.md §8 terms); null: not set. */
export interface AccountLimits {
  readonly budget: Nano | null;
  readonly budgetPeriod: BudgetPeriod | null;
}

/** An account: it owns the money its keys spend (docs/adr/0047-accounts.md). */
export interface AccountRecord {
  readonly id: string;
  readonly name: string;
  readonly balance: Nano;
  /** Held for its keys' requests in flight. */
  readonly held: Nano;
  /** Total captured from it so far. */
  readonly spent: Nano;
  readonly status: AccountStatus;
  readonly limits: AccountLimits;
  /** Captured in the budget period that began at `budgetPeriodStart` (stale once a new period began). */
  readonly budgetSpent: Nano;
  readonly budgetPeriodStart: number;
  readonly metadata: KeyMetadata;
  /** The models the account token may allow its own keys (the operator's bound on self-service). */
  readonly allowedModels: AllowedModels;
  /** Made for one key by `keys create` without an account. */
  readonly personal: boolean;
  /** The first characters of the self-service token; null: none issued. */
  readonly tokenPrefix: string | null;
  readonly createdAt: string;
}

/** What a key's admission needs of its account, read with the key (the money and the account's budget). */
export type KeyAccount = Pick<AccountRecord, 'id' | 'name' | 'balance' | 'held' | 'spent' | 'status' | 'limits' | 'budgetSpent' | 'budgetPeriodStart' | 'personal'>;

export interface KeyRecord {
  readonly id: string;
  readonly name: string;
  /** The first characters of the secret, for recognising a key in listings. */
  readonly prefix: string;
  /** The account's balance (a key has no money of its own). */
  readonly balance: Nano;
  /** Held for this key's requests in flight (a part of the account's held). */
  readonly held: Nano;
  /** Total captured for this key's requests (a part of the account's spent). */
  readonly spent: Nano;
  readonly accountId: string;
  /** The account as read with the key. */
  readonly account: KeyAccount;
  /** USD (nano) this key may ever spend; null: no cap but the account's money. */
  readonly creditLimit: Nano | null;
  readonly allowedModels: AllowedModels;
  readonly status: KeyStatus;
  readonly createdAt: string;
  readonly limits: KeyLimits;
  /** Epoch ms after which the key answers 401; null: never. */
  readonly expiresAt: number | null;
  /** Captured in the budget period that began at `budgetPeriodStart` (stale once a new period began). */
  readonly budgetSpent: Nano;
  readonly budgetPeriodStart: number;
  /** A refused max_tokens is lowered to what the key can afford instead (product.md §13). */
  readonly clampMaxTokens: boolean;
  /** The operator's own labels (the admin API's `metadata`): string values by name. */
  readonly metadata: KeyMetadata;
}

export type KeyMetadata = Readonly<Record<string, string>>;

export interface NewKey {
  readonly id: string;
  /** The account the key draws on; absent: a personal account is made for it (rows.ts personalAccountId). */
  readonly accountId?: string;
  readonly creditLimit?: Nano | null;
  readonly name: string;
  readonly prefix: string;
  readonly secretHash: string;
  readonly allowedModels: AllowedModels;
  readonly initialBalance: Nano;
  /** Ledger request id of the initial top-up. */
  readonly topupRequestId: string;
  readonly now: number;
  readonly limits?: KeyLimits;
  readonly expiresAt?: number | null;
}

/** A change to a key's limits: a field that is absent stays; null clears the key's own value. */
export type LimitsPatch = { readonly [F in keyof KeyLimits]?: KeyLimits[F] } & {
  readonly expiresAt?: number | null;
  readonly creditLimit?: Nano | null;
  readonly clampMaxTokens?: boolean;
};

/** A change to a key (the admin API's PATCH): a field that is absent stays as it is. */
export type KeyChange = LimitsPatch & {
  readonly name?: string;
  readonly allowedModels?: AllowedModels;
  /** Replaces the whole metadata object. */
  readonly metadata?: KeyMetadata;
};

/** One page of keys, in creation order (created_at, id), after the cursor's key. */
export interface KeyPageQuery {
  readonly status?: KeyStatus;
  readonly accountId?: string;
  /** Only keys whose name starts with this (case-sensitive). */
  readonly namePrefix?: string;
  readonly after?: { readonly createdAt: string; readonly id: string };
  readonly limit: number;
}

/** Money an operator adds or takes away: a top-up (positive) or an adjustment (±), one ledger entry. */
export interface Credit {
  /** The account credited; with `keyId`, the key's account (and a revoked key refuses it). */
  readonly accountId?: string;
  readonly keyId?: string;
  readonly kind: 'topup' | 'adjust';
  readonly amount: Nano;
  /** The entry's request id: a second credit with the same one is a duplicate and changes nothing. */
  readonly requestId: string;
  readonly note: string | null;
  readonly now: number;
  /**
   * A webhook event written to the outbox in the credit's transaction, only when the credit is applied
   * (a payment's `payment.succeeded` / `payment.refunded`): never without its money, never twice. Its
   * data gets `account_id` added.
   */
  readonly event?: NewWebhookEvent;
}

/**
 * Decided under the account row's lock, in this order: missing: no such key or account; duplicate: an
 * entry with this request id exists (nothing changed; it was applied before, even if the key was revoked
 * since); revoked: the credit names a key and it is revoked (an expired key may still be credited: its
 * expiry can be extended);
 * overdraw: a negative amount would take the available balance (balance − held) below zero;
 * over_maximum: a positive amount would take the balance past MAX_NANO. Only `applied` changed anything.
 */
export type CreditOutcome = 'applied' | 'duplicate' | 'missing' | 'revoked' | 'overdraw' | 'over_maximum';

export type LedgerEntryKind = 'topup' | 'hold' | 'capture' | 'release' | 'adjust';

export interface LedgerEntry {
  /** Insertion order: the cursor of the ledger listing. */
  readonly id: number;
  readonly accountId: string;
  /** null: the account's own top-up or adjustment. */
  readonly keyId: string | null;
  readonly requestId: string;
  readonly kind: LedgerEntryKind;
  readonly amount: Nano;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly note: string | null;
}

/** One key's (or one account's) ledger entries, newest first, older than the cursor's entry. */
export interface EntryPageQuery {
  readonly keyId?: string;
  readonly accountId?: string;
  readonly beforeId?: number;
  readonly limit: number;
}

export interface Attempt {
  readonly provider: string;
  readonly status: number;
  readonly durationMs: number;
}

/** none: nothing was metered — the request was answered before any upstream call (a refusal, a quote, a replay). */
export type UsageSource = 'upstream' | 'estimated' | 'none';

/** The client API a request came through (a usage row's `endpoint`). */
export type UsageEndpoint = 'chat' | 'embeddings' | 'messages' | 'responses';

/** Every client API a usage row may name, for filters and checks. */
export const USAGE_ENDPOINTS: readonly UsageEndpoint[] = ['chat', 'embeddings', 'messages', 'responses'];

export interface UsageRecord {
  readonly requestId: string;
  /** Epoch milliseconds. */
  readonly time: number;
  readonly keyId: string;
  /** The configured model; for a request refused before a model was resolved, what the client named (null: nothing). */
  readonly model: string | null;
  /** The upstream that served or last tried the request; null: none was chosen. */
  readonly provider: string | null;
  readonly upstreamModel: string | null;
  /** The HTTP status the client received (499 when it went away). */
  readonly status: number;
  readonly inputTokens: number;
  readonly cachedInputTokens: number;
  readonly outputTokens: number;
  readonly reasoningTokens: number;
  /** Cache writes (inside inputTokens); absent: none reported. */
  readonly cacheWriteTokens?: number;
  readonly cost: Nano;
  readonly usageSource: UsageSource;
  readonly attempts: readonly Attempt[];
  /** The client API; null on rows written before it was recorded (as the four below). */
  readonly endpoint: UsageEndpoint | null;
  /** The error code the client received (errors.ts), `client_disconnected` for a 499; null: success. */
  readonly errorCode: string | null;
  readonly errorMessage: string | null;
  /** From the request's arrival to its end (its settlement, or its answer when nothing was billed). */
  readonly durationMs: number | null;
  /** From the request's arrival to the first streamed chunk sent to the client; null: not a stream. */
  readonly firstTokenMs: number | null;
  /**
   * The agent session the client named (Claude Code's `x-claude-code-session-id`, Codex's `session-id`),
   * at most 200 characters; null: none (and on rows written before it was recorded).
   */
  readonly sessionId: string | null;
}

export interface HoldPlacement {
  readonly requestId: string;
  readonly keyId: string;
  readonly amount: Nano;
  /** Epoch milliseconds after which the sweeper releases the hold. */
  readonly expiresAt: number;
  readonly now: number;
  readonly budget: BudgetWindow;
  /** The account's budget window; absent: the account has none. */
  readonly accountBudget?: BudgetWindow;
}

/**
 * Why admission refused: the key is revoked or expired; its account is suspended; the key's credit limit,
 * the account's balance, the key's budget or the account's budget does not cover the hold.
 */
export type RefusalReason = 'inactive' | 'suspended' | 'credit_limit' | 'balance' | 'budget' | 'account_budget';

export interface Refusal {
  readonly admitted: false;
  readonly reason: RefusalReason;
  /** What the key could still hold, as admission saw it: the account's balance − held, within the key's credit limit. */
  readonly available: Nano;
  /** Spent in the budget period plus active holds (the key's; the account's for account_budget), as admission saw it. */
  readonly budgetUsed: Nano;
  readonly keyActive: boolean;
}

export type Admission = { readonly admitted: true } | Refusal;

export interface Settlement {
  readonly requestId: string;
  readonly cost: Nano;
  readonly usage: UsageRecord;
  readonly now: number;
  readonly budget: BudgetWindow;
  /** The account's budget window; absent: the account has none. */
  readonly accountBudget?: BudgetWindow;
}

/**
 * captured: normal (a cost above the hold is charged in full: the documented overage);
 * late: the hold had expired (a sweeper released it) and was admitted again for what it covered, so the
 * cost is charged as if it had not; late-capped: it could not be, so only what was available is charged;
 * duplicate: settled before (settlement is idempotent); missing: no such hold.
 */
export type SettleOutcome = 'captured' | 'late' | 'late-capped' | 'duplicate' | 'missing';
export type ReleaseOutcome = 'released' | 'expired' | 'duplicate' | 'missing';

export interface SettleResult {
  readonly outcome: SettleOutcome;
  /** What was captured: the cost, or less for late-capped; 0 when nothing was. */
  readonly charged: Nano;
}

export interface HoldRenewal {
  readonly requestId: string;
  /** The new expiry. */
  readonly expiresAt: number;
  readonly now: number;
  /** A re-admission checks the budgets as a new hold's admission does. */
  readonly budget: BudgetWindow;
  /** The account's budget window; absent: the account has none. */
  readonly accountBudget?: BudgetWindow;
}

/**
 * extended: the hold was active, its expiry moved; readmitted: a sweeper had expired it while the request
 * still ran, and it was admitted again (atomically, like a new hold); refused: it had expired and the key
 * can no longer cover it — the request must stop; closed: already captured or released; missing.
 */
export type RenewOutcome =
  | { readonly outcome: 'extended' | 'readmitted' | 'closed' | 'missing' }
  | { readonly outcome: 'refused'; readonly refusal: Refusal };

export interface LedgerAudit {
  /** The cached columns on the key. */
  readonly cached: { readonly balance: Nano; readonly held: Nano; readonly spent: Nano };
  /** The same three figures derived from the append-only entries alone. */
  readonly derived: { readonly balance: Nano; readonly held: Nano; readonly spent: Nano };
  readonly activeHolds: number;
}

/** Which part of the database an audit reads. */
export interface AuditScope {
  /** Only this key's rows; all keys when undefined. */
  readonly keyId: string | undefined;
  /** Active holds whose expiry is before this (epoch ms) should have been released by a sweeper. */
  readonly staleBefore: number;
}

/** One broken invariant found by `tollgate audit` (testing.md). */
export interface LedgerViolation {
  /**
   * cached_balance, held_vs_active_holds, hold_ends, capture_without_usage, entry_without_hold,
   * expired_hold_active; account_cached_balance and account_vs_keys (an account's: keyId null).
   */
  readonly check: string;
  readonly keyId: string | null;
  /** The account of an account check. */
  readonly accountId?: string;
  readonly requestId: string | null;
  readonly detail: string;
}

export interface HoldGrowth {
  readonly requestId: string;
  /** What the hold grows by (nano-dollars): admitted like a new hold of this amount. */
  readonly amount: Nano;
  readonly now: number;
  readonly budget: BudgetWindow;
  /** The account's budget window; absent: the account has none. */
  readonly accountBudget?: BudgetWindow;
}

/**
 * grown: admitted, the hold now covers `amount` more; refused: the key cannot cover it (balance or budget);
 * expired: a sweeper expired the hold (renew it first); closed: already captured or released; missing.
 */
export type GrowOutcome = { readonly outcome: 'grown' | 'expired' | 'closed' | 'missing' } | { readonly outcome: 'refused'; readonly refusal: Refusal };

export interface NewAccount {
  readonly id: string;
  readonly name: string;
  readonly initialBalance: Nano;
  /** Ledger request id of the initial top-up. */
  readonly topupRequestId: string;
  readonly now: number;
  readonly limits?: AccountLimits;
  readonly metadata?: KeyMetadata;
  readonly allowedModels?: AllowedModels;
}

/** A change to an account: a field that is absent stays; a null limit clears it. */
export interface AccountChange {
  readonly name?: string;
  readonly status?: AccountStatus;
  readonly budget?: Nano | null;
  readonly budgetPeriod?: BudgetPeriod | null;
  /** Replaces the whole metadata object. */
  readonly metadata?: KeyMetadata;
  readonly allowedModels?: AllowedModels;
}

/** One page of accounts, in creation order (created_at, id), after the cursor's account. */
export interface AccountPageQuery {
  readonly status?: AccountStatus;
  /** Personal accounts (one per key made without an account) are listed only when asked. */
  readonly includePersonal?: boolean;
  readonly namePrefix?: string;
  readonly after?: { readonly createdAt: string; readonly id: string };
  readonly limit: number;
}

export interface AccountStore {
  create(account: NewAccount): Promise<AccountRecord>;
  get(id: string): Promise<AccountRecord | undefined>;
  page(query: AccountPageQuery): Promise<AccountRecord[]>;
  /** Several fields at once (one statement); undefined when there is no such account. */
  update(id: string, change: AccountChange): Promise<AccountRecord | undefined>;
  /** A top-up or an adjustment of an account (or of a key's account): the balance and one entry move together, once per request id. */
  credit(credit: Credit): Promise<CreditOutcome>;
  /** Sets (or with null clears) the self-service token: only its hash is kept. */
  setToken(id: string, token: { readonly prefix: string; readonly hash: string } | null): Promise<AccountRecord | undefined>;
  findByTokenHash(hash: string): Promise<AccountRecord | undefined>;
  /** Each key's spend (captured) in this account, with its held. */
  keys(accountId: string): Promise<KeyRecord[]>;
}

/** unused: redeemable now; redeemed, revoked; expired: past its expiry and never redeemed or revoked. */
export type CodeStatus = 'unused' | 'redeemed' | 'revoked' | 'expired';

/** A redemption code (docs/adr/0051-redemption-codes.md): only its hash and prefix are stored. */
export interface CodeRecord {
  readonly id: string;
  /** The first characters of the code, for recognising it in listings. */
  readonly prefix: string;
  /** Nano-dollars it credits. */
  readonly amount: Nano;
  /** Only this account may redeem it; null: any. */
  readonly accountId: string | null;
  /** Epoch ms after which it cannot be redeemed; null: never. */
  readonly expiresAt: number | null;
  readonly batchId: string;
  readonly note: string | null;
  readonly createdAt: string;
  /** Epoch ms; null: not redeemed. */
  readonly redeemedAt: number | null;
  readonly redeemedAccountId: string | null;
  /** The key that was sent to redeem it (null: an account token, or not redeemed). */
  readonly redeemedKeyId: string | null;
  /** Epoch ms; null: not revoked. */
  readonly revokedAt: number | null;
}

export interface NewCode {
  readonly id: string;
  readonly hash: string;
  readonly prefix: string;
  readonly amount: Nano;
  readonly accountId: string | null;
  readonly expiresAt: number | null;
  readonly batchId: string;
  readonly note: string | null;
  readonly now: number;
}

/** One page of codes, in creation order (created_at, id), after the cursor's code. */
export interface CodePageQuery {
  /** `expired` and `unused` are decided at `now`. */
  readonly status?: CodeStatus;
  readonly batchId?: string;
  readonly after?: { readonly createdAt: string; readonly id: string };
  readonly limit: number;
  readonly now: number;
}

/** A redemption: the code's hash, who redeems it, when. */
export interface Redemption {
  readonly hash: string;
  readonly accountId: string;
  /** The key that was sent instead of an account token; null: the account's token. */
  readonly keyId: string | null;
  readonly now: number;
}

/**
 * applied: the code was claimed and the account credited, together. Otherwise nothing changed: unknown
 * (no code with this hash), used (redeemed before), revoked, expired, wrong_account (restricted to
 * another account), suspended (the redeeming account is suspended), missing (no such account),
 * over_maximum (the credit would take the balance past MAX_NANO).
 */
export type RedeemResult =
  | { readonly outcome: 'applied'; readonly code: CodeRecord; readonly account: AccountRecord }
  | { readonly outcome: 'unknown' | 'used' | 'revoked' | 'expired' | 'wrong_account' | 'suspended' | 'missing' | 'over_maximum' };

export interface CodeStore {
  /** Inserts a batch of codes (one transaction: all or none). */
  create(codes: readonly NewCode[]): Promise<void>;
  get(id: string): Promise<CodeRecord | undefined>;
  page(query: CodePageQuery): Promise<CodeRecord[]>;
  /**
   * Revokes the code, or every code of the batch, that is neither redeemed nor revoked (an expired one
   * too: it stays revoked if its expiry is ever moved); returns how many it revoked.
   */
  revoke(target: { readonly id: string } | { readonly batchId: string }, now: number): Promise<number>;
  /** One transaction: the code claimed by one conditional UPDATE and the account credited once. */
  redeem(redemption: Redemption): Promise<RedeemResult>;
}

export interface KeyStore {
  create(key: NewKey): Promise<KeyRecord>;
  /**
   * Any status: the caller decides what a revoked key may do. `maxAgeMs` > 0: an active key this process
   * read at most that long ago may answer instead of the database (PostgreSQL; SQLite always reads) —
   * only for requests whose hold re-checks the key's status and expiry (docs/adr/0027-recent-key-rows.md).
   */
  findByHash(secretHash: string, maxAgeMs?: number): Promise<KeyRecord | undefined>;
  get(id: string): Promise<KeyRecord | undefined>;
  list(): Promise<KeyRecord[]>;
  topUp(id: string, amount: Nano, requestId: string, now: number): Promise<KeyRecord | undefined>;
  setAllowedModels(id: string, models: AllowedModels): Promise<KeyRecord | undefined>;
  setLimits(id: string, patch: LimitsPatch): Promise<KeyRecord | undefined>;
  revoke(id: string, now: number): Promise<KeyRecord | undefined>;
  /** Keys in creation order, filtered, after a cursor. */
  page(query: KeyPageQuery): Promise<KeyRecord[]>;
  /** Changes several fields at once (one statement); undefined when there is no such key. */
  update(id: string, change: KeyChange): Promise<KeyRecord | undefined>;
  /** A new secret for the same key (its balance, limits and history stay). */
  rotate(id: string, prefix: string, secretHash: string): Promise<KeyRecord | undefined>;
  /** A key's (or an account's) ledger entries, newest first. */
  entries(query: EntryPageQuery): Promise<LedgerEntry[]>;
}

export interface LedgerStore {
  /** Atomic admission: admitted only if balance − held ≥ amount, and the key is active. */
  placeHold(hold: HoldPlacement): Promise<Admission>;
  /**
   * Charges the cost, releases the hold and records the usage row (its cost: what was charged);
   * idempotent by request id. An expired hold is charged only through admission (SettleOutcome).
   */
  settle(settlement: Settlement): Promise<SettleResult>;
  /** Releases the hold without a charge (the usage row, if given, records the failure). */
  release(requestId: string, usage: UsageRecord | undefined, now: number): Promise<ReleaseOutcome>;
  /** A live request keeps its hold: extends it, or re-admits it if a sweeper expired it meanwhile. */
  renewHold(renewal: HoldRenewal): Promise<RenewOutcome>;
  /** Grows an active hold by `amount` through the same atomic admission as a new hold (growing holds). */
  growHold(growth: HoldGrowth): Promise<GrowOutcome>;
  /** Releases holds whose expiry has passed; returns how many. */
  expireHolds(now: number, limit: number): Promise<number>;
  audit(keyId: string): Promise<LedgerAudit>;
  /** Every broken billing invariant in the database (or of one key), read in one snapshot. */
  findViolations(scope: AuditScope): Promise<LedgerViolation[]>;
}

export interface UsageQuery {
  readonly keyId?: string;
  /** Epoch milliseconds, inclusive. */
  readonly since?: number;
  /** The most recent rows up to this many (returned oldest first). */
  readonly limit: number;
}

/** A status filter: one HTTP status, a class of them, or every error (status ≥ 400). */
export type StatusFilter = number | '2xx' | '4xx' | '5xx' | 'error';

/** Which usage rows: every field optional; times are epoch ms, since inclusive, until exclusive. */
export interface UsageFilter {
  readonly keyId?: string;
  /** The rows of every key of this account. */
  readonly accountId?: string;
  readonly model?: string;
  readonly provider?: string;
  readonly status?: StatusFilter;
  readonly endpoint?: UsageEndpoint;
  readonly sessionId?: string;
  readonly requestId?: string;
  readonly since?: number;
  readonly until?: number;
}

/** One page of usage rows, newest first (by insertion order), older than the cursor's row. */
export interface UsagePageQuery extends UsageFilter {
  readonly beforeSeq?: number;
  readonly limit: number;
}

/** A usage row with its insertion sequence (the cursor). */
export interface SequencedUsage {
  readonly seq: number;
  readonly record: UsageRecord;
}

export type UsageGrouping = 'key' | 'account' | 'model' | 'provider' | 'endpoint' | 'session' | 'day' | 'hour';

/** The totals of one group: `group` is the key id, model, provider, client API or session, or the period's start (epoch ms). */
export interface UsageTotals {
  readonly group: string | number | null;
  readonly requests: number;
  /** Rows whose status is 400 or above. */
  readonly errors: number;
  readonly inputTokens: number;
  readonly cachedInputTokens: number;
  readonly outputTokens: number;
  readonly reasoningTokens: number;
  readonly cost: Nano;
}

/** Requests refused for want of a valid key, counted per minute (never one row each: a flood must not grow the database). */
export interface UnauthenticatedCount {
  /** The minute's start, epoch ms. */
  readonly minute: number;
  readonly requests: number;
}

export type UnauthenticatedGrouping = 'minute' | 'hour' | 'day';

export interface UsageStore {
  list(query: UsageQuery): Promise<UsageRecord[]>;
  page(query: UsagePageQuery): Promise<SequencedUsage[]>;
  summarize(filter: UsageFilter, groupBy: UsageGrouping): Promise<UsageTotals[]>;
  /**
   * Usage rows of requests that moved no money (refused, quoted, replayed, failed before a hold): no
   * ledger entry goes with them. A second row with a request id already recorded is ignored.
   */
  recordOutcomes(records: readonly UsageRecord[]): Promise<void>;
  /** Adds per-minute counts of requests without a valid key. */
  countUnauthenticated(counts: readonly UnauthenticatedCount[]): Promise<void>;
  /** Those counts per minute, hour or UTC day, oldest first; times are epoch ms, since inclusive, until exclusive. */
  unauthenticated(range: { readonly since?: number; readonly until?: number }, groupBy: UnauthenticatedGrouping): Promise<UnauthenticatedCount[]>;
}

/** A recorded answer, replayed to a retry with the same Idempotency-Key. */
export interface StoredAnswer {
  readonly status: number;
  readonly contentType: string;
  /** The whole body (a stream: its whole SSE text). */
  readonly body: string;
}

export interface IdempotencyClaim {
  /** Whose keys: 'admin', or 'key:<api key id>' — the same Idempotency-Key of two callers never meets. */
  readonly scope: string;
  readonly key: string;
  /** SHA-256 of what makes two requests the same (method, path, body). */
  readonly requestHash: string;
  readonly now: number;
  /** How long a running claim stands before it counts as abandoned (its process died). */
  readonly leaseMs: number;
  /** How long the record is kept (≥ 24 h by contract). */
  readonly keepMs: number;
}

/**
 * claimed: the caller runs the request (a new key, an expired record, or a claim whose lease lapsed);
 * running: another request with this key is in flight; mismatch: the key was used with another request;
 * done: it finished — `answer` to replay, or null when it was too large to keep.
 */
export type ClaimOutcome =
  | { readonly outcome: 'claimed' | 'running' | 'mismatch' }
  | { readonly outcome: 'done'; readonly answer: StoredAnswer | null };

/** Idempotency-Key records: one mechanism for every endpoint that takes the header. */
export interface IdempotencyStore {
  /** Atomically claims (scope, key) for a request, or says why it cannot run. */
  claim(claim: IdempotencyClaim): Promise<ClaimOutcome>;
  /** Records the answer (null: too large to keep) of a claimed request; replays return it from now on. */
  complete(scope: string, key: string, answer: StoredAnswer | null, now: number): Promise<void>;
  /** A long request keeps its claim from lapsing. */
  renew(scope: string, key: string, leaseUntil: number): Promise<void>;
  /** The claimed request had no effect and may run again (it was refused before doing anything). */
  forget(scope: string, key: string): Promise<void>;
  /** Deletes records past their expiry; returns how many. */
  expire(now: number, limit: number): Promise<number>;
}

/**
 * A response an upstream stored (OpenAI Responses, product.md §14): its id and its output items' ids, the
 * upstream account that holds them and the response's token counts — ids and counts only, never content.
 */
export interface StoredResponse {
  readonly keyId: string;
  readonly responseId: string;
  readonly itemIds: readonly string[];
  /** The provider (upstream account) that made and keeps it: a later request naming it must go there. */
  readonly provider: string;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Epoch ms after which it is forgotten (the sweeper deletes it). */
  readonly expiresAt: number;
}

/** What one recorded id (a response's or an output item's) names: its response and that response's figures. */
export interface StoredResponseRef {
  readonly id: string;
  readonly responseId: string;
  readonly provider: string;
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** The Responses state per key: which upstream account holds a response or item id, and its size. */
export interface ResponseStateStore {
  /** Records a response and its output items under the key (an id recorded again is replaced). */
  record(response: StoredResponse): Promise<void>;
  /** Those of `ids` recorded for this key and not expired at `now` (in no particular order). */
  find(keyId: string, ids: readonly string[], now: number): Promise<StoredResponseRef[]>;
  /** Deletes up to `limit` ids past their expiry; returns how many. */
  expire(now: number, limit: number): Promise<number>;
}

export interface StoreOptions {
  /**
   * How long a write waits for another process's lock. The SQLite driver waits synchronously, so the
   * server keeps it short (a CLI write holds the lock for milliseconds); CLI commands can wait longer.
   */
  readonly busyTimeoutMs?: number;
  /** PostgreSQL: the most connections the process opens (default 10). */
  readonly maxConnections?: number;
  /** Told when the database stops answering and when it answers again (the server's log lines). */
  readonly reachability?: ReachabilityObserver;
}

/**
 * What the store tells about the database being there at all (telemetry/reachability.ts logs it): a
 * connection that cannot be opened or is lost, a write the database cannot take (SQLite locked or
 * read-only), and an answer again. A query's own error (a constraint, a refusal) is neither.
 */
export interface ReachabilityObserver {
  failed(error: unknown): void;
  succeeded(): void;
}

/** What operators' probes ask the database: readiness, and the holds gauges of /metrics. */
export interface StoreProbe {
  /** Resolves when the database answers a trivial query; rejects otherwise. */
  ping(): Promise<void>;
  /** Holds open now (every gateway on this database) and the nano-dollars they hold. */
  activeHolds(): Promise<{ readonly count: number; readonly amount: Nano }>;
}

/** The events Tollgate announces (docs/adr/0052-signed-webhooks.md). */
export type WebhookEventType =
  | 'balance.low'
  | 'budget.reached'
  | 'key.expiring'
  | 'key.revoked'
  | 'payment.succeeded'
  | 'payment.refunded'
  | 'upstream.cooling'
  | 'upstream.recovered';

export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'balance.low',
  'budget.reached',
  'key.expiring',
  'key.revoked',
  'payment.succeeded',
  'payment.refunded',
  'upstream.cooling',
  'upstream.recovered',
];

/** An event to write to the outbox. */
export interface NewWebhookEvent {
  readonly type: WebhookEventType;
  /** The payload's `data`: a JSON object. */
  readonly data: Readonly<Record<string, unknown>>;
  /** An event written at most once under this key (a second enqueue with it changes nothing). */
  readonly dedupeKey?: string;
}

export type WebhookStatus = 'pending' | 'delivered' | 'failed' | 'skipped';
export const WEBHOOK_STATUSES: readonly WebhookStatus[] = ['pending', 'delivered', 'failed', 'skipped'];

/** One outbox row. */
export interface WebhookEventRecord {
  /** Insertion order: the listing's cursor. */
  readonly id: number;
  /** The `webhook-id` header: the same on every attempt. */
  readonly messageId: string;
  readonly type: WebhookEventType;
  readonly data: Readonly<Record<string, unknown>>;
  /** Epoch ms: the payload's `timestamp`. */
  readonly createdAt: number;
  readonly status: WebhookStatus;
  readonly attempts: number;
  readonly nextAttemptAt: number;
  /** Back-off and giving up count from here (the event's creation, or its last resend). */
  readonly retryFrom: number;
  /** Endpoint URLs that answered 2xx (a retry skips them). */
  readonly deliveredTo: readonly string[];
  readonly lastError: string | null;
  readonly lastAttemptAt: number | null;
  readonly deliveredAt: number | null;
}

/** Due rows leased to one deliverer. */
export interface WebhookClaim {
  /** Who leases (one deliverer of one process): only its completion counts. */
  readonly owner: string;
  readonly now: number;
  readonly leaseMs: number;
  readonly limit: number;
}

/**
 * What one delivery round did: delivered (every endpoint it was due at answered 2xx); retry at
 * `nextAttemptAt`; failed (gave up); skipped (no configured endpoint wants it); released (not tried:
 * the process is stopping). `deliveredTo`: the endpoints that answered 2xx so far.
 */
export type WebhookAttemptResult =
  | { readonly outcome: 'delivered' | 'skipped'; readonly deliveredTo: readonly string[] }
  | { readonly outcome: 'retry'; readonly deliveredTo: readonly string[]; readonly error: string; readonly nextAttemptAt: number }
  | { readonly outcome: 'failed'; readonly deliveredTo: readonly string[]; readonly error: string }
  | { readonly outcome: 'released' };

/** One page of events, newest first, older than the cursor's. */
export interface WebhookPageQuery {
  readonly type?: WebhookEventType;
  readonly status?: WebhookStatus;
  readonly beforeId?: number;
  readonly limit: number;
}

/** What the notification scanner compares with (the config's defaults). */
export interface NotificationScan {
  readonly now: number;
  /** An account's threshold when its metadata sets none (`balance_low_usd`); null: no default. */
  readonly balanceLow: Nano | null;
  /** The key budget default (`limits.budget`, `limits.budget_period`). */
  readonly keyBudget: Nano | null;
  readonly keyBudgetPeriod: BudgetPeriod;
}

/** The outbox (docs/adr/0052-signed-webhooks.md). */
export interface WebhookStore {
  /** Writes an event in its own transaction (an upstream's cool-down: no database change causes it); false: its dedupe key was written before. */
  enqueue(event: NewWebhookEvent, now: number): Promise<boolean>;
  /**
   * The notification scan, one transaction: every threshold or time condition that holds and was not yet
   * announced flips its marker and writes its event together (and re-arms the ones that no longer hold).
   * Returns the events written.
   */
  scan(scan: NotificationScan): Promise<number>;
  /** Leases up to `limit` due pending rows to `owner` (rows another deliverer leases are skipped). */
  claim(claim: WebhookClaim): Promise<WebhookEventRecord[]>;
  /** Records a round's result; false when the lease was lost (another owner, or no longer pending): nothing changed. */
  complete(id: number, owner: string, result: WebhookAttemptResult, now: number): Promise<boolean>;
  get(id: number): Promise<WebhookEventRecord | undefined>;
  page(query: WebhookPageQuery): Promise<WebhookEventRecord[]>;
  /** Makes an event due again at once, to every endpoint that wants it; undefined: no such event. */
  resend(id: number, now: number): Promise<WebhookEventRecord | undefined>;
  /** Pending rows (the metrics gauge). */
  pendingCount(): Promise<number>;
  /** Deletes up to `limit` settled events (not pending) created before `before`; returns how many. */
  prune(before: number, limit: number): Promise<number>;
}

/** A paid Stripe Checkout Session, recorded with its credit (docs/adr/0050-stripe-top-ups.md). */
export interface NewPayment {
  readonly sessionId: string;
  readonly paymentIntent: string | null;
  readonly accountId: string;
  /** The key that started the checkout, if a key did. */
  readonly keyId: string | null;
  /** Nano-dollars credited (positive). */
  readonly amount: Nano;
  /** The credit's ledger request id ('stripe:<session id>'): a second credit with it is a duplicate. */
  readonly requestId: string;
  readonly note: string;
  readonly now: number;
}

/** applied: recorded and credited; duplicate: recorded before (nothing changed); missing: no such account; over_maximum: the balance would pass MAX_NANO. */
export type PaymentOutcome = 'applied' | 'duplicate' | 'missing' | 'over_maximum';

export interface PaymentRecord {
  readonly sessionId: string;
  readonly paymentIntent: string | null;
  readonly accountId: string;
  readonly keyId: string | null;
  readonly amount: Nano;
  /** Cumulative nano-dollars Stripe refunded. */
  readonly refunded: Nano;
  readonly disputed: Nano;
  /** Of the refunded and disputed, what the account's available balance could not cover. */
  readonly unrecovered: Nano;
  readonly createdAt: number;
}

/**
 * Money Stripe took back from a recorded payment, named by its PaymentIntent. A refund carries the charge's
 * cumulative refunded amount (the newly refunded part is what exceeds the payment's `refunded`); a dispute
 * its own amount, once per dispute id.
 */
export interface PaymentReversal {
  readonly kind: 'refund' | 'dispute';
  readonly paymentIntent: string;
  /** refund: the cumulative amount refunded; dispute: the disputed amount (nano-dollars, positive). */
  readonly amount: Nano;
  /** 'refund:<charge id>:<cumulative cents>' or 'dispute:<dispute id>': the reversal's record and its ledger request id. */
  readonly id: string;
  /** The adjustment entry's note (names the payment). */
  readonly note: string;
  readonly now: number;
}

/**
 * unknown_payment: no payment with this PaymentIntent (nothing changed); duplicate: already recorded
 * (nothing changed); applied: `taken` nano-dollars newly reversed, `debited` of them taken from the
 * balance by one negative adjustment, the rest (`taken − debited`) recorded as unrecovered.
 */
export type ReversalResult =
  | { readonly outcome: 'unknown_payment' }
  | { readonly outcome: 'duplicate'; readonly payment: PaymentRecord }
  | { readonly outcome: 'applied'; readonly payment: PaymentRecord; readonly taken: Nano; readonly debited: Nano };

export interface PaymentPageQuery {
  readonly accountId?: string;
  /** The last row of the previous page: older rows follow (newest first). */
  readonly before?: { readonly createdAt: number; readonly sessionId: string };
  readonly limit: number;
}

/** Stripe payments: each write one transaction with the ledger entry it causes. */
export interface PaymentStore {
  /** Records the paid session and credits its account, both or neither. */
  recordPaid(payment: NewPayment): Promise<PaymentOutcome>;
  /** Takes a refund or a dispute back from the payment's account (never below its available balance). */
  reverse(reversal: PaymentReversal): Promise<ReversalResult>;
  get(sessionId: string): Promise<PaymentRecord | undefined>;
  byPaymentIntent(paymentIntent: string): Promise<PaymentRecord | undefined>;
  /** Newest first. */
  page(query: PaymentPageQuery): Promise<PaymentRecord[]>;
}

export interface Store {
  readonly accounts: AccountStore;
  readonly keys: KeyStore;
  /** Redemption codes (docs/adr/0051-redemption-codes.md). */
  readonly codes: CodeStore;
  readonly ledger: LedgerStore;
  readonly usage: UsageStore;
  readonly idempotency: IdempotencyStore;
  /** Responses API state: stored response and item ids per key (product.md §14). */
  readonly responses: ResponseStateStore;
  /** The webhook outbox. */
  readonly webhooks: WebhookStore;
  /** Stripe Checkout payments and what was taken back (docs/adr/0050-stripe-top-ups.md). */
  readonly payments: PaymentStore;
  readonly probe: StoreProbe;
  close(): Promise<void>;
}

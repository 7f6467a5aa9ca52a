// `tollgate audit` (and the admin API's GET /admin/v1/audit): every billing invariant of testing.md
// checked over the whole database, or one key — cached vs derived balances, held vs active holds, holds
// that do not end exactly once, captures without their usage row, entries without a hold, and active
// holds past their expiry plus a sweep interval (a sweeper should have released them).
import type { Config } from '../config/types.js';
import type { LedgerViolation, Store } from '../storage/types.js';
import type { ViolationJson } from './json-types.js';

export interface AuditReport {
  readonly ok: boolean;
  readonly violations: readonly LedgerViolation[];
}

export async function auditLedger(store: Store, config: Config, options: { readonly keyId?: string; readonly now?: number } = {}): Promise<AuditReport> {
  const now = options.now ?? Date.now();
  const violations = await store.ledger.findViolations({ keyId: options.keyId, staleBefore: now - config.billing.sweepIntervalSeconds * 1000 });
  return { ok: violations.length === 0, violations };
}

/** The JSON shape of a violation (CLI --json and the admin API). */
export function violationJson(violation: LedgerViolation): ViolationJson {
  return {
    check: violation.check,
    key_id: violation.keyId,
    ...(violation.accountId !== undefined ? { account_id: violation.accountId } : {}),
    request_id: violation.requestId,
    detail: violation.detail,
  };
}

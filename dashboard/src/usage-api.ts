// Usage rows from /admin/v1/usage, and one row by its request id for the request's own page. Rows never
// change once written, so a row the page has already listed is shown from memory (no second fetch when
// the operator clicks it); a linked request id is asked for with `?request_id=`.
import { getJson, withQuery } from './api.js';
import type { ListPage, UsageJson } from './types.js';

const USAGE = '/admin/v1/usage';
/** Rows kept for their detail pages: about ten pages of the usage table. */
const REMEMBERED = 500;
const seen = new Map<string, UsageJson>();

export function rememberRows(rows: readonly UsageJson[]): void {
  for (const row of rows) {
    seen.delete(row.request_id);
    seen.set(row.request_id, row);
  }
  // Oldest first out (a Map keeps insertion order).
  for (const id of seen.keys()) {
    if (seen.size <= REMEMBERED) break;
    seen.delete(id);
  }
}

export async function listUsage(token: string, params: Record<string, string | number | undefined>): Promise<ListPage<UsageJson>> {
  const page = await getJson<ListPage<UsageJson>>(withQuery(USAGE, params), { token });
  rememberRows(page.data);
  return page;
}

/** The row of one request; undefined when there is none. */
export async function findUsageRow(token: string, requestId: string): Promise<UsageJson | undefined> {
  const known = seen.get(requestId);
  if (known) return known;
  const page = await listUsage(token, { request_id: requestId, limit: 1 });
  return page.data.find((r) => r.request_id === requestId);
}

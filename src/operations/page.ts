// Cursor pagination, the one shape every list has (product.md §9): `?limit=N&after=CURSOR` →
// `{object: "list", data, has_more, next_cursor}`. A cursor is opaque to clients (base64url JSON naming
// its list and the position after which the next page starts); a malformed or foreign one is a 400.
import { GatewayError } from '../errors.js';
import type { ListPage } from './json-types.js';

export type { ListPage };

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

function badCursor(): never {
  throw new GatewayError('invalid_request', { param: 'after', message: "Invalid 'after': not a cursor from this list; pass next_cursor as it was returned." });
}

export function encodeCursor(list: string, position: unknown): string {
  return Buffer.from(JSON.stringify({ l: list, p: position })).toString('base64url');
}

/** The position a cursor of `list` holds, checked by `valid`; anything else is a 400 naming `after`. */
export function decodeCursor<T>(list: string, cursor: unknown, valid: (position: unknown) => position is T): T {
  if (typeof cursor !== 'string' || !/^[A-Za-z0-9_-]{1,512}$/.test(cursor)) badCursor();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    badCursor();
  }
  const { l, p } = (decoded ?? {}) as { l?: unknown; p?: unknown };
  if (l !== list || !valid(p)) badCursor();
  return p;
}

/** `limit`: a whole number from 1 to MAX_PAGE_SIZE (a string from a query or a flag is read as one). */
export function pageSize(value: unknown): number {
  if (value === undefined) return DEFAULT_PAGE_SIZE;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > MAX_PAGE_SIZE) {
    throw new GatewayError('invalid_request', { param: 'limit', message: `Invalid 'limit': expected a whole number from 1 to ${MAX_PAGE_SIZE}.` });
  }
  return n;
}

/**
 * The page of `rows` (fetched with one more than `limit`, to learn whether more follow) as the list
 * object, with a cursor at its last row.
 */
export function listPage<R, T>(list: string, rows: readonly R[], limit: number, render: (row: R) => T, position: (row: R) => unknown): ListPage<T> {
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return {
    object: 'list',
    data: page.map(render),
    has_more: hasMore,
    next_cursor: hasMore ? encodeCursor(list, position(page[page.length - 1]!)) : null,
  };
}

/** Every row of a paged list, one page at a time (never the whole list in memory). */
export async function* walkPages<T>(first: ListPage<T>, next: (cursor: string) => Promise<ListPage<T>>): AsyncGenerator<T> {
  let page = first;
  for (;;) {
    yield* page.data;
    if (!page.has_more || page.next_cursor === null) return;
    page = await next(page.next_cursor);
  }
}

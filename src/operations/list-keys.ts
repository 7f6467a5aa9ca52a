// The key listing every face shows: key objects in creation order, filtered by status and name prefix,
// a page at a time.
import type { Config } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { KeyPageQuery, KeyStatus, Store } from '../storage/types.js';
import type { KeyJson } from './json-types.js';
import { keyObject } from './key-object.js';
import { decodeCursor, listPage, pageSize, walkPages, type ListPage } from './page.js';

export interface KeyListInput {
  /** active or revoked. */
  readonly status?: unknown;
  /** A name prefix. */
  readonly name?: unknown;
  /** Only the keys of this account. */
  readonly account_id?: unknown;
  readonly limit?: unknown;
  readonly after?: unknown;
}

interface KeyPosition {
  c: string;
  i: string;
}

const isKeyPosition = (p: unknown): p is KeyPosition =>
  typeof p === 'object' && p !== null && typeof (p as KeyPosition).c === 'string' && typeof (p as KeyPosition).i === 'string';

function statusOf(value: unknown): KeyStatus | undefined {
  if (value === undefined) return undefined;
  if (value === 'active' || value === 'revoked') return value;
  throw new GatewayError('invalid_request', { param: 'status', message: "Invalid 'status': expected active or revoked." });
}

function namePrefixOf(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  throw new GatewayError('invalid_request', { param: 'name', message: "Invalid 'name': expected a name prefix." });
}

export async function listKeys(store: Store, config: Config, input: KeyListInput = {}, now = Date.now()): Promise<ListPage<KeyJson>> {
  const limit = pageSize(input.limit);
  const status = statusOf(input.status);
  const namePrefix = namePrefixOf(input.name);
  if (input.account_id !== undefined && (typeof input.account_id !== 'string' || input.account_id === '')) {
    throw new GatewayError('invalid_request', { param: 'account_id', message: "Invalid 'account_id': expected an account id." });
  }
  const after = input.after === undefined ? undefined : decodeCursor('keys', input.after, isKeyPosition);
  const query: KeyPageQuery = {
    ...(status ? { status } : {}),
    ...(namePrefix ? { namePrefix } : {}),
    ...(input.account_id !== undefined ? { accountId: input.account_id } : {}),
    ...(after ? { after: { createdAt: after.c, id: after.i } } : {}),
    limit: limit + 1,
  };
  const rows = await store.keys.page(query);
  return listPage('keys', rows, limit, (k) => keyObject(k, config, now), (k) => ({ c: k.createdAt, i: k.id }));
}

/** Every key that matches, a page at a time. */
export async function* walkKeys(store: Store, config: Config, input: Omit<KeyListInput, 'limit' | 'after'> = {}): AsyncGenerator<KeyJson> {
  const page = (after?: string) => listKeys(store, config, { ...input, limit: 500, ...(after ? { after } : {}) });
  yield* walkPages(await page(), page);
}

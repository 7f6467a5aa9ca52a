// Plumbing for the admin API's end-to-end tests: a gateway (SQLite or PostgreSQL) with admin.token set
// from $TOLLGATE_ADMIN_TOKEN, and a fetch helper for /admin/v1.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { call, sdk, type Json, type RawResponse } from './e2e.js';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from './gateway-process.js';
import { startMockUpstream, type MockUpstream } from './mock-upstream.js';
import { freshPgSchema, postgresSkipReason, type PgSchema } from './postgres.js';

/** A fresh admin token per test process (52 characters). */
export const ADMIN_TOKEN = `adm-${randomBytes(24).toString('hex')}`;

export interface AdminDialect {
  readonly name: 'sqlite' | 'postgres';
  readonly skip: string | undefined;
}

export async function adminDialects(): Promise<AdminDialect[]> {
  return [
    { name: 'sqlite', skip: undefined },
    { name: 'postgres', skip: await postgresSkipReason() },
  ];
}

export interface AdminE2E {
  readonly mock: MockUpstream;
  readonly gw: GatewayProcess;
  close(): Promise<void>;
}

export const adminConfigYaml = 'admin:\n  token: ${TOLLGATE_ADMIN_TOKEN}\n';

/** The mock upstream and a gateway with the admin API on, on the dialect's database. */
export async function startAdminE2E(dialect: AdminDialect['name']): Promise<AdminE2E> {
  const mock = await startMockUpstream();
  let schema: PgSchema | undefined;
  try {
    schema = dialect === 'postgres' ? await freshPgSchema() : undefined;
    const gw = await startGateway({
      config: mockConfig(mock, adminConfigYaml),
      env: { TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN },
      ...(schema ? { database: schema.url } : {}),
    });
    return {
      mock,
      gw,
      async close() {
        await mock.close();
        await stopGateway(gw, 10_000);
        await schema?.drop();
      },
    };
  } catch (error) {
    await mock.close();
    await schema?.drop();
    throw error;
  }
}

export interface AdminCallOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** The bearer token; the admin token by default, null for none. */
  token?: string | null;
}

/** A request to /admin/v1 + path. */
export function admin(gw: GatewayProcess, method: string, path: string, opts: AdminCallOptions = {}): Promise<RawResponse> {
  const token = opts.token === undefined ? ADMIN_TOKEN : opts.token;
  return call(gw, method, `//admin/v1${path}`, {
    ...(token === null ? {} : { key: token }),
    ...(opts.body !== undefined ? { body: opts.body } : {}),
    ...(opts.headers ? { headers: opts.headers } : {}),
  });
}

/** The JSON of a 200 answer (failing with the body otherwise). */
export async function adminOk(gw: GatewayProcess, method: string, path: string, opts: AdminCallOptions = {}): Promise<Json> {
  const res = await admin(gw, method, path, opts);
  assert.equal(res.status, 200, `${method} ${path}: ${res.text}`);
  return res.json;
}

/** Asserts the §6 envelope with this status and code; returns the error object. */
export function assertError(res: RawResponse, status: number, code: string): Json {
  assert.equal(res.status, status, res.text);
  assert.deepEqual(Object.keys(res.json.error).sort().filter((k: string) => k !== 'metadata'), ['code', 'message', 'param', 'type']);
  assert.equal(res.json.error.code, code, res.text);
  return res.json.error;
}

/** Every item of a list endpoint, following next_cursor (`query` without limit/after). */
export async function walkList(gw: GatewayProcess, path: string, limit: number, between?: () => Promise<void>): Promise<Json[]> {
  const items: Json[] = [];
  let after: string | null = null;
  const sep = path.includes('?') ? '&' : '?';
  for (;;) {
    const page: Json = await adminOk(gw, 'GET', `${path}${sep}limit=${limit}${after ? `&after=${after}` : ''}`);
    assert.equal(page.object, 'list');
    assert.ok(page.data.length <= limit, 'a page holds at most limit items');
    items.push(...page.data);
    if (!page.has_more) {
      assert.equal(page.next_cursor, null);
      return items;
    }
    assert.equal(typeof page.next_cursor, 'string');
    after = page.next_cursor;
    if (between) await between();
  }
}

/** One non-stream chat call with `secret` (one usage row). */
export async function chatOnce(gw: GatewayProcess, secret: string, model = 'gpt-test'): Promise<void> {
  await sdk(gw, secret).chat.completions.create({ model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 20 });
}

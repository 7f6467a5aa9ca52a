// Calls to the gateway's public APIs (the /v1 API and /admin/v1), with the session's token as a bearer
// token. Errors come back in the OpenAI envelope; they become ApiErrors with the code and message.
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    message: string,
  ) {
    super(message);
  }
}

export interface RequestOptions {
  readonly token?: string;
  readonly method?: 'GET' | 'POST' | 'PATCH';
  readonly body?: unknown;
  /** Idempotency-Key for a POST, so a double click or a retry never runs it twice. */
  readonly idempotencyKey?: string;
  /** Don't sign out on a 401 (the sign-in form checks a token that is not kept yet). */
  readonly quiet?: boolean;
}

let onUnauthorized: (() => void) | undefined;

/** What to do when the kept token stops working (revoked key, changed admin token): sign out. */
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

export async function request(path: string, options: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
  const response = await fetch(path, {
    method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    credentials: 'omit',
    cache: 'no-store',
  });
  if (!response.ok) {
    let code: string | null = null;
    let message = `HTTP ${response.status}`;
    try {
      const body = (await response.json()) as { error?: { code?: string | null; message?: string } };
      code = body.error?.code ?? null;
      message = body.error?.message ?? message;
    } catch {
      // not JSON: keep the status line
    }
    if (response.status === 401 && !options.quiet) onUnauthorized?.();
    throw new ApiError(response.status, code, message);
  }
  return response;
}

export async function getJson<T>(path: string, options: RequestOptions = {}): Promise<T> {
  return (await (await request(path, options)).json()) as T;
}

/** A path with query parameters; empty values are left out. */
export function withQuery(path: string, params: Record<string, string | number | undefined | null>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') query.set(name, String(value));
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

/** A fresh Idempotency-Key for one user action (kept while the action is retried). */
export function newIdempotencyKey(): string {
  return crypto.randomUUID();
}

/**
 * Downloads a file from the API with the token in the Authorization header (never in the URL): fetch,
 * then a Blob handed to the browser as a same-origin object URL.
 */
export async function download(path: string, token: string, filename: string): Promise<number> {
  const response = await request(path, { token });
  const blob = await response.blob();
  const url = URL.createObjectURL(blob);
  try {
    const link = document.createElement('a');
    link.href = url;
    link.download = filename;
    document.body.append(link);
    link.click();
    link.remove();
  } finally {
    // The click has started the download; the object URL is only needed until then.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }
  return blob.size;
}

/** Pages followed at most, so a runaway listing cannot hang the page. */
const MAX_PAGES = 50;

/** Every row of a §9 list, following next_cursor (`after`) while has_more. */
export async function getAll<T>(path: string, token: string, params: Record<string, string | number | undefined> = {}): Promise<T[]> {
  const rows: T[] = [];
  let after: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await getJson<{ data: T[]; has_more?: boolean; next_cursor?: string | null }>(withQuery(path, { ...params, after }), { token });
    rows.push(...page.data);
    if (!page.has_more || !page.next_cursor) break;
    after = page.next_cursor;
  }
  return rows;
}

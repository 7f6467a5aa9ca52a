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
    throw new ApiError(response.status, code, message);
  }
  return response;
}

export async function getJson<T>(path: string, options: RequestOptions = {}): Promise<T> {
  return (await (await request(path, options)).json()) as T;
}

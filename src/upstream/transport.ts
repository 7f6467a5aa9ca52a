// HTTP to upstreams over undici keep-alive pools, one per provider, with every timeout set from the
// provider's config (none left to undici's defaults). Requests only ever go to the configured origin.
import { Agent, type Dispatcher } from 'undici';
import type { ProviderConfig } from '../config/types.js';
import type { UpstreamRequest } from '../providers/types.js';
import { signerFor, type Signer } from './auth.js';

export type ResponseHeaders = Record<string, string | string[] | undefined>;

export interface UpstreamResponse {
  readonly status: number;
  readonly headers: ResponseHeaders;
  readonly body: Dispatcher.ResponseData['body'];
}

/** Why an upstream call produced no usable response. */
export type TransportFailure = 'connect' | 'timeout' | 'reset' | 'aborted' | 'too-large';

export class TransportError extends Error {
  constructor(
    readonly reason: TransportFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TransportError';
  }
}

/** Abort reasons: the attempt's total_ms elapsed, or the client went away. */
export class TotalTimeoutReason extends Error {}
export class ClientGoneReason extends Error {}

const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT']);
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

export function toTransportError(error: unknown, signal: AbortSignal | undefined): TransportError {
  if (error instanceof TransportError) return error;
  if (signal?.aborted) {
    return signal.reason instanceof TotalTimeoutReason
      ? new TransportError('timeout', 'the upstream call exceeded its total time limit', { cause: error })
      : new TransportError('aborted', 'the upstream call was aborted', { cause: error });
  }
  const code = (error as { code?: string } | null)?.code ?? '';
  if (TIMEOUT_CODES.has(code)) {
    const what = code === 'UND_ERR_CONNECT_TIMEOUT' ? 'connecting' : code === 'UND_ERR_BODY_TIMEOUT' ? 'waiting for more data' : 'waiting for a response';
    return new TransportError('timeout', `the upstream timed out ${what}`, { cause: error });
  }
  if (CONNECT_CODES.has(code)) return new TransportError('connect', `cannot connect to the upstream (${code})`, { cause: error });
  return new TransportError('reset', 'the upstream connection failed', { cause: error });
}

export class UpstreamTransport {
  private readonly agents = new Map<string, Agent>();
  private readonly signers = new Map<string, Signer>();

  private signerOf(provider: ProviderConfig): Signer {
    let signer = this.signers.get(provider.id);
    if (!signer) this.signers.set(provider.id, (signer = signerFor(provider)));
    return signer;
  }

  private agentFor(provider: ProviderConfig): Agent {
    let agent = this.agents.get(provider.id);
    if (!agent) {
      agent = new Agent({
        connect: { timeout: provider.timeouts.connectMs },
        headersTimeout: provider.timeouts.firstByteMs,
        bodyTimeout: provider.timeouts.idleMs,
        keepAliveTimeout: 10_000,
        keepAliveMaxTimeout: 60_000,
      });
      this.agents.set(provider.id, agent);
    }
    return agent;
  }

  /** Signs the request for its provider and sends it; resolves once the response headers arrive. Throws TransportError. */
  async send(provider: ProviderConfig, request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamResponse> {
    const signed = this.signerOf(provider).sign(request);
    // The credential joins the request's own headers (built for this request, never shared): no copy per call.
    Object.assign(request.headers, signed instanceof Promise ? await signed : signed);
    const { body } = request;
    // Pieces are sent with their total length, as one body is (never chunked).
    if (Array.isArray(body)) request.headers['content-length'] = String(body.reduce((sum: number, piece: Uint8Array) => sum + piece.byteLength, 0));
    try {
      const response = await this.agentFor(provider).request({
        origin: provider.origin,
        path: request.path,
        method: request.method,
        headers: request.headers,
        // undici sends an iterable body piece by piece (lib/core/request.js); its types name only one piece.
        body: body as Uint8Array | string | undefined,
        signal,
        headersTimeout: provider.timeouts.firstByteMs,
        bodyTimeout: provider.timeouts.idleMs,
      });
      return { status: response.statusCode, headers: response.headers, body: response.body };
    } catch (error) {
      throw toTransportError(error, signal);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((agent) => agent.close()));
    this.agents.clear();
  }
}

/** Reads a whole (non-stream) body, refusing more than maxBytes. Throws TransportError. */
export async function readBody(response: UpstreamResponse, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of response.body) {
      total += (chunk as Buffer).length;
      if (total > maxBytes) {
        response.body.destroy();
        throw new TransportError('too-large', `the upstream response exceeded ${maxBytes} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    throw toTransportError(error, signal);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

/** Discards a body we will not read, so the connection can be reused. */
export function discardBody(response: UpstreamResponse): void {
  response.body.resume();
  response.body.on('error', () => {});
}

// Signs each upstream attempt with its provider's credential, after the request is final: translators
// write no credentials. Today every kind authenticates with a static key in one header (its scheme in
// providers/kinds.ts); a signer may also be asynchronous (request signing, OAuth tokens) — the transport
// awaits one that returns a promise.
import type { ProviderConfig } from '../config/types.js';
import { providerKind, type AuthScheme } from '../providers/kinds.js';
import type { UpstreamRequest } from '../providers/types.js';

export type SignedHeaders = Readonly<Record<string, string>>;

export interface Signer {
  sign(request: UpstreamRequest): SignedHeaders | Promise<SignedHeaders>;
}

const NONE: SignedHeaders = Object.freeze({});

/** The one header each scheme puts its key in. */
function keyHeaders(scheme: AuthScheme, key: string): SignedHeaders {
  switch (scheme) {
    case 'bearer':
      return { authorization: `Bearer ${key}` };
    case 'x-api-key':
      return { 'x-api-key': key };
    case 'api-key':
      return { 'api-key': key };
    case 'x-goog-api-key':
      return { 'x-goog-api-key': key };
  }
}

/** The signer of a provider: its key in its kind's header, frozen once; none without a key (a local server). */
export function signerFor(provider: ProviderConfig): Signer {
  const headers = provider.apiKey ? Object.freeze(keyHeaders(providerKind(provider.kind).auth, provider.apiKey)) : NONE;
  return { sign: () => headers };
}

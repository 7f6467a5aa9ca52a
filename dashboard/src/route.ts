// Hash routes: `#/keys`, `#/usage`, ... and a record's own page, `#/keys/<key id>` or
// `#/usage/<request id>` or `#/sessions/<session id>`, so it can be linked. Ids are not secrets (a key's id is not its secret); no
// token, key or filter value ever goes in a URL.
export interface Route {
  /** The page: '' (the overview), 'accounts', 'keys', 'usage', 'sessions', 'providers'. */
  readonly page: string;
  /** The record the page shows, when it shows one. */
  readonly id?: string;
}

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#\/?/, '');
  const slash = path.indexOf('/');
  if (slash < 0) return { page: path };
  const page = path.slice(0, slash);
  const rest = path.slice(slash + 1);
  if (rest === '') return { page };
  try {
    return { page, id: decodeURIComponent(rest) };
  } catch {
    // A malformed escape: the raw text, which then names no record and says so.
    return { page, id: rest };
  }
}

/** An account's own page (the operator's view): its money, its keys, its token. */
export const accountHref = (id: string): string => `#/accounts/${encodeURIComponent(id)}`;
export const keyHref = (id: string): string => `#/keys/${encodeURIComponent(id)}`;
export const requestHref = (requestId: string): string => `#/usage/${encodeURIComponent(requestId)}`;
/** An agent session's own page: its requests and what they cost. */
export const sessionHref = (sessionId: string): string => `#/sessions/${encodeURIComponent(sessionId)}`;

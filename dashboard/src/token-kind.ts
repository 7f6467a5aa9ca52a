// Which view a token signs in to, from its shape alone (no browser API here: the unit tests read it).
export type SessionKind = 'operator' | 'account' | 'keyholder';

/**
 * A Tollgate key looks like `tg-` and 43 base64url characters, an account token like `tga-` and 43;
 * anything else is taken as the admin token.
 */
export function kindOfToken(token: string): SessionKind {
  if (/^tga-[A-Za-z0-9_-]{43}$/.test(token)) return 'account';
  return /^tg-[A-Za-z0-9_-]{43}$/.test(token) ? 'keyholder' : 'operator';
}

// Database URLs in messages and logs: the password never appears.

export function redactDatabaseUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

/** A database URL in a scheme Tollgate does not speak (sqlite: and postgres:// are). */
export class UnsupportedDatabaseError extends Error {}

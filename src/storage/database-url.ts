// Database URLs in messages and logs: the password never appears.

export function redactDatabaseUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

// The process logger: JSON lines on stderr (stdout stays clean for `--json` output). Prompts and
// secrets are never passed to it: request lines carry ids, token counts and money only, and errors
// are the gateway's own or undici's (which carry no request headers). No redaction pass is needed on
// the hot path for that reason; keep it so when adding log fields.
import pino, { type Logger } from 'pino';

export type { Logger };

export function createLogger(level = process.env.TOLLGATE_LOG_LEVEL ?? 'info'): Logger {
  return pino(
    {
      level,
      base: { service: 'tollgate' },
    },
    pino.destination({ dest: 2, sync: false }),
  );
}

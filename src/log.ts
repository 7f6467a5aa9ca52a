// The process logger: JSON lines on stderr (stdout stays clean for `--json` output). Prompts and
// secrets are never logged; `redact` guards the places they could slip in.
import pino, { type Logger } from 'pino';

export type { Logger };

export function createLogger(level = process.env.TOLLGATE_LOG_LEVEL ?? 'info'): Logger {
  return pino(
    {
      level,
      base: { service: 'tollgate' },
      redact: { paths: ['*.authorization', '*.apiKey', '*.api_key', 'headers.authorization'], censor: '[redacted]' },
    },
    pino.destination({ dest: 2, sync: false }),
  );
}

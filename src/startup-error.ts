// Problems that stop the gateway or a command before it can run — the port is taken, the database
// cannot be opened, a setting is invalid. The CLI prints the message as one line and exits 1; each
// message names what failed and why, so the fix is obvious without a stack trace.
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { redactDatabaseUrl } from './storage/database-url.js';

export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

const LISTEN_REASONS: Record<string, string> = {
  EADDRINUSE: 'the port is in use',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'the address is not one of this machine',
  ENOTFOUND: 'unknown host name',
  EAI_AGAIN: 'the host name cannot be resolved',
};

/** "cannot listen on 127.0.0.1:8080: the port is in use". */
export function listenError(host: string, port: number, error: unknown): StartupError {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  const where = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return new StartupError(`cannot listen on ${where}: ${LISTEN_REASONS[code] ?? messageOf(error)}`, { cause: error });
}

/** "cannot open the database sqlite:/x/y.db: /x is not a directory" (passwords of database URLs never appear). */
export function databaseError(url: string, error: unknown): StartupError {
  const reason = (url.startsWith('sqlite:') && sqlitePathProblem(url.slice('sqlite:'.length))) || messageOf(error);
  return new StartupError(`cannot open the database ${redactDatabaseUrl(url)}: ${reason}`, { cause: error });
}

/** What is wrong with a SQLite file path, found on the filesystem (undefined when nothing visible is). */
function sqlitePathProblem(file: string): string | undefined {
  if (file === ':memory:') return undefined;
  if (existsSync(file)) {
    if (statSync(file).isDirectory()) return `${file} is a directory, not a database file`;
    return writable(file) ? undefined : `${file} is not writable`;
  }
  // The nearest existing ancestor: a file where a directory should be, or a directory we cannot write.
  let dir = dirname(file);
  while (!existsSync(dir)) dir = dirname(dir);
  if (!statSync(dir).isDirectory()) return `${dir} is not a directory`;
  return writable(dir) ? undefined : `${dir} is not writable`;
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!;
}

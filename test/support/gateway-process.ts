// Starts the real `tollgate serve` process (the compiled bin, as users run it) on a temp config and
// database, and drives the real CLI against the same files. Used by every end-to-end test.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteFile, type SqliteDatabase } from '../../src/storage/sqlite/driver.js';

// The standard config lives beside the mock (the in-process tests use it too); e2e files import it from here.
export { mockConfig } from './mock-config.js';

export const BIN = fileURLToPath(new URL('../../bin/tollgate.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Added to this process's environment, from which $TOLLGATE_CONFIG is dropped: only the caller decides whether it is set. */
  env?: NodeJS.ProcessEnv;
  /** The working directory (for ./tollgate.yaml and $TOLLGATE_CONFIG cases); this process's by default. */
  cwd?: string;
}

/** Runs `tollgate ...args` to completion. */
export function runCli(args: string[], { env = {}, cwd }: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const inherited = { ...process.env };
    delete inherited.TOLLGATE_CONFIG;
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface CreatedKey {
  id: string;
  key: string;
  name: string;
  /** The key's personal account (keys these tests create have one). */
  account_id: string;
  balance: number;
  allowed_models: string[] | '*';
}

export interface KeyAudit {
  balance: number;
  held: number;
  spent: number;
  derived: { balance: number; held: number; spent: number };
  activeHolds: number;
  captures: number;
  usageRows: number;
}

export interface GatewayProcess {
  /** Base URL ending in /v1. */
  readonly baseURL: string;
  readonly origin: string;
  readonly dir: string;
  readonly configPath: string;
  /** The SQLite file (unused when StartOptions.database named another database). */
  readonly dbPath: string;
  readonly child: ChildProcess;
  /** Everything the server wrote to stderr (its JSON log lines). */
  readonly logs: string[];
  /** Everything the server wrote to stdout (nothing is expected there). */
  readonly stdout: () => string;
  cli(args: string[], env?: NodeJS.ProcessEnv): Promise<CliResult>;
  createKey(opts?: { name?: string; balance?: string | number; models?: string[] }): Promise<CreatedKey>;
  /** Balances in nano-dollars straight from the database (read-only), cached and derived from entries. */
  audit(keyId: string): KeyAudit;
  /** SIGTERM (default) and wait for exit; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Removes the temp directory (after stop). */
  cleanup(): void;
}

export interface StartOptions {
  /** The YAML text of tollgate.yaml; `{{DB}}` is replaced by the database URL. */
  config: string;
  env?: NodeJS.ProcessEnv;
  /** An existing directory (to restart on the same database); a fresh temp dir otherwise. */
  dir?: string;
  /** The database URL for `{{DB}}` (a PostgreSQL one); by default SQLite in the directory (dbPath). */
  database?: string;
  /** More `serve` arguments (e.g. `--workers 2`). */
  args?: string[];
}

export async function startGateway(options: StartOptions): Promise<GatewayProcess> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'tollgate-e2e-'));
  const dbPath = join(dir, 'tollgate.db');
  const configPath = join(dir, 'tollgate.yaml');
  writeFileSync(configPath, options.config.replaceAll('{{DB}}', options.database ?? `sqlite:${dbPath}`));
  const env = { ...process.env, TOLLGATE_LOG_LEVEL: 'info', ...options.env };
  const child = spawn(process.execPath, [BIN, 'serve', '--config', configPath, '--port', '0', ...(options.args ?? [])], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let stdout = '';
  const baseURL = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${logs.join('\n')}`)), 15_000);
    child.stderr!.on('data', (data: Buffer) => {
      buffered += data.toString();
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        logs.push(line);
        try {
          const entry = JSON.parse(line) as { msg?: string; url?: string };
          if (entry.msg === 'tollgate listening' && entry.url) {
            clearTimeout(timer);
            resolve(entry.url);
          }
        } catch {
          // not a log line (e.g. a Node warning)
        }
      }
    });
    child.stdout!.on('data', (data: Buffer) => (stdout += data.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} before listening:\n${logs.join('\n')}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const cli = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) => runCli([...args, '--config', configPath], { env: { ...options.env, ...extraEnv } });
  return {
    baseURL,
    origin: baseURL.replace(/\/v1$/, ''),
    dir,
    configPath,
    dbPath,
    child,
    logs,
    stdout: () => stdout,
    cli,
    async createKey(opts = {}) {
      const args = ['keys', 'create', '--name', opts.name ?? 'test', '--balance', String(opts.balance ?? 10), '--json'];
      if (opts.models) args.push('--models', opts.models.join(','));
      const result = await cli(args);
      if (result.code !== 0) throw new Error(`keys create failed: ${result.stderr}`);
      return JSON.parse(result.stdout) as CreatedKey;
    },
    audit(keyId) {
      return auditDatabase(dbPath, keyId);
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** SIGTERM, then SIGKILL if the gateway has not exited within `graceMs`; then removes its directory. */
export async function stopGateway(gw: GatewayProcess, graceMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), graceMs)));
    if ((await Promise.race([gw.stop('SIGTERM'), timedOut])) === 'timeout') await gw.stop('SIGKILL');
  } finally {
    clearTimeout(timer);
    gw.cleanup();
  }
}

/** Runs `read` on a read-only connection to the SQLite file (WAL lets it run beside the server). */
export function readDatabase<T>(dbPath: string, read: (db: SqliteDatabase) => T): T {
  const db = openSqliteFile(dbPath, { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/**
 * A key's balance, held and spent as the ledger entries add up (one `?`: the key id): the balance is its
 * account's (every entry of the account), held and spent the key's own entries (docs/adr/0047-accounts.md).
 */
export const DERIVED_BALANCES_SQL = `SELECT
  COALESCE(SUM(CASE WHEN e.kind IN ('topup', 'adjust') THEN e.amount WHEN e.kind = 'capture' THEN -e.amount ELSE 0 END), 0) AS balance,
  COALESCE(SUM(CASE WHEN e.key_id = k.id AND e.kind = 'hold' THEN e.amount WHEN e.key_id = k.id AND e.kind = 'release' THEN -e.amount ELSE 0 END), 0) AS held,
  COALESCE(SUM(CASE WHEN e.key_id = k.id AND e.kind = 'capture' THEN e.amount ELSE 0 END), 0) AS spent
  FROM (SELECT id, account_id FROM api_keys WHERE id = ?) k JOIN ledger_entries e ON e.account_id = k.account_id`;

/** A key's cached figures: its account's balance, its own held and spent (one `?`: the key id). */
export const KEY_FIGURES_SQL = 'SELECT a.balance AS balance, k.held AS held, k.spent AS spent FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = ?';

/** The usage row of one request straight from the SQLite file (undefined until it is written). */
export function usageRowOf(dbPath: string, requestId: string): { status: number; cost: number; usage_source: string; error_code: string | null } | undefined {
  return readDatabase(dbPath, (db) => db.prepare('SELECT status, cost, usage_source, error_code FROM usage_records WHERE request_id = ?').get(requestId) as never);
}

/** Reads a key's ledger state from the SQLite file. */
export function auditDatabase(dbPath: string, keyId: string): KeyAudit {
  return readDatabase(dbPath, (db) => {
    const key = db.prepare(KEY_FIGURES_SQL).get(keyId) as
      | { balance: number; held: number; spent: number }
      | undefined;
    if (!key) throw new Error(`no key ${keyId}`);
    const derived = db.prepare(DERIVED_BALANCES_SQL).get(keyId) as { balance: number; held: number; spent: number };
    const count = (sql: string) => (db.prepare(sql).get(keyId) as { n: number }).n;
    return {
      ...key,
      derived,
      activeHolds: count("SELECT COUNT(*) AS n FROM holds WHERE key_id = ? AND status = 'active'"),
      captures: count("SELECT COUNT(*) AS n FROM ledger_entries WHERE key_id = ? AND kind = 'capture'"),
      // The rows that go with money (a capture or a released hold); a refusal's row moves none (usage_source 'none').
      usageRows: count("SELECT COUNT(*) AS n FROM usage_records WHERE key_id = ? AND usage_source <> 'none'"),
    };
  });
}


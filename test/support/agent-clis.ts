// The real coding-agent CLIs for test/e2e/agent-clis.test.ts: where their pinned install is
// (tools/agent-clis, installed apart from the project's own dependencies: `npm ci --prefix tools/agent-clis
// --no-audit --no-fund --strict-allow-scripts`), the loopback-only network namespace they may only ever run
// in, and the facts test/e2e/agents/driver.ts reports from inside it.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KeyAudit } from './gateway-process.js';
import type { UsageRow } from './ledger-check.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const AGENT_CLIS_DIR = join(REPO, 'tools', 'agent-clis');
export const AGENT_CLIS_INSTALL = 'npm ci --prefix tools/agent-clis --no-audit --no-fund --strict-allow-scripts';
const DRIVER = join(REPO, 'test', 'e2e', 'agents', 'driver.ts');

export const CLAUDE_MODEL = 'claude-sonnet-4-5';
/** Claude Code's model for background tasks (ANTHROPIC_DEFAULT_HAIKU_MODEL); a `-p` turn sends it nothing. */
export const CLAUDE_BACKGROUND_MODEL = 'claude-haiku-4-5';
export const CODEX_MODEL = 'gpt-5-codex';
/** The model `codex exec` runs on through the Responses → chat translation (an openai-compatible, chat-only upstream). */
export const CODEX_CHAT_MODEL = 'qwen-coder';
/** Codex on Claude (the Responses → Anthropic translation, ADR 0045): the model, and its upstream model (adaptive thinking). */
export const CODEX_CLAUDE_MODEL = 'claude-codex';
export const CODEX_CLAUDE_UPSTREAM = 'claude-opus-4-7';
/** The model `claude -p` runs on through the Messages → chat translation (ADR 0043), on the same chat-only upstream. */
export const CLAUDE_CHAT_MODEL = 'qwen3-coder';

export interface AgentBinaries {
  /** Claude Code's native binary, from its platform package. */
  claude: string;
  /** Codex's launcher (bin/codex.js, run with this Node), which starts its platform package's binary. */
  codexScript: string;
}

/**
 * The pinned CLIs, or an Error saying what is missing. Claude Code's own `bin/claude.exe` is a stub that
 * its postinstall replaces with the platform binary; the install denies that script (allowScripts), so
 * the binary is taken from the platform package directly, as the package's own cli-wrapper.cjs does.
 */
export function agentBinaries(): AgentBinaries {
  const manifest = join(AGENT_CLIS_DIR, 'package.json');
  const require = createRequire(manifest);
  const pinned = (JSON.parse(readFileSync(manifest, 'utf8')) as { dependencies: Record<string, string> }).dependencies;
  const installed = (name: string): string => {
    let path: string;
    try {
      path = require.resolve(`${name}/package.json`);
    } catch {
      throw new Error(`${name} is not installed in tools/agent-clis (run: ${AGENT_CLIS_INSTALL})`);
    }
    return path;
  };
  for (const [name, version] of Object.entries(pinned)) {
    const found = (JSON.parse(readFileSync(installed(name), 'utf8')) as { version: string }).version;
    if (found !== version) throw new Error(`tools/agent-clis has ${name}@${found}, not the pinned ${version} (run: ${AGENT_CLIS_INSTALL})`);
  }
  const musl = process.platform === 'linux' && (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime === undefined;
  const claudePlatform = `@anthropic-ai/claude-code-${process.platform}-${process.arch}${musl ? '-musl' : ''}`;
  const claude = join(dirname(installed(claudePlatform)), process.platform === 'win32' ? 'claude.exe' : 'claude');
  const codexScript = join(dirname(installed('@openai/codex')), 'bin', 'codex.js');
  for (const file of [claude, codexScript]) if (!existsSync(file)) throw new Error(`missing ${file} (run: ${AGENT_CLIS_INSTALL})`);
  return { claude, codexScript };
}

/** What README.md's "Claude Code and Codex" section tells a reader to set up, as the test runs it. */
export interface ReadmeSetup {
  /** The variables its Claude Code block exports (ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN, the models). */
  claudeEnv: Record<string, string>;
  /** Its Codex `config.toml`, verbatim. */
  codexConfig: string;
}

/** Reads the setup from README.md, so that the test runs what the README says (and fails when they part). */
export function readmeSetup(): ReadmeSetup {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Claude Code and Codex\n');
  if (start < 0) throw new Error('README.md has no "Claude Code and Codex" section');
  const section = readme.slice(start);
  const claudeBlock = /\n### Claude Code\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(section)?.[1];
  const codexConfig = /Codex \(`~\/\.codex\/config\.toml`\)[^\n]*\n\n```toml\n([\s\S]*?)```/.exec(section)?.[1];
  if (!claudeBlock || !codexConfig) throw new Error("README.md's Claude Code sh block or Codex config.toml block is not where the test looks");
  const claudeEnv = Object.fromEntries([...claudeBlock.matchAll(/^export (\w+)=(\S+)/gm)].map((m) => [m[1]!, m[2]!]));
  return { claudeEnv, codexConfig };
}

const firstExisting = (paths: string[]): string | undefined => paths.find((p) => existsSync(p));

/** `unshare` and `ip`, or an Error naming the missing one. */
export function namespaceTools(): { unshare: string; ip: string } {
  if (process.platform !== 'linux') throw new Error('network namespaces need Linux');
  const unshare = firstExisting(['/usr/bin/unshare', '/bin/unshare']);
  const ip = firstExisting(['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip']);
  if (!unshare) throw new Error('unshare (util-linux) is not installed');
  if (!ip) throw new Error('ip (iproute2) is not installed');
  return { unshare, ip };
}

export interface DriverResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the driver in a new network namespace whose only interface is loopback, brought up first: whatever
 * the CLIs try, they can reach nothing but 127.0.0.1. Not root: a user namespace maps this user to root in
 * it (`-r`), which `ip link set lo up` needs. Killed, with its process group, after `timeoutMs`.
 */
export function runDriverIsolated(timeoutMs: number): Promise<DriverResult> {
  const { unshare, ip } = namespaceTools();
  const userns = process.getuid?.() === 0 ? [] : ['--map-root-user'];
  // $0 is Node, $1 ip, $2 the driver: no paths quoted into the shell text.
  const script = '"$1" link set lo up && exec "$0" --import tsx "$2"';
  return new Promise((resolve, reject) => {
    const child = spawn(unshare, [...userns, '--net', '--', 'sh', '-c', script, process.execPath, ip, DRIVER], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

// ---------------------------------------------------------------- what the driver reports

/** One request the mock upstream received. */
export interface UpstreamCall {
  method: string;
  url: string;
  headers: Record<string, string>;
  model: string | null;
  stream: boolean;
  bodyBytes: number;
  /** Whether any Tollgate key made in the run appears in the body. */
  clientKeyInBody: boolean;
  /** The agent session the CLI named in the body: Claude Code's metadata.user_id.session_id, Codex's prompt_cache_key. */
  sessionInBody: string | null;
  /** The usage the mock reported in its answer (null for an error answer). */
  reportedUsage: Record<string, unknown> | null;
  /** The body's max_tokens and thinking budget as the upstream got them (Messages), else null. */
  maxTokens: number | null;
  thinkingBudget: number | null;
  /** A chat request's tool messages' tool_call_ids and its assistant tool_calls' ids (a translated cell's tool loop). */
  toolResultIds: string[];
  toolCallIds: string[];
  /** A Messages request the Responses → Anthropic cell sent (codex-claude), else undefined. */
  anthropic?: {
    thinking: unknown;
    cacheControl: unknown;
    /** The signatures of the thinking blocks in its turns (restored from Codex's echoed reasoning items). */
    thinkingSignatures: string[];
    toolUseIds: string[];
    toolResultIds: string[];
  };
  /** A chat request's tool messages: the call id each answers and its text (what the tool printed). */
  toolResults?: Array<{ id: string; text: string }>;
}

export interface AgentRun {
  /**
   * `codex-chat`: codex exec on a chat-only model (the Responses → chat translation); `codex-claude`: on Claude
   * (Responses → Anthropic); `claude-chat`: claude -p on a chat-only model (Messages → chat).
   */
  agent: 'claude' | 'codex' | 'codex-chat' | 'codex-claude' | 'claude-chat';
  /** The key's balance in USD. */
  balance: number;
  command: string[];
  /** Claude Code: the README's variables as set (the key elided); Codex: the config.toml written. */
  setup: string;
  code: number | null;
  signal: string | null;
  timedOut: boolean;
  ms: number;
  stdout: string;
  stderr: string;
  key: { id: string; secret: string };
  /** The key's ledger before and after the run (nano-dollars). */
  before: KeyAudit;
  after: KeyAudit;
  /** Every ledger entry kind of the key, in order. */
  ledgerKinds: string[];
  /** `tollgate usage --json --key ID`: every usage row of the key. */
  rows: UsageRow[];
  /** What the gateway logged of each request during the run. */
  gateway: Array<{ method: string; path: string; status: number; error: string | null; userAgent: string | null }>;
  /** What the mock upstream received during the run. */
  upstream: UpstreamCall[];
}

export interface AgentFacts {
  /** The network interfaces the driver saw: only lo. */
  interfaces: string[];
  /** The gateway's warning and error log lines. */
  gatewayLogs: string[];
  runs: AgentRun[];
}

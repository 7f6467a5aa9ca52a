// The command line of `npm run bench`: its usage text and the parsed, checked options.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const USAGE = `usage: npm run bench -- [options]
  --duration S        measured window per scenario, seconds (default 10)
  --requests N        measure a fixed number of requests instead of a timed window
  --warmup S          unmeasured warm-up per scenario, seconds (default 2) ...
  --warmup-requests N ... and at least N requests (default 2000; capped at 5 × --warmup seconds)
  --connections N     concurrent keep-alive connections (default 50)
  --runs N            repeat every scenario N times (interleaved) and report medians (default 1)
  --rate R            open-loop scenarios: non-streaming chat at R requests/s (default 500; 0: none)
  --embeddings        add the embeddings scenarios
  --agents            add the coding-agent scenarios: the recorded Claude Code turn (POST /v1/messages, streamed) and
                      Codex turn (POST /v1/responses, streamed), direct and via Tollgate (~1 min more; implied by
                      --only naming one of them)
  --idempotency       add Tollgate scenarios where every request carries its own Idempotency-Key
  --accounts          add chat through 10 keys of one hot account (SQLite; with --postgres also on PostgreSQL):
                      every request admits against its key's caps and the one account row (implied by --only
                      naming tollgate-account-chat or pg-account-chat)
  --postgres URL      also run the ledger on PostgreSQL at URL (a fresh schema, dropped afterwards): one gateway on
                      the hot key, one on 100 keys, and 3 gateways on one database, beside the SQLite figures
  --limits            give the benchmark key rpm, tpm, max_concurrent and a daily budget (set high: never refusing,
                      always counting), to measure what enforcing them costs
  --redis URL         the gateway's \`redis:\` (rate-limit counters in Redis; with --limits)
  --portkey DIR       add Portkey scenarios, from an installed copy of /work/shared/peers/portkey (or env PORTKEY_DIR)
  --only IDS          comma-separated scenario ids to run (e.g. tollgate-chat)
  --cpu-prof DIR      run the gateway under --cpu-prof, writing the .cpuprofile into DIR
  --gateway-flags F   extra node flags for the gateway process, e.g. --gateway-flags="--max-semi-space-size=4" (space-separated; note the =)
  --gc                the gateway's garbage collections in each window (V8's --trace-gc-nvp): bytes promoted to the old
                      generation per request, scavenges and full collections per 10,000 requests
  --no-save           do not write bench/results/<timestamp>.json`;

/** The ids of the --agents scenarios (direct-messages-stream, tollgate-responses-stream, ...). */
export const AGENT_SCENARIO = /-(?:messages|responses)-stream$/;

export function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '10' },
      requests: { type: 'string' },
      warmup: { type: 'string', default: '2' },
      'warmup-requests': { type: 'string', default: '2000' },
      connections: { type: 'string', default: '50' },
      runs: { type: 'string', default: '1' },
      rate: { type: 'string', default: '500' },
      embeddings: { type: 'boolean', default: false },
      agents: { type: 'boolean', default: false },
      idempotency: { type: 'boolean', default: false },
      accounts: { type: 'boolean', default: false },
      postgres: { type: 'string' },
      limits: { type: 'boolean', default: false },
      redis: { type: 'string' },
      portkey: { type: 'string', default: process.env.PORTKEY_DIR },
      only: { type: 'string' },
      'cpu-prof': { type: 'string' },
      'gateway-flags': { type: 'string', default: '' },
      gc: { type: 'boolean', default: false },
      'no-save': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const only = values.only ? values.only.split(',').map((s) => s.trim()) : undefined;
  return {
    duration: numberOption('duration', values.duration),
    requests: values.requests === undefined ? undefined : numberOption('requests', values.requests),
    warmup: numberOption('warmup', values.warmup, 0),
    warmupRequests: numberOption('warmup-requests', values['warmup-requests'], 0),
    connections: numberOption('connections', values.connections),
    runs: numberOption('runs', values.runs),
    rate: numberOption('rate', values.rate, 0),
    embeddings: values.embeddings,
    agents: values.agents || (only ?? []).some((id) => AGENT_SCENARIO.test(id)),
    idempotency: values.idempotency,
    accounts: values.accounts || (only ?? []).some((id) => id.endsWith('account-chat')),
    postgresUrl: values.postgres,
    limits: values.limits,
    redisUrl: values.redis,
    portkeyDir: values.portkey ? resolve(values.portkey) : undefined,
    only,
    cpuProfDir: values['cpu-prof'] ? resolve(values['cpu-prof']) : undefined,
    gatewayFlags: values['gateway-flags'].split(' ').filter(Boolean),
    gc: values.gc,
    save: !values['no-save'],
  };
}

function numberOption(name, text, min = Number.MIN_VALUE) {
  const n = Number(text);
  if (!Number.isFinite(n) || n < min) {
    console.error(`--${name} must be a number ≥ ${min === Number.MIN_VALUE ? '>0' : min}, got "${text}"\n${USAGE}`);
    process.exit(2);
  }
  return n;
}

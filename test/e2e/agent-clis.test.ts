// The real coding agents through the gateway (issue 24): `claude -p` (@anthropic-ai/claude-code, pinned in
// tools/agent-clis) over POST /v1/messages and `codex exec` (@openai/codex) over POST /v1/responses, each
// set up as the README's "Claude Code and Codex" says. Each completes a turn and its key is charged exactly
// the price of the usage the upstream reported; with a $0.001 key each exits non-zero with a message about
// the balance, and nothing is charged. Codex also runs on a chat-only model (the Responses → chat
// translation, ADR 0044): a tool loop — the upstream calls a tool, Codex runs it and sends its output, the
// upstream answers in text — charged exactly the usage the chat upstream reported; Codex on Claude (the
// Responses → Anthropic translation, ADR 0045): the same loop with thinking, its envelope echoed by Codex
// and restored byte-for-byte, charged exactly the usage Anthropic reported. Claude Code the same on a
// chat-only model (the Messages → chat translation, ADR 0043), running its Bash tool.
//
// The CLIs only ever run inside a loopback-only network namespace: this file starts
// test/e2e/agents/driver.ts under `unshare --net` (lo brought up first), which starts the mock upstreams,
// a gateway and the CLIs there and reports what happened as JSON; the assertions are here. Without the
// CLIs' install or `unshare`, the tests are skipped with the reason — except under CI=true, where that fails.
import { before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { agentBinaries, AGENT_CLIS_INSTALL, CLAUDE_CHAT_MODEL, CLAUDE_MODEL, CODEX_CHAT_MODEL, CODEX_CLAUDE_MODEL, CODEX_CLAUDE_UPSTREAM, CODEX_MODEL, namespaceTools, runDriverIsolated, type AgentFacts, type AgentRun } from '../support/agent-clis.js';
import { ANTHROPIC_MOCK_KEY, ANTHROPIC_TEXT, ANTHROPIC_THINKING, signatureFor } from '../support/mock-anthropic.js';
import { claudeCostNano } from '../support/messages-config.js';
import { RESPONSES_MOCK_KEY, RESPONSES_TEXT } from '../support/mock-responses.js';
import { toolResultText } from '../support/mock-upstream.js';
import { chatCostNano, usdToNano } from '../support/money.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- reported usage is the upstream's JSON
type Json = any;

/** Why the tests cannot run here, or undefined; under CI=true a reason is an error instead. */
function skipReason(): string | undefined {
  let reason: string | undefined;
  try {
    const { unshare } = namespaceTools();
    agentBinaries();
    const probe = spawnSync(unshare, [...(process.getuid?.() === 0 ? [] : ['--map-root-user']), '--net', 'true'], { encoding: 'utf8' });
    if (probe.status !== 0) reason = `unshare --net is not permitted here: ${(probe.stderr || probe.error?.message || '').trim()}`;
  } catch (error) {
    reason = (error as Error).message;
  }
  if (reason && process.env.CI === 'true') throw new Error(`${reason} (CI=true: the agent CLI tests must run; .ci/run installs them with ${AGENT_CLIS_INSTALL})`);
  return reason;
}

interface AgentSpec {
  name: AgentRun['agent'];
  endpoint: 'messages' | 'responses';
  path: string;
  model: string;
  providerKey: { header: string; value: string };
  text: string;
  /** The exact price of one answer's reported usage, in nano-dollars, from the configured prices. */
  price(usage: Json): number;
  /** The status the gateway refuses a short balance with on this API, and what the CLI then shows. */
  refusal: { status: number; shows: RegExp[] };
}

const AGENTS: AgentSpec[] = [
  {
    name: 'claude',
    endpoint: 'messages',
    path: '/v1/messages',
    model: CLAUDE_MODEL,
    providerKey: { header: 'x-api-key', value: ANTHROPIC_MOCK_KEY },
    text: ANTHROPIC_TEXT,
    price: (usage) => claudeCostNano(usage),
    // Claude Code prints the gateway's own message: "API Error: 402 Insufficient balance: this request
    // needs a hold of $… but the key has $0.001 available. Top up the key."
    refusal: { status: 402, shows: [/402 Insufficient balance/, /the key has \$0\.001 available/] },
  },
  {
    name: 'codex',
    endpoint: 'responses',
    path: '/v1/responses',
    model: CODEX_MODEL,
    providerKey: { header: 'authorization', value: `Bearer ${RESPONSES_MOCK_KEY}` },
    text: RESPONSES_TEXT,
    // OpenAI's convention: input_tokens includes the cached ones.
    price: (usage) => chatCostNano(usage.input_tokens, usage.output_tokens, usage.input_tokens_details?.cached_tokens ?? 0),
    // Codex shows its own words for OpenAI's insufficient_quota (a 429 it does not retry), not the body's.
    refusal: { status: 429, shows: [/Quota exceeded/, /billing/] },
  },
];

/** The whole driver run (both agents, both keys) is bounded; each CLI run inside it is bounded at 120 s. */
const DRIVER_TIMEOUT_MS = 300_000;

function show(t: TestContext, run: AgentRun): void {
  t.diagnostic(`setup: ${run.setup.trim().replace(/\n+/g, ' | ')}`);
  t.diagnostic(`${run.command.map((a) => a.replace(/^.*node_modules\//, '')).join(' ')} → exit ${run.code}${run.signal ? ` (${run.signal})` : ''} in ${run.ms} ms`);
  for (const [name, text] of [['stdout', run.stdout], ['stderr', run.stderr]] as const) if (text.trim()) t.diagnostic(`${name}: ${text.trim().slice(-2000)}`);
}

/**
 * Each usage row of `run` costs exactly one of `expected` (the price of the usage its upstream reported,
 * in nano-dollars), and the ledger moved by exactly their sum: spent up, balance down, nothing held,
 * cached balances equal to those derived from the entries. Returns the sum.
 */
function assertChargedExactly(run: AgentRun, expected: number[]): number {
  const charged = run.rows.map((row) => usdToNano(row.cost));
  assert.deepEqual([...charged].sort((a, b) => a - b), [...expected].sort((a, b) => a - b), 'each row costs the price of the usage its upstream reported');
  const total = expected.reduce((a, b) => a + b, 0);
  assert.ok(total > 0);
  assert.equal(run.after.spent - run.before.spent, total, 'spent grew by exactly the reported usage');
  assert.equal(run.before.balance - run.after.balance, total, 'the balance fell by exactly the reported usage');
  assert.deepEqual([run.after.held, run.after.activeHolds], [0, 0], 'no hold left');
  assert.deepEqual({ balance: run.after.balance, held: run.after.held, spent: run.after.spent }, run.after.derived, 'cached balances == derived from entries');
  return total;
}

const reason = skipReason();

describe('the real claude -p and codex exec through the gateway', { skip: reason }, () => {
  let facts: AgentFacts;
  const runOf = (agent: string, balance: number): AgentRun => {
    const run = facts.runs.find((r) => r.agent === agent && r.balance === balance);
    assert.ok(run, `the driver ran ${agent} with a $${balance} key`);
    return run;
  };

  before(async () => {
    const result = await runDriverIsolated(DRIVER_TIMEOUT_MS);
    assert.equal(result.code, 0, `the driver finished (signal ${result.signal}):\n${result.stderr.slice(-4000)}`);
    facts = JSON.parse(result.stdout) as AgentFacts;
  });

  test('the CLIs ran in a network namespace whose only interface is loopback, and the gateway logged no warning', () => {
    assert.deepEqual(facts.interfaces, ['lo']);
    assert.deepEqual(facts.gatewayLogs, []);
  });

  for (const agent of AGENTS) {
    test(`${agent.name} completes a turn through /v1/${agent.endpoint} and is charged exactly what the upstream reported`, (t) => {
      const run = runOf(agent.name, 5);
      show(t, run);
      assert.equal(run.timedOut, false, 'the CLI finished before its timeout');
      assert.equal(run.code, 0, 'the CLI exits 0');
      assert.ok(run.stdout.includes(agent.text), `the CLI printed the upstream's answer: ${run.stdout}`);

      // What the CLI asked of the gateway (Claude Code's HEAD / first), every answer a 200.
      assert.deepEqual(run.gateway.filter((r) => r.status !== 200), [], 'the gateway answered every request of the CLI 200');
      assert.equal(run.gateway.filter((r) => r.method === 'POST' && r.path === agent.path).length, run.upstream.length, 'each model request went upstream once');

      // What reached the upstream: model requests only, each with the gateway's provider key and no Tollgate key.
      assert.ok(run.upstream.length >= 1, 'the upstream answered at least one request');
      for (const call of run.upstream) {
        assert.deepEqual([call.method, call.url.split('?')[0], call.model], ['POST', agent.path, agent.model]);
        assert.equal(call.headers[agent.providerKey.header], agent.providerKey.value, "the upstream got the gateway's provider key");
        const leaked = Object.entries(call.headers).filter(([, value]) => value.includes(run.key.secret) || /\btg-/.test(value));
        assert.deepEqual(leaked, [], 'no client credential in any header the upstream got');
        assert.equal(call.clientKeyInBody, false, 'no client credential in the body the upstream got');
        assert.ok(call.reportedUsage, 'the upstream reported usage');
        assert.ok(call.sessionInBody, 'the CLI named its session in the body');
      }

      // Its usage rows: one per model request, this API, 200, the session the CLI named, priced from the reported usage.
      assert.equal(run.rows.length, run.upstream.length, 'one usage row per upstream request');
      for (const row of run.rows) {
        assert.deepEqual([row.endpoint, row.status, row.usage_source, row.model], [agent.endpoint, 200, 'upstream', agent.model]);
      }
      assert.deepEqual(new Set(run.rows.map((r) => r.session_id)), new Set(run.upstream.map((c) => c.sessionInBody)), "the rows carry the CLI's session id");
      const expected = run.upstream.map((call) => agent.price(call.reportedUsage));
      const total = assertChargedExactly(run, expected);
      assert.equal(run.after.captures, run.upstream.length);
      t.diagnostic(`charged ${total} nano-dollars for ${run.upstream.length} request(s)`);
    });

    if (agent.name === 'claude') {
      test('claude with $0.25 (short of its ~$0.58 hold) and the README\'s clamp header completes a turn, its max_tokens and thinking budget lowered', (t) => {
        const run = runOf('claude', 0.25);
        show(t, run);
        assert.equal(run.code, 0, 'the CLI exits 0');
        assert.ok(run.stdout.includes(agent.text), `the CLI printed the upstream's answer: ${run.stdout}`);
        assert.ok(run.upstream.length >= 1, 'the turn reached the upstream');
        for (const call of run.upstream) {
          assert.ok(call.maxTokens !== null && call.maxTokens < 32_000, `max_tokens lowered from 32000 (${call.maxTokens})`);
          if (call.thinkingBudget !== null) assert.ok(call.thinkingBudget < call.maxTokens, 'the thinking budget fits inside the new max_tokens');
        }
        assertChargedExactly(run, run.upstream.map((call) => agent.price(call.reportedUsage)));
        assert.ok(run.after.balance >= 0);
      });
    }

    if (agent.name === 'claude') {
      test('claude -p on a chat-only model (Messages → chat): the Bash call runs, its output goes back under the call id, the answer is printed; charged exactly the chat usage', (t) => {
        const run = runOf('claude-chat', 5);
        show(t, run);
        assert.equal(run.timedOut, false, 'the CLI finished before its timeout');
        assert.equal(run.code, 0, 'the CLI exits 0');
        // The chat model's final answer quotes the tool result it got: Claude Code printed it.
        assert.ok(run.stdout.includes(toolResultText('').trim()), `the CLI printed the answer to its tool result: ${run.stdout}`);
        assert.ok(run.stdout.includes('tollgate-tool-ran'), 'the answer carries what the tool printed');
        assert.deepEqual(run.gateway.filter((r) => r.status !== 200), [], 'the gateway answered every request of the CLI 200');
        assert.equal(run.gateway.filter((r) => r.method === 'POST' && r.path === '/v1/messages').length, run.upstream.length, 'each model request went upstream once');
        assert.ok(run.upstream.length >= 2, 'a tool loop: at least two model requests');
        for (const call of run.upstream) {
          assert.deepEqual([call.method, call.url.split('?')[0], call.model], ['POST', '/v1/chat/completions', 'Qwen/Qwen3-Coder-480B-A35B-Instruct']);
          const leaked = Object.entries(call.headers).filter(([, value]) => value.includes(run.key.secret) || /\btg-/.test(value));
          assert.deepEqual(leaked, [], 'no client credential in any header the upstream got');
          assert.equal(call.clientKeyInBody, false);
          assert.ok(call.reportedUsage, 'the upstream reported usage');
        }
        // The request after the Bash call carries it and Claude Code's tool result, mapped back to the id the upstream issued.
        const answered = run.upstream.filter((call) => (call.toolResults ?? []).length > 0);
        assert.ok(answered.length >= 1, 'a request carried the tool result');
        const loop = answered[0]!;
        assert.deepEqual(loop.toolCallIds, ['call_claude_bash_1']);
        assert.deepEqual(loop.toolResults!.map((r) => r.id), ['call_claude_bash_1']);
        // The command (printf 'tollgate-tool-%s\n' ran) does not contain its output: the marker is there only if Bash ran it.
        assert.equal(loop.toolResults![0]!.text.trim(), 'tollgate-tool-ran', 'the tool result is what Bash printed');
        t.diagnostic(`tool result sent back: ${JSON.stringify(loop.toolResults)}`);
        assert.deepEqual(run.upstream[0]!.toolResultIds, [], 'the first request has no tool result yet');

        // Rows: one per model request, 200, the messages API, the chat model, the CLI's session.
        assert.equal(run.rows.length, run.upstream.length, 'one usage row per upstream request');
        for (const row of run.rows) assert.deepEqual([row.endpoint, row.status, row.usage_source, row.model], ['messages', 200, 'upstream', CLAUDE_CHAT_MODEL]);
        const sessions = new Set(run.rows.map((r) => r.session_id));
        assert.equal(sessions.size, 1, 'every row of the run names the same session');
        assert.ok([...sessions][0], "the rows carry Claude Code's session id");
        // Priced here from the chat usage the mock reported (OpenAI's convention: prompt_tokens includes the cached).
        const expected = run.upstream.map((call) => {
          const usage = call.reportedUsage as Json;
          return chatCostNano(usage.prompt_tokens, usage.completion_tokens, usage.prompt_tokens_details?.cached_tokens ?? 0);
        });
        const total = assertChargedExactly(run, expected);
        const tokens = run.upstream.reduce((sum, call) => ({ input: sum.input + (call.reportedUsage as Json).prompt_tokens, output: sum.output + (call.reportedUsage as Json).completion_tokens }), { input: 0, output: 0 });
        t.diagnostic(`claude -p on a chat-only model: ${run.upstream.length} turns (model requests), ${tokens.input} input + ${tokens.output} output tokens, ${total} nano-dollars ($${total / 1e9}), session ${[...sessions][0]}`);
      });
    }

    if (agent.name === 'codex') {
      test('codex exec on a chat-only model (Responses → chat): the tool call runs, its output goes back, the answer is printed; charged exactly the chat usage', (t) => {
        const run = runOf('codex-chat', 5);
        show(t, run);
        assert.equal(run.timedOut, false, 'the CLI finished before its timeout');
        assert.equal(run.code, 0, 'the CLI exits 0');
        assert.ok(run.stdout.includes(toolResultText('').trim()), `the CLI printed the answer to its tool result: ${run.stdout}`);
        // The chat model asked for `echo tollgate-tool-ran`: Codex ran it, and its output came back in the answer.
        assert.ok(run.stdout.includes('tollgate-tool-ran'), 'the tool ran and its output went back upstream');
        assert.deepEqual(run.gateway.filter((r) => r.status !== 200), [], 'the gateway answered every request of the CLI 200');
        assert.ok(run.upstream.length >= 2, 'a tool loop: at least two model requests');
        for (const call of run.upstream) {
          assert.deepEqual([call.method, call.url.split('?')[0], call.model], ['POST', '/v1/chat/completions', 'Qwen/Qwen3-Coder-30B-A3B-Instruct']);
          const leaked = Object.entries(call.headers).filter(([, value]) => value.includes(run.key.secret) || /\btg-/.test(value));
          assert.deepEqual(leaked, [], 'no client credential in any header the upstream got');
          assert.equal(call.clientKeyInBody, false);
          assert.ok(call.reportedUsage, 'the upstream reported usage');
        }
        // The second request carries the call the first answered with and its output, under the same id.
        const [first, second] = run.upstream;
        assert.deepEqual(first!.toolResultIds, []);
        assert.deepEqual(second!.toolCallIds, ['call_codex_exec_1']);
        assert.deepEqual(second!.toolResultIds, ['call_codex_exec_1']);
        for (const row of run.rows) assert.deepEqual([row.endpoint, row.status, row.usage_source, row.model], ['responses', 200, 'upstream', CODEX_CHAT_MODEL]);
        const expected = run.upstream.map((call) => {
          const usage = call.reportedUsage as Json;
          return chatCostNano(usage.prompt_tokens, usage.completion_tokens, usage.prompt_tokens_details?.cached_tokens ?? 0);
        });
        const total = assertChargedExactly(run, expected);
        t.diagnostic(`codex on a chat-only model: ${run.upstream.length} requests, ${total} nano-dollars`);
      });

      test('codex exec on Claude (Responses → Anthropic): a tool loop with thinking, its envelope echoed and restored, cached; charged exactly the Anthropic usage', (t) => {
        const run = runOf('codex-claude', 5);
        show(t, run);
        assert.equal(run.timedOut, false, 'the CLI finished before its timeout');
        assert.equal(run.code, 0, 'the CLI exits 0');
        assert.ok(run.stdout.includes(toolResultText('').trim()), `the CLI printed the answer to its tool result: ${run.stdout}`);
        assert.ok(run.stdout.includes('tollgate-tool-ran'), 'the tool ran and its output went back upstream');
        assert.deepEqual(run.gateway.filter((r) => r.status !== 200), [], 'the gateway answered every request of the CLI 200');
        assert.ok(run.upstream.length >= 2, 'a tool loop: at least two model requests');
        for (const call of run.upstream) {
          assert.deepEqual([call.method, call.url.split('?')[0], call.model], ['POST', '/v1/messages', CODEX_CLAUDE_UPSTREAM]);
          assert.equal(call.headers['x-api-key'], ANTHROPIC_MOCK_KEY);
          const leaked = Object.entries(call.headers).filter(([name, value]) => name !== 'x-api-key' && (value.includes(run.key.secret) || /\btg-/.test(value)));
          assert.deepEqual(leaked, [], 'no client credential in any header the upstream got');
          assert.equal(call.clientKeyInBody, false);
          assert.ok(call.reportedUsage, 'the upstream reported usage');
          // Codex's prompt_cache_key (its session) → a top-level cache_control; its reasoning effort → adaptive thinking.
          assert.deepEqual(call.anthropic?.cacheControl, { type: 'ephemeral' });
          assert.deepEqual(call.anthropic?.thinking, { type: 'adaptive', display: 'summarized' });
        }
        const [first, second] = run.upstream;
        assert.deepEqual(first!.anthropic!.toolResultIds, []);
        assert.deepEqual(second!.anthropic!.toolUseIds, ['toolu_codex_exec_1']);
        assert.deepEqual(second!.anthropic!.toolResultIds, ['toolu_codex_exec_1']);
        // Codex echoed the reasoning item; the gateway restored Claude's thinking with its signature, byte for byte (the mock checked it).
        assert.deepEqual(second!.anthropic!.thinkingSignatures, [signatureFor(ANTHROPIC_THINKING)]);
        for (const row of run.rows) assert.deepEqual([row.endpoint, row.status, row.usage_source, row.model], ['responses', 200, 'upstream', CODEX_CLAUDE_MODEL]);
        const expected = run.upstream.map((call) => claudeCostNano(call.reportedUsage as Json));
        const total = assertChargedExactly(run, expected);
        t.diagnostic(`codex on Claude: ${run.upstream.length} requests, ${total} nano-dollars`);
      });
    }

    test(`${agent.name} with a $0.001 key exits non-zero with a message about the balance, and nothing is charged`, (t) => {
      const run = runOf(agent.name, 0.001);
      show(t, run);
      assert.equal(run.timedOut, false, 'the CLI gave up before its timeout');
      assert.ok(run.code !== null && run.code !== 0, `the CLI exits non-zero (${run.code})`);
      const output = `${run.stdout}\n${run.stderr}`;
      for (const pattern of agent.refusal.shows) assert.match(output, pattern);

      const refused = run.gateway.filter((r) => r.method === 'POST');
      assert.ok(refused.length >= 1, 'the CLI asked for a turn');
      for (const r of refused) assert.deepEqual([r.path, r.status, r.error], [agent.path, agent.refusal.status, 'insufficient_balance']);
      assert.deepEqual(run.upstream, [], 'no model request reached the upstream');
      for (const row of run.rows) {
        assert.deepEqual([row.endpoint, row.status, row.usage_source, usdToNano(row.cost)], [agent.endpoint, agent.refusal.status, 'none', 0]);
        assert.ok(row.session_id, "the refusal's row carries the CLI's session id");
      }
      assert.deepEqual(run.ledgerKinds, ['topup'], 'no hold, capture or release: only the top-up');
      assert.deepEqual([run.after.balance, run.after.held, run.after.spent, run.after.activeHolds], [run.before.balance, 0, 0, 0], 'the balance unchanged, nothing held');
      assert.deepEqual({ balance: run.after.balance, held: run.after.held, spent: run.after.spent }, run.after.derived);
    });
  }
});

// The agent session a request names (http/session-id.ts): which header wins, what is kept, and that the
// usage row of a request that moved no money (a dry run's quote) names its session too, as a billed one
// does (test/e2e/agent-sessions.test.ts follows sessions through the admin API, CLI and CSV).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SESSION_ID, sessionIdOf } from '../../../src/http/session-id.js';
import { startInProcess, type InProcessGateway } from '../../support/in-process.js';

/** The key's usage rows once there are `count` of them (a row of a request that moved no money is written after its answer). */
async function rowsOf(gw: InProcessGateway, keyId: string, count: number) {
  for (let tries = 0; ; tries++) {
    const rows = await gw.store.usage.list({ keyId, limit: 10 });
    if (rows.length >= count || tries === 200) return rows;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the session a request names', () => {
  test("Claude Code's header wins over Codex's; Codex's hyphenated header over its older underscored one", () => {
    assert.equal(sessionIdOf({ 'x-claude-code-session-id': 'cc', 'session-id': 'cx', session_id: 'old' }), 'cc');
    assert.equal(sessionIdOf({ 'session-id': 'cx', session_id: 'old' }), 'cx');
    assert.equal(sessionIdOf({ session_id: 'old' }), 'old');
  });

  test('no header, or only blanks, is no session; a value is trimmed and cut to 200 characters', () => {
    assert.equal(sessionIdOf({}), null);
    assert.equal(sessionIdOf({ 'x-claude-code-session-id': '   ', 'session-id': '' }), null);
    assert.equal(sessionIdOf({ 'x-claude-code-session-id': '  abc  ' }), 'abc');
    assert.equal(sessionIdOf({ 'session-id': 'x'.repeat(1000) }), 'x'.repeat(MAX_SESSION_ID));
    assert.equal(MAX_SESSION_ID, 200);
  });

  describe('in the usage rows (in process)', () => {
    let gw: InProcessGateway;
    let key: string;
    let keyId: string;
    before(async () => {
      gw = await startInProcess();
      ({ secret: key, key: { id: keyId } } = await gw.issueKey());
    });
    after(() => gw.close());

    test('a billed call and a quote that moved no money both name their session; a call without one names none', async () => {
      const body = { model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] };
      const billed = await gw.call('POST', '/chat/completions', { key, body, headers: { 'x-claude-code-session-id': 'sess-1' } });
      const quoted = await gw.call('POST', '/chat/completions', { key, body, headers: { 'session-id': 'sess-2', 'x-tollgate-dry-run': '1' } });
      const plain = await gw.call('POST', '/chat/completions', { key, body });
      for (const res of [billed, quoted, plain]) assert.equal(res.statusCode, 200, res.body);
      const ids = [billed, quoted, plain].map((res) => String(res.headers['x-request-id']));
      const rows = await rowsOf(gw, keyId, 3);
      const byId = new Map(rows.map((row) => [row.requestId, row]));
      assert.deepEqual(
        ids.map((id) => [byId.get(id)?.sessionId, byId.get(id)?.endpoint, byId.get(id)?.usageSource]),
        [
          ['sess-1', 'chat', 'upstream'],
          ['sess-2', 'chat', 'none'],
          [null, 'chat', 'upstream'],
        ],
      );
    });
  });
});

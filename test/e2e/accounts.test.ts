// Accounts end to end (docs/adr/0047-accounts.md), through the operator's two faces: the real CLI
// (`tollgate accounts ...`, `keys create --account`) and the admin API (/admin/v1/accounts), on a real
// gateway with the mock upstream. One account, two keys (one capped): both draw on the one balance; a
// key past its credit limit is 402 credit_limit_reached, a suspended account 402 account_suspended, an
// account budget 402 budget_exceeded — none of them charges anything or calls upstream; the account's
// ledger and its usage agree with its spent; Idempotency-Key replays credit once; bad input changes nothing.
//
// On SQLite and PostgreSQL. On PostgreSQL a gateway may use a key record (with its account's budget) it read
// up to a second ago when the change came from another process (the CLI): docs/adr/0027-recent-key-rows.md.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { admin, adminDialects, adminOk, assertError, startAdminE2E, walkList, type AdminE2E } from '../support/admin.js';
import { assertChatOk, assertErrorResponse, call, parseJsonOutput, postChat, type Json } from '../support/e2e.js';
import { usdToNano } from '../support/money.js';

const CHAT = { model: 'gpt-test', messages: [{ role: 'user', content: 'hello' }], max_tokens: 20 };
const nano = (usd: number | string): number => usdToNano(usd);
const usdOf = (n: number): string => (n / 1e9).toFixed(9);

for (const dialect of await adminDialects()) {
  describe(`accounts (${dialect.name})`, { skip: dialect.skip }, () => {
    let e: AdminE2E;
    before(async () => {
      e = await startAdminE2E(dialect.name);
    });
    after(async () => {
      await e?.close();
    });

    const account = (id: string): Promise<Json> => adminOk(e.gw, 'GET', `/accounts/${id}`);
    /** A budget set by another process (the CLI) reaches a PostgreSQL gateway's holds within a second (ADR 0027). */
    const afterRecentKeyRows = () => (dialect.name === 'postgres' ? sleep(1_100) : Promise.resolve());
    const key = (id: string): Promise<Json> => adminOk(e.gw, 'GET', `/keys/${id}`);
    const upstreamCalls = (): number => e.mock.requests.length;

    /** A refused chat call: the status and code, and no upstream call, no charge, no hold left. */
    async function refused(secret: string, status: number, code: string, accountId: string): Promise<Json> {
      const [calls, before] = [upstreamCalls(), await account(accountId)];
      const error = assertErrorResponse(await postChat(e.gw, secret, CHAT), status, code);
      assert.equal(upstreamCalls(), calls, `${code}: no upstream call`);
      const after = await account(accountId);
      assert.deepEqual([after.balance, after.held, after.spent], [before.balance, before.held, before.spent], `${code}: nothing charged or held`);
      return error;
    }

    test('CLI: an account, two keys in it (one capped) drawing on its one balance; caps, suspension and budget refuse without a charge', async () => {
      const created = parseJsonOutput(await e.gw.cli(['accounts', 'create', '--name', 'team-cli', '--balance', '1', '--json']), 'accounts create');
      assert.equal(created.object, 'account');
      assert.equal(created.personal, false);
      assert.equal(created.balance, 1);
      assert.deepEqual(created, await account(created.id), 'the CLI prints the object the admin API answers');

      const open = await e.gw.cli(['keys', 'create', '--name', 'dev', '--account', created.id]);
      assert.equal(open.code, 0, open.stderr);
      const openSecret = open.stdout.split('\n')[0]!;
      assert.match(open.stdout, new RegExp(`in account ${created.id}`));
      const capped = parseJsonOutput(await e.gw.cli(['keys', 'create', '--name', 'ci', '--account', created.id, '--credit-limit', '0.5', '--json']), 'keys create --credit-limit');
      assert.equal(capped.account_id, created.id);
      assert.equal(capped.credit_limit, 0.5);
      assert.equal(capped.credit_left, 0.5);
      assert.equal(capped.balance, 1, "a key shows its account's balance");

      // --balance with --account: refused, nothing made.
      const keysBefore = (await walkList(e.gw, `/accounts/${created.id}/keys`, 100)).length;
      const withBalance = await e.gw.cli(['keys', 'create', '--name', 'x', '--account', created.id, '--balance', '5']);
      assert.equal(withBalance.code, 1);
      assert.match(withBalance.stderr, /top up the account/);
      assert.equal((await walkList(e.gw, `/accounts/${created.id}/keys`, 100)).length, keysBefore);

      const topped = await e.gw.cli(['accounts', 'topup', created.id, '--amount', '2', '--note', 'inv-1']);
      assert.equal(topped.code, 0, topped.stderr);
      assert.match(topped.stdout, new RegExp(`Topped up account ${created.id} by \\$2: balance \\$3`));

      // Both keys spend the one balance.
      const cost1 = assertChatOk(await postChat(e.gw, openSecret, CHAT), 'gpt-test');
      const cost2 = assertChatOk(await postChat(e.gw, capped.key, CHAT), 'gpt-test');
      const shown = parseJsonOutput(await e.gw.cli(['accounts', 'show', created.id, '--json']), 'accounts show');
      assert.equal(nano(shown.balance), nano(3) - cost1 - cost2);
      assert.equal(nano(shown.spent), cost1 + cost2);
      assert.equal(shown.held, 0);
      assert.deepEqual(shown.keys.map((k: Json) => [k.name, nano(k.spent)]), [['dev', cost1], ['ci', cost2]]);
      const table = await e.gw.cli(['accounts', 'show', created.id]);
      assert.match(table.stdout, /CREDIT LIMIT\s+CREDIT LEFT/);
      assert.match(table.stdout, /ci\s+\$0\.0000\d+\s+\$0\s+\$0\.5\s+\$0\.4999/);

      // The capped key: a credit limit just above its spend leaves less than one hold: 402, nothing charged.
      const limited = await e.gw.cli(['keys', 'set-limits', capped.id, '--credit-limit', usdOf(cost2 + 1000)]);
      assert.equal(limited.code, 0, limited.stderr);
      assert.match(limited.stdout, /credit limit \$0\.0000\d+ \(\$0\.000001 left\)/);
      const capError = await refused(capped.key, 402, 'credit_limit_reached', created.id);
      assert.match(capError.message, /credit limit/i);
      assertChatOk(await postChat(e.gw, openSecret, CHAT), 'gpt-test'); // the other key is not capped
      const keyShow = await e.gw.cli(['keys', 'show', capped.id]);
      assert.match(keyShow.stdout, new RegExp(`account\\s+${created.id} \\(team-cli\\)`));
      assert.match(keyShow.stdout, /credit limit\s+\$0\.0000\d+/);
      assert.match(keyShow.stdout, /credit left\s+\$0\.000001\n/);
      assert.equal((await e.gw.cli(['keys', 'set-limits', capped.id, '--credit-limit', 'none'])).code, 0);
      assert.equal((await key(capped.id)).credit_limit, null);

      // Suspended: both keys 402 account_suspended, no upstream call; resumed, they work again.
      const suspended = await e.gw.cli(['accounts', 'suspend', created.id]);
      assert.match(suspended.stdout, /Suspended account/);
      await refused(openSecret, 402, 'account_suspended', created.id);
      await refused(capped.key, 402, 'account_suspended', created.id);
      assert.equal((await e.gw.cli(['accounts', 'list', '--status', 'suspended', '--json'])).stdout.includes(created.id), true);
      assert.equal((await e.gw.cli(['accounts', 'resume', created.id])).code, 0);
      assertChatOk(await postChat(e.gw, capped.key, CHAT), 'gpt-test');

      // An account budget smaller than one hold refuses the next hold of any of its keys.
      const budgeted = parseJsonOutput(await e.gw.cli(['accounts', 'set', created.id, '--budget', '0.000001', '--budget-period', 'day', '--json']), 'accounts set');
      assert.deepEqual([budgeted.budget, budgeted.budget_period], [0.000001, 'day']);
      await afterRecentKeyRows();
      const budgetError = await refused(openSecret, 402, 'budget_exceeded', created.id);
      assert.match(budgetError.message, /account/i);
      await refused(capped.key, 402, 'budget_exceeded', created.id);
      assert.equal((await e.gw.cli(['accounts', 'set', created.id, '--budget', 'none'])).code, 0);
      assert.equal((await account(created.id)).budget, null);
      await afterRecentKeyRows();
      assertChatOk(await postChat(e.gw, openSecret, CHAT), 'gpt-test');

      // keys topup/adjust credit the key's account and say so.
      const keyTopup = await e.gw.cli(['keys', 'topup', capped.id, '1']);
      assert.match(keyTopup.stdout, new RegExp(`^Topped up account ${created.id} \\(key ${capped.id}\\) by \\$1:`));
      const keyAdjust = await e.gw.cli(['keys', 'adjust', capped.id, '-0.5', '--reason', 'refund']);
      assert.match(keyAdjust.stdout, new RegExp(`^Adjusted account ${created.id} \\(key ${capped.id}\\) by -0.5 USD`));
      const adjusted = await e.gw.cli(['accounts', 'adjust', created.id, '--amount', '-0.25', '--reason', 'goodwill reversal']);
      assert.match(adjusted.stdout, new RegExp(`Adjusted account ${created.id} by -0.25 USD`));

      // The ledger, the usage by account and the account's spent agree.
      const final = await account(created.id);
      const entries = await walkList(e.gw, `/accounts/${created.id}/ledger`, 3);
      assert.ok(entries.every((x: Json) => x.account_id === created.id));
      assert.deepEqual(entries.map((x: Json) => x.id), [...entries.map((x: Json) => x.id)].sort((a, b) => b - a), 'newest first');
      const sum = (kinds: string[]) => entries.filter((x: Json) => kinds.includes(x.kind)).reduce((s: number, x: Json) => s + nano(x.amount), 0);
      assert.equal(sum(['capture']), nano(final.spent), 'Σ captures = spent');
      assert.equal(sum(['topup', 'adjust']) - sum(['capture']), nano(final.balance), 'Σ credits − captures = balance');
      const summary = await adminOk(e.gw, 'GET', `/usage/summary?group_by=account&account_id=${created.id}`);
      assert.deepEqual(summary.data.map((g: Json) => [g.group, nano(g.cost)]), [[created.id, nano(final.spent)]]);
      const byKey = await adminOk(e.gw, 'GET', `/usage/summary?group_by=key&account_id=${created.id}`);
      const keys = await walkList(e.gw, `/accounts/${created.id}/keys`, 1);
      assert.deepEqual(
        byKey.data.map((g: Json) => [g.group, nano(g.cost)]).sort(),
        keys.map((k: Json) => [k.id, nano(k.spent)]).sort(),
        "usage by key within the account = each key's spent",
      );
      const rows = await walkList(e.gw, `/usage?account_id=${created.id}`, 100);
      assert.equal(rows.reduce((s: number, r: Json) => s + nano(r.cost), 0), nano(final.spent));
      const csv = await admin(e.gw, 'GET', `/usage.csv?account_id=${created.id}`);
      assert.equal(csv.text.trim().split('\n').length, rows.length + 1, 'the CSV has the same rows');
      const cliUsage = parseJsonOutput(await e.gw.cli(['usage', '--account', created.id, '--json']), 'usage --account');
      assert.equal(cliUsage.length, rows.length);

      // Listing: personal accounts only with --all.
      const listed = parseJsonOutput(await e.gw.cli(['accounts', 'list', '--json']), 'accounts list');
      assert.ok(listed.some((a: Json) => a.id === created.id));
      assert.ok(listed.every((a: Json) => a.personal === false));
      const personal = parseJsonOutput(await e.gw.cli(['keys', 'create', '--name', 'solo', '--balance', '1', '--json']), 'keys create personal');
      const all = parseJsonOutput(await e.gw.cli(['accounts', 'list', '--all', '--json']), 'accounts list --all');
      assert.ok(all.some((a: Json) => a.id === personal.account_id && a.personal));
      assert.match((await e.gw.cli(['keys', 'list'])).stdout, /^ID\s+NAME\s+PREFIX\s+ACCOUNT/);
    });

    test('CLI: the account token is printed once, rotated, revoked', async () => {
      const created = parseJsonOutput(await e.gw.cli(['accounts', 'create', '--name', 'tok', '--models', 'gpt-test', '--json']), 'accounts create');
      assert.deepEqual(created.allowed_models, ['gpt-test']);
      const first = await e.gw.cli(['accounts', 'token', created.id]);
      assert.equal(first.code, 0, first.stderr);
      const [token, , note] = first.stdout.split('\n');
      assert.match(token!, /^tga-/);
      assert.match(note!, /shown only now/);
      const shown = await account(created.id);
      assert.equal(shown.token_prefix, token!.slice(0, shown.token_prefix.length));
      const rotated = parseJsonOutput(await e.gw.cli(['accounts', 'token', created.id, '--json']), 'accounts token --json');
      assert.match(rotated.token, /^tga-/);
      assert.notEqual(rotated.token, token);
      const revoked = parseJsonOutput(await e.gw.cli(['accounts', 'token', created.id, '--revoke', '--json']), 'accounts token --revoke');
      assert.equal(revoked.token_prefix, null);
      // A bad amount and an unknown account are refused with one line, changing nothing.
      const bad = await e.gw.cli(['accounts', 'topup', created.id, '--amount', 'ten']);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /^tollgate: .*amount/);
      const missing = await e.gw.cli(['accounts', 'show', 'acct_nope']);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /No account with id acct_nope/);
      assert.equal((await account(created.id)).balance, 0);
    });

    test('admin API: create, keys in it, top up, draw on one balance; caps, suspension and budget refuse; ledger and usage agree', async () => {
      const created = await adminOk(e.gw, 'POST', '/accounts', { body: { name: 'team-api', metadata: { crm: 'c-1' } } });
      assert.deepEqual(await account(created.id), created);
      const a = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'svc-a', account_id: created.id } });
      const b = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'svc-b', account_id: created.id, credit_limit: '0.1' } });
      assert.deepEqual([a.account_id, b.account_id, a.credit_limit, b.credit_limit], [created.id, created.id, null, 0.1]);
      assert.equal(a.available, 0);
      await refused(a.key, 402, 'insufficient_balance', created.id);

      const topped = await adminOk(e.gw, 'POST', `/accounts/${created.id}/topup`, { body: { amount: 5, note: 'po-7' } });
      assert.equal(topped.balance, 5);
      const costA = assertChatOk(await postChat(e.gw, a.key, CHAT), 'gpt-test');
      const costB = assertChatOk(await postChat(e.gw, b.key, CHAT), 'gpt-test');
      const after = await account(created.id);
      assert.equal(nano(after.balance), nano(5) - costA - costB);
      const keys = await adminOk(e.gw, 'GET', `/accounts/${created.id}/keys`);
      assert.deepEqual(keys.data.map((k: Json) => [k.id, nano(k.spent), k.balance]), [[a.id, costA, after.balance], [b.id, costB, after.balance]]);
      assert.equal(nano((await key(b.id)).credit_left), nano(0.1) - costB);

      // PATCH the capped key's credit limit to just above its spend: 402 credit_limit_reached, nothing charged.
      const patched = await adminOk(e.gw, 'PATCH', `/keys/${b.id}`, { body: { credit_limit: usdOf(costB + 1) } });
      assert.equal(nano(patched.credit_left), 1);
      const capError = await refused(b.key, 402, 'credit_limit_reached', created.id);
      assert.ok(capError.message.length > 0);
      await adminOk(e.gw, 'PATCH', `/keys/${b.id}`, { body: { credit_limit: null } });

      // Suspend / resume.
      assert.equal((await adminOk(e.gw, 'POST', `/accounts/${created.id}/suspend`)).status, 'suspended');
      await refused(a.key, 402, 'account_suspended', created.id);
      await refused(b.key, 402, 'account_suspended', created.id);
      assert.equal((await adminOk(e.gw, 'POST', `/accounts/${created.id}/resume`)).status, 'active');
      assertChatOk(await postChat(e.gw, b.key, CHAT), 'gpt-test');

      // An account budget (PATCH) refuses any key's next hold; cleared, the keys work.
      const budgeted = await adminOk(e.gw, 'PATCH', `/accounts/${created.id}`, { body: { budget: '0.000001', budget_period: 'week', name: 'team-api-2' } });
      assert.deepEqual([budgeted.name, budgeted.budget, budgeted.budget_period, typeof budgeted.budget_used], ['team-api-2', 0.000001, 'week', 'number']);
      await refused(a.key, 402, 'budget_exceeded', created.id);
      await adminOk(e.gw, 'PATCH', `/accounts/${created.id}`, { body: { budget: null } });
      assertChatOk(await postChat(e.gw, a.key, CHAT), 'gpt-test');

      // A key's top-up credits its account; the answer is the key object, naming it.
      const keyTopped = await adminOk(e.gw, 'POST', `/keys/${a.id}/topup`, { body: { amount: '1' } });
      assert.equal(keyTopped.account_id, created.id);
      assert.equal(nano((await account(created.id)).balance), nano(keyTopped.balance));
      await adminOk(e.gw, 'POST', `/accounts/${created.id}/adjust`, { body: { amount: '-0.5', reason: 'correction' } });

      const final = await account(created.id);
      const entries = await walkList(e.gw, `/accounts/${created.id}/ledger`, 2);
      const sum = (kind: string) => entries.filter((x: Json) => x.kind === kind).reduce((s: number, x: Json) => s + nano(x.amount), 0);
      assert.equal(sum('capture'), nano(final.spent));
      assert.equal(sum('topup') + sum('adjust') - sum('capture'), nano(final.balance));
      assert.deepEqual(
        entries.filter((x: Json) => x.kind !== 'hold' && x.kind !== 'release' && x.kind !== 'capture').map((x: Json) => [x.kind, x.key_id, x.amount]),
        [['adjust', null, -0.5], ['topup', a.id, 1], ['topup', null, 5]],
        "the account's own credits name no key; a key's top-up names it",
      );
      const summary = await adminOk(e.gw, 'GET', `/usage/summary?group_by=account`);
      assert.equal(nano(summary.data.find((g: Json) => g.group === created.id).cost), nano(final.spent));
      assert.equal(nano((await key(a.id)).spent) + nano((await key(b.id)).spent), nano(final.spent), "Σ keys' spent = the account's");

      // Listing, filters and paging.
      const named = await adminOk(e.gw, 'GET', '/accounts?name=team-api');
      assert.deepEqual(named.data.map((x: Json) => x.id), [created.id]);
      const pages = await walkList(e.gw, '/accounts?include_personal=true', 1);
      assert.equal(new Set(pages.map((x: Json) => x.id)).size, pages.length, 'each account once');
      assert.ok(pages.some((x: Json) => x.personal));
      assert.ok((await walkList(e.gw, '/accounts', 1)).every((x: Json) => !x.personal));
      assert.deepEqual((await adminOk(e.gw, 'GET', `/keys?account_id=${created.id}`)).data.map((k: Json) => k.id), [a.id, b.id]);
    });

    test('admin API: Idempotency-Key on every POST; create and top-up replayed credit once; the token replay is null', async () => {
      const headers = { 'idempotency-key': `acct-create-${Date.now()}` };
      const body = { name: 'idem', balance: '2' };
      const first = await admin(e.gw, 'POST', '/accounts', { body, headers });
      const second = await admin(e.gw, 'POST', '/accounts', { body, headers });
      assert.equal(first.status, 200, first.text);
      assert.equal(second.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(second.json, first.json);
      assert.equal((await adminOk(e.gw, 'GET', '/accounts?name=idem')).data.length, 1, 'one account made');
      const id = first.json.id;

      const topHeaders = { 'idempotency-key': `acct-topup-${id}` };
      const replies = await Promise.all([1, 2, 3].map(() => admin(e.gw, 'POST', `/accounts/${id}/topup`, { body: { amount: '1.5' }, headers: topHeaders })));
      for (let i = 0; i < 3; i++) replies.push(await admin(e.gw, 'POST', `/accounts/${id}/topup`, { body: { amount: '1.5' }, headers: topHeaders }));
      assert.ok(replies.every((r) => r.status === 200 || r.status === 409), replies.map((r) => r.status).join(','));
      assert.equal((await account(id)).balance, 3.5, 'credited once');
      assert.equal((await walkList(e.gw, `/accounts/${id}/ledger`, 100)).filter((x: Json) => x.kind === 'topup').length, 2);
      const mismatch = await admin(e.gw, 'POST', `/accounts/${id}/topup`, { body: { amount: '2' }, headers: topHeaders });
      assertError(mismatch, 422, 'idempotency_mismatch');

      const tokenHeaders = { 'idempotency-key': `acct-token-${id}` };
      const issued = await adminOk(e.gw, 'POST', `/accounts/${id}/token`, { headers: tokenHeaders });
      assert.match(issued.token, /^tga-/);
      const replay = await admin(e.gw, 'POST', `/accounts/${id}/token`, { headers: tokenHeaders });
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.equal(replay.json.token, null, 'the token is never stored in clear');
      assert.equal(replay.json.token_prefix, issued.token_prefix);
      assert.equal((await adminOk(e.gw, 'DELETE', `/accounts/${id}/token`)).token_prefix, null);

      for (const verb of ['suspend', 'resume', 'adjust']) {
        const h = { 'idempotency-key': `acct-${verb}-${id}` };
        const b = verb === 'adjust' ? { amount: '-1', reason: 'x' } : undefined;
        const r1 = await admin(e.gw, 'POST', `/accounts/${id}/${verb}`, { headers: h, ...(b ? { body: b } : {}) });
        const r2 = await admin(e.gw, 'POST', `/accounts/${id}/${verb}`, { headers: h, ...(b ? { body: b } : {}) });
        assert.equal(r1.status, 200, r1.text);
        assert.equal(r2.headers.get('idempotent-replayed'), 'true', verb);
      }
      assert.equal((await account(id)).balance, 2.5, 'the adjustment applied once');
    });

    test('admin API: bad input is 400 naming the field, an unknown account 404; nothing changes', async () => {
      const created = await adminOk(e.gw, 'POST', '/accounts', { body: { name: 'strict', balance: 1 } });
      const id = created.id;
      const before = await account(id);
      const keysBefore = (await walkList(e.gw, '/keys', 1000)).length;
      const accountsBefore = (await walkList(e.gw, '/accounts?include_personal=true', 1000)).length;

      for (const path of ['/accounts/acct_nope', '/accounts/acct_nope/keys', '/accounts/acct_nope/ledger']) {
        assertError(await admin(e.gw, 'GET', path), 404, 'account_not_found');
      }
      for (const verb of ['topup', 'adjust', 'suspend', 'resume', 'token']) {
        const body = verb === 'topup' ? { amount: 1 } : verb === 'adjust' ? { amount: 1, reason: 'x' } : undefined;
        assertError(await admin(e.gw, 'POST', `/accounts/acct_nope/${verb}`, body ? { body } : {}), 404, 'account_not_found');
      }
      assertError(await admin(e.gw, 'PATCH', '/accounts/acct_nope', { body: { name: 'x' } }), 404, 'account_not_found');
      assertError(await admin(e.gw, 'DELETE', '/accounts/acct_nope/token'), 404, 'account_not_found');
      assertError(await admin(e.gw, 'POST', '/keys', { body: { name: 'k', account_id: 'acct_nope' } }), 404, 'account_not_found');

      const cases: Array<[string, string, unknown, string]> = [
        ['POST', `/accounts/${id}/topup`, { amount: -1 }, 'amount'],
        ['POST', `/accounts/${id}/topup`, { amount: 'ten' }, 'amount'],
        ['POST', `/accounts/${id}/topup`, { amount: 0 }, 'amount'],
        ['POST', `/accounts/${id}/adjust`, { amount: 1 }, 'reason'],
        ['POST', `/accounts/${id}/adjust`, { amount: -100, reason: 'too much' }, 'amount'],
        ['POST', '/accounts', { name: '' }, 'name'],
        ['POST', '/accounts', { name: 'x', balance: -1 }, 'balance'],
        ['POST', '/accounts', { name: 'x', budget: 1, budget_period: 'year' }, 'budget_period'],
        ['POST', '/accounts', { name: 'x', allowed_models: ['nope'] }, 'allowed_models'],
        ['POST', '/accounts', { name: 'x', owner: 'me' }, 'owner'],
        ['PATCH', `/accounts/${id}`, { status: 'closed' }, 'status'],
        ['PATCH', `/accounts/${id}`, { balance: 10 }, 'balance'],
        ['POST', '/keys', { name: 'k', account_id: id, balance: 5 }, 'balance'],
        ['POST', '/keys', { name: 'k', account_id: id, credit_limit: -1 }, 'credit_limit'],
        ['PATCH', `/keys/${(await adminOk(e.gw, 'POST', '/keys', { body: { name: 'probe', account_id: id } })).id}`, { credit_limit: 'lots' }, 'credit_limit'],
      ];
      const keysNow = keysBefore + 1; // the probe key just made
      for (const [method, path, body, param] of cases) {
        const error = assertError(await admin(e.gw, method, path, { body }), 400, 'invalid_request');
        assert.equal(error.param, param, `${method} ${path} ${JSON.stringify(body)}: ${error.message}`);
      }
      assertError(await admin(e.gw, 'GET', '/accounts?status=gone'), 400, 'invalid_request');
      assertError(await admin(e.gw, 'GET', '/usage/summary?group_by=team'), 400, 'invalid_request');

      assert.deepEqual(await account(id), before, 'the account is unchanged');
      assert.equal((await walkList(e.gw, '/keys', 1000)).length, keysNow, 'no key made');
      assert.equal((await walkList(e.gw, '/accounts?include_personal=true', 1000)).length, accountsBefore, 'no account made');
      // The admin API needs its token.
      assert.equal((await call(e.gw, 'GET', '//admin/v1/accounts')).status, 401);
    });
  });
}

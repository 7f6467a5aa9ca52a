// The operator's Webhooks page in a real headless Chromium, against a real gateway delivering to a local
// receiver (docs/adr/0052-signed-webhooks.md): a revoked key's event listed with its status, attempts and
// last error; filters by type and status; Resend sends it again with the same webhook-id.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { waitFor, type Json } from '../support/e2e.js';
import { chromiumSkipReason, watchPage } from '../support/browser.js';
import { dashboardRig } from '../support/dashboard-rig.js';

const skip = chromiumSkipReason();
const ADMIN_TOKEN = 'dashboard-webhooks-admin-token-0123456789abcdef';
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

describe('dashboard: the operator’s webhooks', { skip }, () => {
  const received: string[] = [];
  let failing = true;
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received.push(String(request.headers['webhook-id']));
      response.writeHead(failing ? 503 : 200).end();
    });
  });
  const rig = dashboardRig(ADMIN_TOKEN, {
    extraYaml: async () => {
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      return `notifications:\n  webhooks: [{ url: "${url}", secret: "\${HOOK_SECRET}", events: ["key.revoked"] }]\n  first_retry_seconds: 0.2\n  max_retry_seconds: 0.5\n  give_up_hours: 0.0005\n`;
    },
    env: { HOOK_SECRET: SECRET },
  });
  after(async () => {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });
  const { admin } = rig;

  test('a failed event shows its attempts and last error; Resend delivers it with the same webhook-id', async () => {
    const key = await admin('POST', '/keys', { name: 'to-revoke', balance: 1 });
    await admin('POST', `/keys/${key.id}/revoke`);
    // The receiver answers 503 until the event gives up (give_up_hours: under two seconds here).
    const event = await waitFor(async () => {
      const list = await admin('GET', '/webhooks/events?status=failed');
      return list.data.find((e: Json) => e.data.key_id === key.id);
    }, 20_000);
    assert.ok(event, 'the event failed for good');
    const watched = await watchPage(rig.browser, 'webhooks');
    const { page } = watched;
    await rig.signIn(page);
    await page.click('[data-nav=webhooks]');
    const row = page.locator(`tr[data-event="${event.id}"]`);
    await row.waitFor();
    assert.equal(await row.getAttribute('data-status'), 'failed');
    assert.equal(await row.getAttribute('data-attempts'), String(event.attempts));
    assert.equal(await row.getAttribute('data-message-id'), event.message_id);
    assert.match(await row.innerText(), /HTTP 503/);
    await page.selectOption('select[aria-label=Status]', 'delivered');
    await page.getByText('No webhook events match.').waitFor();
    await page.selectOption('select[aria-label=Status]', '');
    await page.selectOption('select[aria-label=Type]', 'key.revoked');
    await row.waitFor();

    failing = false;
    const before = received.filter((id) => id === event.message_id).length;
    await row.locator('[data-action=resend]').click();
    await page.getByText(`Event ${event.id} (key.revoked) is due again now.`).waitFor();
    assert.ok(await waitFor(async () => (await admin('GET', `/webhooks/events/${event.id}`)).status === 'delivered', 20_000));
    assert.equal(received.filter((id) => id === event.message_id).length, before + 1);
    await page.click('button:has-text("Refresh")');
    await page.locator(`tr[data-event="${event.id}"][data-status=delivered]`).waitFor();
    watched.assertClean();
  });
});

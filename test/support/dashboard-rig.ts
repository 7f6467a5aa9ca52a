// What every operator-side dashboard test stands on: a mock upstream, a real gateway with an admin token,
// a headless Chromium — started by the calling suite's first `before` and stopped by its `after` — and the
// two things its tests do through them: call the admin API, and sign in on the dashboard's page.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './browser.js';
import { call, type Json } from './e2e.js';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from './gateway-process.js';
import { startMockUpstream, type MockUpstream } from './mock-upstream.js';

export interface DashboardRig {
  readonly adminToken: string;
  readonly mock: MockUpstream;
  readonly gw: GatewayProcess;
  readonly browser: Browser;
  /** The admin API's JSON answer (`path` under /admin/v1), asserted 200. */
  admin(method: string, path: string, body?: unknown): Promise<Json>;
  /** The admin API's answer as it came, for a test that checks a refusal. */
  adminCall(method: string, path: string, body?: unknown): ReturnType<typeof call>;
  /** Opens the dashboard on `page` and signs in with `token` (the admin token by default); waits for `ready` when given. */
  signIn(page: Page, token?: string, ready?: string): Promise<Page>;
}

export interface DashboardRigOptions {
  /** More config YAML after the admin block, made when the suite starts (a receiver's port is known by then). */
  readonly extraYaml?: () => string | Promise<string>;
  readonly env?: Record<string, string>;
}

/** Registers the rig's start and stop in the calling `describe` (call it before the suite's own `before`). */
export function dashboardRig(adminToken: string, options: DashboardRigOptions = {}): DashboardRig {
  let started: { mock: MockUpstream; gw: GatewayProcess; browser: Browser } | undefined;
  const parts = () => {
    assert.ok(started, 'the dashboard rig is used before its suite started');
    return started;
  };
  before(async () => {
    const mock = await startMockUpstream();
    started = { mock, gw: undefined as unknown as GatewayProcess, browser: undefined as unknown as Browser };
    const extra = options.extraYaml ? await options.extraYaml() : '';
    started.gw = await startGateway({ config: mockConfig(mock, `admin:\n  token: ${adminToken}\n${extra}`), ...(options.env ? { env: options.env } : {}) });
    started.browser = await launchChromium();
  });
  after(async () => {
    await started?.browser?.close();
    await started?.mock.close();
    if (started?.gw) await stopGateway(started.gw, 10_000);
  });
  const adminCall = (method: string, path: string, body?: unknown) => call(parts().gw, method, `//admin/v1${path}`, { key: adminToken, body });
  return {
    adminToken,
    get mock() {
      return parts().mock;
    },
    get gw() {
      return parts().gw;
    },
    get browser() {
      return parts().browser;
    },
    adminCall,
    async admin(method, path, body) {
      const res = await adminCall(method, path, body);
      assert.equal(res.status, 200, `${method} ${path}: ${res.text}`);
      return res.json;
    },
    async signIn(page, token = adminToken, ready) {
      await page.goto(`${parts().gw.origin}/dashboard/`);
      await page.fill('#token', token);
      await page.click('button[type=submit]');
      if (ready !== undefined) await page.locator(ready).waitFor();
      return page;
    },
  };
}

// The admin token check: only the exact token, sent as a bearer token, passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isGatewayError } from '../../../src/errors.js';
import { adminTokenCheck } from '../../../src/http/routes/admin/admin-auth.js';

test('passes the exact bearer token and refuses everything else with invalid_admin_token', () => {
  const token = 'T'.repeat(40);
  const check = adminTokenCheck(token);
  check(`Bearer ${token}`);
  check(`bearer ${token}  `);
  for (const bad of [undefined, '', 'Bearer', `Bearer ${token}x`, `Bearer ${token.slice(1)}`, `Basic ${token}`, token, `Bearer ${token} extra`, 'Bearer ']) {
    assert.throws(() => check(bad), (error: unknown) => isGatewayError(error) && error.code === 'invalid_admin_token' && error.status === 401, String(bad));
  }
});

// `tollgate health` reaches a gateway on a wildcard address through loopback, and writes IPv6 hosts in brackets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readyUrl } from '../../../src/cli/health.js';

test('a gateway listening on 0.0.0.0 is asked on 127.0.0.1', () => {
  assert.equal(readyUrl('0.0.0.0', 8080), 'http://127.0.0.1:8080/ready');
});

test('a gateway listening on :: is asked on ::1, in brackets', () => {
  assert.equal(readyUrl('::', 9090), 'http://[::1]:9090/ready');
});

test('a named host or a specific address is asked as it is written', () => {
  assert.equal(readyUrl('127.0.0.1', 8080), 'http://127.0.0.1:8080/ready');
  assert.equal(readyUrl('gateway.internal', 80), 'http://gateway.internal:80/ready');
  assert.equal(readyUrl('fd00::5', 8080), 'http://[fd00::5]:8080/ready');
});

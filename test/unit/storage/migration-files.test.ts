// The migration loader reads a folder of NNNN-name.sql files as they are, and refuses a folder whose
// files would make a runner skip or misnumber a migration, naming the file.
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readMigrations } from '../../../src/storage/migration-files.js';

describe('readMigrations', () => {
  let dir: string;
  let folder: URL;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-migration-files-'));
    folder = pathToFileURL(`${dir}/`);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('reads each file whole, in version order, its name from the file name', () => {
    writeFileSync(join(dir, '0002-second-step.sql'), '-- why\n\n  ALTER TABLE t ADD COLUMN b INTEGER;\n  ');
    writeFileSync(join(dir, '0001-first.sql'), 'CREATE TABLE t (a INTEGER);');
    writeFileSync(join(dir, 'README.md'), 'not a migration');
    assert.deepEqual(readMigrations(folder), [
      { version: 1, name: 'first', sql: 'CREATE TABLE t (a INTEGER);' },
      { version: 2, name: 'second-step', sql: '-- why\n\n  ALTER TABLE t ADD COLUMN b INTEGER;\n  ' },
    ]);
  });

  test('a gap in the numbers is refused, naming the file', () => {
    writeFileSync(join(dir, '0001-first.sql'), '');
    writeFileSync(join(dir, '0003-third.sql'), '');
    assert.throws(() => readMigrations(folder), /0003-third\.sql: expected version 2 here/);
  });

  test('two migrations with one number are refused', () => {
    writeFileSync(join(dir, '0001-first.sql'), '');
    writeFileSync(join(dir, '0001-other.sql'), '');
    assert.throws(() => readMigrations(folder), /0001-other\.sql: expected version 2 here/);
  });

  test('a file not named NNNN-name.sql is refused', () => {
    writeFileSync(join(dir, '1-First.sql'), '');
    assert.throws(() => readMigrations(folder), /1-First\.sql: expected NNNN-name\.sql/);
  });

  test('a missing folder says which, and how it is made', () => {
    rmSync(dir, { recursive: true, force: true });
    assert.throws(() => readMigrations(folder), /the migrations folder .* cannot be read \(is the package built\? npm run build copies it\)/);
  });
});

// Every migration is a frozen file whose text, below its comment header, is byte for byte what the
// gateway has run since it shipped: PostgreSQL migrations 7, 10 and 11 were once derived at load time by
// text surgery on earlier migrations' text; their files hold what that surgery produced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { POSTGRES_MIGRATIONS } from '../../../src/storage/postgres/migrations.js';
import { SQLITE_MIGRATIONS } from '../../../src/storage/sqlite/migrations.js';

/** Each file's name (NNNN-name.sql) and its text below the leading comment lines. */
function frozenBodies(dialect: string): Map<string, string> {
  const folder = new URL(`../../../src/storage/${dialect}/migrations/`, import.meta.url);
  const bodies = new Map<string, string>();
  for (const file of readdirSync(folder).sort()) {
    const text = readFileSync(new URL(file, folder), 'utf8');
    const header = /^(--[^\n]*\n)*/.exec(text)![0];
    bodies.set(file, text.slice(header.length));
  }
  return bodies;
}

const fileOf = (m: { version: number; name: string }) => `${String(m.version).padStart(4, '0')}-${m.name}.sql`;

test('the frozen PostgreSQL migrations are the text the derivation code produces', () => {
  const frozen = frozenBodies('postgres');
  assert.deepEqual([...frozen.keys()], POSTGRES_MIGRATIONS.map(fileOf));
  for (const m of POSTGRES_MIGRATIONS) assert.equal(frozen.get(fileOf(m)), m.sql, `migration ${m.version}`);
});

test('the frozen SQLite migrations are the text of the migration list', () => {
  const frozen = frozenBodies('sqlite');
  assert.deepEqual([...frozen.keys()], SQLITE_MIGRATIONS.map(fileOf));
  for (const m of SQLITE_MIGRATIONS) assert.equal(frozen.get(fileOf(m)), m.sql, `migration ${m.version}`);
});

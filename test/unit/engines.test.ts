// package.json's `engines` names the Node lines Tollgate is tested on; every production dependency in
// package-lock.json must declare support for each of them, or npm warns EBADENGINE on an operator's
// install (and refuses it with engine-strict). The one accepted exception is listed with its reason.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';

interface Semver {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
  validRange(range: string): string | null;
}
// semver ships no types of its own; these three functions are all this test uses.
const semver = createRequire(import.meta.url)('semver') as Semver;

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, { version?: string; dev?: boolean; engines?: { node?: string } }>;
};

/**
 * Dependencies that declare a newer Node than a line we support, by name and Node major, and why that is
 * accepted (docs/adr/0031-install-and-node-versions.md).
 */
const ACCEPTED: Record<string, { major: number; why: string }> = {
  // The SQLite driver on Node 22.14+ and 24. Installed on Node 20 too, never loaded there: Node 20 has no
  // Node-API 10, so src/storage/sqlite/driver.ts loads better-sqlite3 12 (better-sqlite3-node20) instead.
  'better-sqlite3': { major: 20, why: 'installed but not loaded on Node 20, which uses better-sqlite3-node20' },
  // @fastify/static 10.1.4+ (path-alias 403s and other fixes) needs content-disposition 3, an ES module that
  // declares Node >= 22; Node 20.19 loads it through require(esm), and the suite runs on Node 20.
  'content-disposition': { major: 20, why: '@fastify/static security fixes need it; loads on 20.19 via require(esm)' },
};

/** The lowest version of each line of a range: "^20.19 || ^22.12 || ^24" → 20.19.0, 22.12.0, 24.0.0. */
function lineFloors(range: string): string[] {
  return range.split('||').map((part) => {
    const floor = semver.minVersion(part.trim());
    assert.ok(floor, `"${part}" has a lowest version`);
    return floor.version;
  });
}

const floors = lineFloors(pkg.engines.node);
const production = Object.entries(lock.packages).filter(([path, entry]) => path !== '' && !entry.dev && entry.engines?.node);
const nameOf = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

test('engines names the tested Node lines: 20.19, 22.12 (require(esm) unflagged) and 24', () => {
  assert.deepEqual(floors, ['20.19.0', '22.12.0', '24.0.0']);
});

test('every production dependency supports the lowest version of each Node line engines names', () => {
  const unsupported = production.flatMap(([path, entry]) =>
    floors
      .filter((floor) => !semver.satisfies(floor, entry.engines!.node!))
      .filter((floor) => ACCEPTED[nameOf(path)]?.major !== Number(floor.split('.')[0]))
      .map((floor) => `${nameOf(path)}@${entry.version} needs node ${entry.engines!.node}, not ${floor}`),
  );
  assert.deepEqual(unsupported, []);
});

test('each accepted exception is still needed (else it is removed from the list)', () => {
  for (const [name, { major }] of Object.entries(ACCEPTED)) {
    const floor = floors.find((f) => Number(f.split('.')[0]) === major);
    assert.ok(floor, `${name}: Node ${major} is one of the lines engines names`);
    const entry = production.find(([path]) => nameOf(path) === name);
    assert.ok(entry, `${name} is still a production dependency`);
    assert.equal(semver.satisfies(floor, entry[1].engines!.node!), false, `${name} now supports Node ${major}: drop the exception`);
  }
});

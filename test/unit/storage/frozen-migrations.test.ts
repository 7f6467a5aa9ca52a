// Every migration is a frozen file whose text, below its comment header, is byte for byte what the
// gateway has run since it shipped. PostgreSQL migrations 7, 10 and 11 were once derived at load time by
// text surgery on earlier migrations' text; their files hold exactly what that surgery produced (checked
// against the derivation code before it was removed), and the digests below pin every file from then on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { postgresMigrations } from '../../../src/storage/postgres/migrations.js';
import { sqliteMigrations } from '../../../src/storage/sqlite/migrations.js';
import type { Migration } from '../../../src/storage/migration-files.js';

/** SHA-256 of each shipped migration's text below its header. A new migration adds its line here. */
const SHIPPED: Record<'postgres' | 'sqlite', Record<number, string>> = {
  postgres: {
    1: '25929c8d9edb735dc18b479d17a2ea60e3ac29c687472b996e070def27d747e2',
    2: '806f4c15659ad6e2620adb898954e8cd60b85a5776ea417c60b27839c8c7957e',
    3: '93a553d9b0297e38d9f8517c885a820b48e0cd10e5e524c1fb7f24e56355d160',
    4: '0e5663d39d0e16cfd4311a5b8cb76aff4e21766887559f2cf15507bbeb3e8af0',
    5: 'ffd0a5261449351f6a8d8bcf775e0feafa64616a1045317b407d6452a80aa3e4',
    6: '44ec4c86cd18cc097a5cc322296ccfddb60eee3a467de98df4481ead8a16516a',
    7: '9b94f2d6670f8926eaa2819ce53df7ab05e1a9b4f855e15bc1a82a7244902c3e',
    8: '6f73543ff5e72771920ea65c0c4f929da4cb5c9e5842729a772f6f49b34d4e16',
    9: 'fff710a1171ef36942ac602cb0d13ada8056e13bc74ae1dc05bf6ff6f94cdbd7',
    10: '7f6979922c9f4f3f14c217377aefc1445ef93823b46062a2e61e9300cc74fe42',
    11: '7535e8df76e8f7b7eac7cf91fb5d05927829057445d166e6598de8c4d4a2861f',
    12: 'd26a172589bf1846c7c48f68bb9d2cf0b536c97284a8fd0e7605218fee801221',
    13: '599388b062120912904fe620b9f8813a66f4c6a226f5096e5852e95e95c71d1b',
    14: '07a5325c36d2317b63e27a27899f729f4a614cfac3a2dd4e9875b040b6b950d6',
    15: '60531ab9fc6d0f949b15be33ef8092dc8aef1609cde927264b0855f232af0538',
    16: '0cdabfb99023d6561eb90f25afe2cdb6e0c35efae1f892496fe51da85cd3ea30',
    17: 'b1eda3aa21757c38776de0fbab54e39e5ac9c65fbb4f3111d4425c8f30792aee',
    18: 'b6512196dcb7673f7e7a7d411a73d33132b33286bd5ec17c59cb53e48b7430db',
  },
  sqlite: {
    1: '6cd7b70ff49c1f5f3f680f40814dd3672d0e663598e42ae72bed489f76ae6029',
    2: '56c6f50e9061acb626df33d6208174cba4ef250b26515464150eb9093cb77476',
    3: '492359fa630c34497cdc4b1cf8ba9ccc23de57f676a9d06cd82c5ab8b3164cb9',
    4: '7b2a758bda74130833cee1227c35c889e35196d00373848385fa9bfadd2043ac',
    5: 'e0a3359dd628ee6d2e7a76c0a92d6f63d6eb6e04c2ccd6081e48e1ddf5a9891a',
    6: 'bddcca601f45b2eb702b1b43008b8902d3b54ad0602c8f7844427e94c3268f22',
    7: 'fb66d3fe849bd65f79c9d9548104eecf167fac691bd1eb18dd06b560d4511d3d',
    8: '3d8b7c9f1ed3dd94f709f64fff9ca4e14f83894bdbac567052e3ef5411065cce',
    9: '5ac92d7a53fdf90d8a4ef3913bae338bc696e778294659d74d75a378ce01d2ef',
    10: 'def6d04c2084a173a70e83ba379b3ecd173c38cbb19b6123989af33085066fd4',
    11: '3dfd991d96a851cd03590d002544e02996f3ff8e740c24d74fdea69ecd365338',
    12: '467bf3b4ed814d88cabf889a92595f2fb7e09fb2cab49a835012622c1205abf4',
    13: '3812be30f420cf00a3aa16c32f0086117b07dd60893e427589cd9faceb7c2885',
    14: 'c769ed1905ea6e7aa348f996c099677df61cb4414d640786380137d649c57f50',
  },
};

/** A migration's text below its leading comment lines (the header says why; it may be reworded). */
function digestOf(migration: Migration): string {
  const header = /^(--[^\n]*\n)*/.exec(migration.sql)![0];
  return createHash('sha256').update(migration.sql.slice(header.length)).digest('hex');
}

for (const [dialect, migrations] of [
  ['postgres', postgresMigrations],
  ['sqlite', sqliteMigrations],
] as const) {
  test(`every ${dialect} migration is the text that shipped, and each has its digest pinned`, () => {
    const actual = Object.fromEntries(migrations().map((m) => [m.version, digestOf(m)]));
    for (const m of migrations()) {
      assert.ok(SHIPPED[dialect][m.version], `${dialect} migration ${m.version} is new: pin its digest ${actual[m.version]} here`);
      assert.equal(actual[m.version], SHIPPED[dialect][m.version], `${dialect} migration ${m.version} changed after it shipped: add a new migration instead`);
    }
    assert.deepEqual(Object.keys(actual), Object.keys(SHIPPED[dialect]), 'no shipped migration is missing');
  });
}

// `prepare` (scripts/prepare.mjs), which npm runs after every install in the project: it builds dist/ when
// the build tools are installed, and with the dev dependencies omitted it neither fails on "tsc: not
// found" nor leaves a copy without dist/ looking installed. Run in a scratch project with the real npm.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, beforeEach, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../scripts/prepare.mjs', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'tollgate-prepare-'));
let project: string;
let n = 0;

function touch(path: string): void {
  mkdirSync(dirname(join(project, path)), { recursive: true });
  writeFileSync(join(project, path), path.endsWith('.json') ? '{}' : '');
}

/** `npm run prepare` in the scratch project, whose build script only leaves a mark. */
function prepare() {
  return spawnSync('npm', ['run', 'prepare', '--silent'], { cwd: project, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' } });
}

beforeEach(() => {
  project = join(scratch, String(n++));
  mkdirSync(join(project, 'scripts'), { recursive: true });
  copyFileSync(SCRIPT, join(project, 'scripts', 'prepare.mjs'));
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'scratch', private: true, scripts: { prepare: 'node scripts/prepare.mjs', build: 'node -e "require(\'fs\').writeFileSync(\'built\', \'\')"' } }),
  );
});
after(() => rmSync(scratch, { recursive: true, force: true }));

test('with TypeScript and esbuild installed it runs the build script', () => {
  touch('node_modules/typescript/package.json');
  touch('node_modules/esbuild/package.json');
  const result = prepare();
  assert.equal(result.status, 0, result.stderr);
  assert.ok(existsSync(join(project, 'built')), 'npm run build ran');
});

test('without the dev dependencies, a dist/ built before is kept and the install succeeds with a notice', () => {
  touch('dist/cli/main.js');
  touch('dist/dashboard/index.html');
  const result = prepare();
  assert.equal(result.status, 0, result.stderr);
  assert.equal(existsSync(join(project, 'built')), false, 'no build was attempted');
  assert.match(result.stderr, /typescript and esbuild \(dev dependencies\) are not installed, so dist\/ is not rebuilt/);
});

test('without the dev dependencies and without a dist/ the install fails, saying how to build one', () => {
  const result = prepare();
  assert.notEqual(result.status, 0);
  assert.equal(existsSync(join(project, 'built')), false);
  assert.match(result.stderr, /dist\/ is not built and cannot be: typescript and esbuild \(dev dependencies\) are not installed/);
  assert.match(result.stderr, /npm ci && npm prune --omit=dev/);
  assert.doesNotMatch(result.stderr, /tsc: not found/);
});

test('with only one of the build tools installed it does not try to build, and names the missing one', () => {
  touch('node_modules/typescript/package.json');
  touch('dist/cli/main.js');
  touch('dist/dashboard/index.html');
  const result = prepare();
  assert.equal(result.status, 0, result.stderr);
  assert.equal(existsSync(join(project, 'built')), false);
  assert.match(result.stderr, /tollgate: esbuild \(a dev dependency\) is not installed, so dist\/ is not rebuilt/);
});

// CI: Tollgate installed the way README.md's "Production install" documents it, in a temporary copy of
// this checkout, then started and probed (scripts/install-smoke.mjs). The README's lines are read from
// the block after its `ci-install` marker and run as written, so the documented steps are the tested ones.
//
//   node scripts/ci-install.mjs [--node 24] [--tests]
//
// --node N   installs Node N from the npm `node` package into the temporary directory and runs every step
//            on it (npm, node-gyp against that Node's own headers, the gateway); default: this machine's node.
// --tests    after the README's `npm ci` (which installs the dev dependencies the tests need and the next
//            step drops), runs the unit and contract tests and an end-to-end smoke on that Node: one copy,
//            one install and one native compile serve both checks (docs/adr/0031-install-and-node-versions.md).
//
// Any failing step fails the run (exit 1); the temporary directory is removed either way.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const MARKER = '<!-- ci-install:';
/** The end-to-end smoke on the other Node: the chat path with its billing, and the CLI's key and ledger commands. */
const E2E_SMOKE = ['test/e2e/chat.test.ts', 'test/e2e/cli.test.ts'];

const { values: args } = parseArgs({ options: { node: { type: 'string' }, tests: { type: 'boolean', default: false } } });
if (args.node !== undefined && !/^\d+$/.test(args.node)) fail(`--node takes a major version such as 24, got "${args.node}"`);

function fail(message) {
  console.error(`ci-install: ${message}`);
  process.exit(1);
}

const started = Date.now();
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(0)} s`;

/** Runs one step with inherited output; a non-zero exit fails the run, naming the step. */
function step(title, command, argv, options) {
  const at = Date.now();
  console.log(`\n== ${title}`);
  const result = spawnSync(command, argv, { stdio: 'inherit', ...options });
  if (result.error) fail(`${title}: ${result.error.message}`);
  if (result.status !== 0) fail(`${title}: exited ${result.status ?? result.signal}`);
  console.log(`== ${title}: ok (${seconds(at)})`);
}

/** The README's production-install lines: the ```sh block after the marker, comments and blank lines dropped. */
function readmeSteps(readme) {
  const at = readme.indexOf(MARKER);
  if (at < 0) fail(`README.md has no "${MARKER}" marker before its production-install block`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  if (!block) fail('README.md has no ```sh block after the ci-install marker');
  return block[1]
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').replace(/^#.*$/, '').trim())
    .filter(Boolean);
}

/** This checkout as a clone of it would be: tracked and untracked-but-not-ignored files, as they are now. */
function copyCheckout(to) {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  if (listed.status !== 0) fail(`git ls-files: ${listed.stderr}`);
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    const from = join(ROOT, file);
    // A tracked file deleted in the working tree is not part of what is being tested.
    if (!existsSync(from) || statSync(from).isDirectory()) continue;
    mkdirSync(dirname(join(to, file)), { recursive: true });
    cpSync(from, join(to, file));
  }
}

/** Node `major` from the npm `node` package: its bin directory and the headers node-gyp builds against. */
function installNode(major, dir) {
  mkdirSync(dir, { recursive: true });
  // The package's preinstall fetches the platform's binary package: allowed by name, nothing else is.
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ private: true, allowScripts: { node: true } }, null, 2)}\n`);
  step(`install Node ${major} (npm package node@${major})`, 'npm', ['install', `node@${major}`, '--no-audit', '--no-fund', '--strict-allow-scripts'], { cwd: dir });
  const bin = join(dir, 'node_modules', 'node', 'bin');
  const platforms = join(dir, 'node_modules', 'node', 'node_modules');
  const headers = readdirSync(platforms)
    .map((name) => join(platforms, name))
    .find((path) => existsSync(join(path, 'include', 'node', 'node_version.h')));
  if (!headers) fail(`node@${major} came without headers (include/node) under ${platforms}`);
  const version = spawnSync(join(bin, 'node'), ['--version'], { encoding: 'utf8' }).stdout.trim();
  if (!version.startsWith(`v${major}.`)) fail(`node@${major} runs as ${version || 'nothing'}`);
  return { bin, headers, version };
}

const work = mkdtempSync(join(tmpdir(), 'tollgate-ci-install-'));
// Removed on every exit, a failing step's too (fail() exits at once).
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
main();

function main() {
  const env = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
  // The main install filled npm's cache moments ago: use it without asking the registry about each package again.
  env.npm_config_prefer_offline = 'true';
  // A dependency whose install script nobody declared in package.json's allowScripts fails the install.
  env.npm_config_strict_allow_scripts = 'true';
  let major = Number(process.versions.node.split('.')[0]);
  if (args.node !== undefined) {
    const node = installNode(args.node, join(work, 'node'));
    major = Number(args.node);
    env.PATH = [node.bin, env.PATH].join(delimiter);
    // node-gyp (better-sqlite3) compiles against these headers instead of fetching them from nodejs.org.
    env.npm_config_nodedir = node.headers;
    console.log(`Node ${node.version} in ${node.bin}`);
  }
  // A dependency that declares no support for this Node fails the install; on Node 20 one is accepted
  // (content-disposition, test/unit/engines.test.ts), so npm only warns there.
  if (major !== 20) env.npm_config_engine_strict = 'true';

  const copy = join(work, 'tollgate');
  copyCheckout(copy);
  const lines = readmeSteps(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  console.log(`README production install:\n${lines.map((l) => `  ${l}`).join('\n')}`);
  let tested = false;
  for (const line of lines) {
    // The README's install directory (/opt/tollgate) is the copy here.
    if (/^cd\s+\S+$/.test(line)) continue;
    step(`README: ${line}`, 'bash', ['-euo', 'pipefail', '-c', line], { cwd: copy, env });
    if (args.tests && /^npm ci(\s|$)/.test(line)) {
      // test/storage too: its SQLite store tests are the ones that caught better-sqlite3 12 aborting on Node 24.
      step(`unit, contract and storage tests on Node ${major}`, 'node', ['scripts/run-tests.mjs', '--unit', '--storage'], { cwd: copy, env });
      step(`end-to-end smoke on Node ${major}`, 'node', ['scripts/run-tests.mjs', ...E2E_SMOKE], { cwd: copy, env });
      tested = true;
    }
  }
  if (args.tests && !tested) fail('--tests: the README\'s production install has no `npm ci` step to run the tests after');
  if (existsSync(join(copy, 'node_modules', 'typescript'))) fail('the production install still holds the dev dependencies (node_modules/typescript)');
  step('start the installed gateway and use it', 'node', [join(ROOT, 'scripts', 'install-smoke.mjs'), copy], { cwd: ROOT, env });
  console.log(`\nci-install: the README's production install works on Node ${major} (${seconds(started)})`);
}
